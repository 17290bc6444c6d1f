package normalize

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// Recipe flavours of kind finetune: which tool reads the recipe.
const (
	RecipeTrainer      = "trainer"      // Hugging Face TrainingArguments (TRL, alignment-handbook)
	RecipeAxolotl      = "axolotl"      // axolotl
	RecipeLlamaFactory = "llamafactory" // LLaMA-Factory
	RecipeTorchtune    = "torchtune"    // torchtune recipe config
	RecipeGPTNeoX      = "gpt-neox"     // gpt-neox (brace-delimited YAML, dashed or snake_case keys)
	// Scripts with their own argument parsers: their keys look like
	// TrainingArguments but the Trainer never reads them, so precision
	// and batch do not follow the Trainer's defaults.
	RecipeAccelerateLoop = "accelerate-loop" // Accelerate training loop (transformers *_no_trainer.py, open-instruct)
	RecipeSwift          = "ms-swift"        // ms-swift (swift sft/rlhf/megatron --config)
	RecipeUnknown        = "unknown"         // a recipe no Trainer script reads, of a tool gpulint does not know
)

// Keys that tell a recipe's script apart from the Hugging Face Trainer.
// Each is an argument of the script's own parser that TrainingArguments
// (transformers src/transformers/training_args.py @ 00349ae) does not have
// and HfArgumentParser would reject:
//   - accelerateLoopKeys: the argparse options of transformers'
//     examples/pytorch/*/run_*_no_trainer.py (--with_tracking,
//     --checkpointing_steps, --num_warmup_steps, --max_train_steps,
//     --use_slow_tokenizer), kept by scripts built on them such as
//     allenai/open-instruct open_instruct/finetune.py and dpo_tune_cache.py
//     (FlatArguments @ afe4bb32: with_tracking, checkpointing_steps,
//     use_slow_tokenizer). Precision comes from accelerate launch
//     --mixed_precision and the script's own dtype, not bf16/fp16 keys.
//   - swiftKeys: ms-swift's own arguments (swift/llm/argument
//     tuner_args.py train_type, older sft_type, newer tuner_type;
//     rlhf_args.py rlhf_type). ms-swift derives bf16/fp16 from torch_dtype
//     and the model's dtype.
var (
	accelerateLoopKeys = []string{"with_tracking", "checkpointing_steps", "num_warmup_steps", "max_train_steps", "use_slow_tokenizer"}
	swiftKeys          = []string{"train_type", "tuner_type", "sft_type", "rlhf_type"}
)

// HFTrainerFamily reports whether a recipe flavour is read through the
// Hugging Face Trainer (TrainingArguments semantics for precision, batch
// and checkpointing keys).
func HFTrainerFamily(flavour string) bool {
	switch flavour {
	case RecipeTrainer, RecipeAxolotl, RecipeLlamaFactory:
		return true
	}
	return false
}

// Sources of the defaults and spellings below:
//   - TrainingArguments: transformers src/transformers/training_args.py @
//     fd798335 (per_device_train_batch_size 8, gradient_accumulation_steps 1,
//     bf16/fp16 false, gradient_checkpointing false, dataloader_num_workers
//     0, dataloader_pin_memory true).
//   - axolotl: src/axolotl/utils/schemas/config.py @ 70be5461 (bf16 "auto",
//     sequence_len 512, dataloader_* passed to TrainingArguments only when
//     set).
//   - LLaMA-Factory: finetuning_type defaults to lora, and gradient
//     checkpointing is on unless disable_gradient_checkpointing
//     (src/llamafactory/model/model_utils/checkpointing.py).
//   - torchtune: recipes/configs/*.yaml (dtype, batch_size,
//     enable_activation_checkpointing, model._component_).

// Flavour reports which tool a recipe is written for, from its keys.
func Flavour(doc any) string {
	m, _ := doc.(map[string]any)
	for _, v := range m {
		if c, ok := lookup(v, "_component_"); ok {
			if s, ok := c.(string); ok && strings.HasPrefix(s, "torchtune.") {
				return RecipeTorchtune
			}
		}
	}
	neox := 0
	for k := range m {
		switch strings.ReplaceAll(k, "-", "_") {
		case "num_layers", "hidden_size", "num_attention_heads", "seq_length",
			"max_position_embeddings", "pipe_parallel_size", "model_parallel_size":
			neox++
		}
	}
	switch {
	case m["base_model"] != nil:
		return RecipeAxolotl
	case has(m, "finetuning_type") || has(m, "quantization_bit") || (has(m, "cutoff_len") && has(m, "model_name_or_path")):
		return RecipeLlamaFactory
	case neox >= 3:
		return RecipeGPTNeoX
	case hasAny(m, swiftKeys):
		return RecipeSwift
	case hasAny(m, accelerateLoopKeys):
		return RecipeAccelerateLoop
	}
	// Trainer scripts (TRL's ModelConfig, alignment-handbook, LLaMA-Factory)
	// name the model model_name_or_path; a recipe that names it "model"
	// belongs to a script with its own parser.
	if s, ok := m["model"].(string); ok && s != "" && !has(m, "model_name_or_path") {
		return RecipeUnknown
	}
	return RecipeTrainer
}

func hasAny(m map[string]any, keys []string) bool {
	for _, k := range keys {
		if has(m, k) {
			return true
		}
	}
	return false
}

func has(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// Finetune maps a fine-tuning recipe of any flavour to the workload model:
// role train, precision, batch, model, adapter, base quantization,
// sequence length, packing, data loading, checkpointing and the DeepSpeed
// config it names.
func Finetune(doc any) *Workload {
	flavour := Flavour(doc)
	framework := "transformers"
	switch flavour {
	case RecipeTorchtune:
		framework = "torchtune"
	case RecipeGPTNeoX:
		framework = "gpt-neox"
	case RecipeAccelerateLoop:
		framework = "accelerate"
	case RecipeSwift:
		framework = "ms-swift"
	case RecipeUnknown:
		framework = "unknown"
	}
	w := newWorkload("finetune", framework, "train")
	w.set("recipe", flavour, p())
	switch {
	case flavour == RecipeTorchtune:
		torchtuneRecipe(w, doc)
	case flavour == RecipeGPTNeoX:
		neoxRecipe(w, doc)
	case HFTrainerFamily(flavour):
		hfRecipe(w, doc, flavour)
	}
	// Other families: their scripts give precision, batch and
	// checkpointing keys their own meaning and defaults, so the workload
	// holds only what does not depend on the family (role, tool) and the
	// rules that need the rest stay quiet.
	return w
}

// setInt stores an integer field read from key, if it is one.
func (w *Workload) setInt(field string, doc any, keys ...string) bool {
	v, ok := lookup(doc, keys...)
	if !ok {
		return false
	}
	if n, ok := value.Int(v); ok {
		w.set(field, n, pathOf(keys))
		return true
	}
	return false
}

// setBool stores a boolean field read from key, if it is one.
func (w *Workload) setBool(field string, doc any, keys ...string) (bool, bool) {
	v, ok := lookup(doc, keys...)
	if !ok {
		return false, false
	}
	if b, ok := asBool(v); ok {
		w.set(field, b, pathOf(keys))
		return b, true
	}
	return false, false
}

func pathOf(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// hfRecipe reads the recipes the Hugging Face Trainer runs: plain
// TrainingArguments (TRL, alignment-handbook), axolotl and LLaMA-Factory.
func hfRecipe(w *Workload, doc any, flavour string) {
	// Model.
	modelKey := "model_name_or_path"
	if flavour == RecipeAxolotl {
		modelKey = "base_model"
	}
	if v, ok := lookup(doc, modelKey); ok {
		if s, ok := v.(string); ok && s != "" {
			w.set("model", s, p(modelKey))
		}
	}

	// Precision: bf16 / fp16 flags (tf32 only changes fp32 matmuls).
	hfPrecision(w, doc, flavour)

	// Batch.
	microKey, microDefault := "per_device_train_batch_size", int64(8)
	if flavour == RecipeAxolotl {
		microKey, microDefault = "micro_batch_size", 1
	}
	if !w.setInt("batch.micro", doc, microKey) {
		w.set("batch.micro", microDefault, p())
	}
	// The gradient accumulation of an axolotl recipe that writes no
	// gradient_accumulation_steps is 1, even beside a batch_size: the schema
	// gives the field its default first (HyperparametersConfig
	// gradient_accumulation_steps Field(default=1) in
	// axolotl-ai-cloud/axolotl src/axolotl/utils/schemas/training.py @
	// 067b021c, the default since the Pydantic config of cc3cebfa, v0.5.0),
	// validate_config dumps the model with its defaults, and normalize_config
	// (src/axolotl/utils/config/__init__.py, called after validate_config in
	// src/axolotl/cli/config.py load_cfg) keeps that 1 in
	// "gradient_accumulation_steps or batch_size // micro_batch_size", so
	// batch_size derives nothing; the Trainer gets micro_batch_size and that 1
	// (src/axolotl/core/builders). batch_size only sets axolotl's step count,
	// and check_gas_bsz (src/axolotl/utils/schemas/validation.py) refuses a
	// recipe that writes both.
	if !w.setInt("batch.accumulation", doc, "gradient_accumulation_steps") {
		w.set("batch.accumulation", int64(1), p())
	}

	// Activation checkpointing.
	switch flavour {
	case RecipeLlamaFactory:
		if v, ok := lookup(doc, "disable_gradient_checkpointing"); ok {
			if b, ok := asBool(v); ok {
				w.set("checkpointing", !b, p("disable_gradient_checkpointing"))
			}
		} else {
			w.set("checkpointing", true, p())
		}
	default:
		if v, ok := lookup(doc, "gradient_checkpointing"); ok {
			if b, ok := asBool(v); ok {
				w.set("checkpointing", b, p("gradient_checkpointing"))
			} else if s, ok := v.(string); ok && s != "" {
				// axolotl's string values all checkpoint; "offload" and
				// "offload_disk" also offload (axolotlCheckpointOffload).
				w.set("checkpointing", true, p("gradient_checkpointing"))
			}
		} else {
			w.set("checkpointing", false, p())
		}
	}

	// Sequence length and packing.
	switch flavour {
	case RecipeAxolotl:
		if !w.setInt("seq_len", doc, "sequence_len") {
			w.set("seq_len", int64(512), p())
		}
		w.setBool("packing", doc, "sample_packing")
	case RecipeLlamaFactory:
		w.setInt("seq_len", doc, "cutoff_len")
		w.setBool("packing", doc, "packing")
	default:
		for _, k := range []string{"max_seq_length", "max_length", "model_max_length"} {
			if w.setInt("seq_len", doc, k) {
				break
			}
		}
		w.setBool("packing", doc, "packing")
	}

	// Liger kernels: TrainingArguments.use_liger_kernel patches the model
	// with liger_kernel's _apply_liger_kernel_to_instance
	// (huggingface/transformers src/transformers/integrations/liger.py),
	// whose per-family functions fuse the LM head into the loss by default
	// (linkedin/Liger-Kernel src/liger_kernel/transformers/monkey_patch.py,
	// fused_linear_cross_entropy=True): the logits never exist whole.
	switch flavour {
	case RecipeTrainer:
		w.setBool("liger", doc, "use_liger_kernel")
	case RecipeLlamaFactory:
		// LLaMA-Factory's enable_liger_kernel (hiyouga/LLaMA-Factory
		// ff6d4d1 src/llamafactory/hparams/model_args.py) calls the same
		// per-family functions with their defaults for the pt and sft
		// stages; the other stages need the logits and pass
		// fused_linear_cross_entropy=False (model/model_utils/liger_kernel.py
		// apply_liger_kernel, require_logits from model/loader.py). stage
		// defaults to sft (hparams/finetuning_args.py).
		stage, _ := valueOr(doc, "stage").(string)
		if on, ok := w.setBool("liger", doc, "enable_liger_kernel"); ok && on && stage != "" && stage != "sft" && stage != "pt" {
			w.set("liger", false, p("stage"))
		}
	case RecipeAxolotl:
		// axolotl applies Liger through its plugin
		// (plugins: [axolotl.integrations.liger.LigerPlugin]), which hands
		// each family's function the recipe's own
		// liger_fused_linear_cross_entropy (axolotl-ai-cloud/axolotl
		// 067b021 src/axolotl/integrations/liger/args.py, plugin.py): the
		// loss is fused only where that key is true, and the liger_* keys
		// mean nothing without the plugin.
		if axolotlPlugin(doc, "axolotl.integrations.liger.") {
			w.setBool("liger", doc, "liger_fused_linear_cross_entropy")
		}
		// axolotl's CutCrossEntropyPlugin patches the causal LM's forward
		// with cut_cross_entropy's linear cross entropy, which never holds
		// the logits; its cut_cross_entropy key defaults to true
		// (CutCrossEntropyArgs, src/axolotl/integrations/cut_cross_entropy/
		// args.py and __init__.py pre_model_load @ 067b021c), and a model
		// type it cannot patch stops the run (check_capability), so a run
		// that starts has it.
		if axolotlPlugin(doc, "axolotl.integrations.cut_cross_entropy.") {
			switch v, ok := lookup(doc, "cut_cross_entropy"); {
			case !ok:
				w.set("cut_cross_entropy", true, p("plugins"))
			case v == nil: // Optional[bool]: null turns it off
				w.set("cut_cross_entropy", false, p("cut_cross_entropy"))
			default:
				w.setBool("cut_cross_entropy", doc, "cut_cross_entropy")
			}
		}
	}

	// Data loading.
	w.setInt("dataloader.workers", doc, "dataloader_num_workers")
	w.setBool("dataloader.pin_memory", doc, "dataloader_pin_memory")

	hfAdapter(w, doc, flavour)

	// Optimizer, as written.
	optKey := "optim"
	if flavour == RecipeAxolotl {
		optKey = "optimizer"
	}
	if v, ok := lookup(doc, optKey); ok {
		if s, ok := v.(string); ok && s != "" {
			w.set("optimizer", strings.ToLower(s), p(optKey))
		}
	}

	// DeepSpeed and FSDP.
	if v, ok := lookup(doc, "deepspeed"); ok {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			w.set("deepspeed_config_file", strings.TrimSpace(s), p("deepspeed"))
		}
	}
	hfFSDP(w, doc)

	// Ray-launched recipes say how many workers (GPUs) they use.
	w.setIntPositive("parallel.world_size", doc, "ray_num_workers")
	// axolotl sequence (context) parallelism splits each sequence over
	// ranks; activation offloading moves activations to host memory.
	for _, k := range []string{"context_parallel_size", "sequence_parallel_degree"} {
		w.setIntPositive("parallel.cp", doc, k)
	}
	if v, ok := lookup(doc, "activation_offloading"); ok && v != nil {
		b, isBool := asBool(v)
		w.set("activation_offloading", b || (!isBool && v != ""), p("activation_offloading"))
	}
	if flavour == RecipeAxolotl {
		axolotlCheckpointOffload(w, doc)
	}
}

// axolotlCheckpointOffload reads axolotl's deprecated checkpointing
// values that offload activations. In axolotl-ai-cloud/axolotl @ 067b021c
// (the release the evaluation set pins), gradient_checkpointing takes
// Literal["offload", "offload_disk"] | bool (src/axolotl/utils/schemas/
// config.py), and the validator check_gradient_checkpointing_w_offload
// (src/axolotl/utils/schemas/validation.py) rewrites "offload" to
// gradient_checkpointing true with activation_offloading true (TRL's
// stream offloader, core/trainers/mixins/activation_checkpointing.py) and
// "offload_disk" to activation_offloading "disk", whatever
// activation_offloading the recipe wrote. Both move saved activations off
// the GPU: tuner.Workload.ActivationOffloading.
//
// "unsloth" is not read as offloading: it was axolotl's offloading
// checkpointer from 6319da1f (v0.4, 2024) and a deprecated alias of
// "offload" from 5e21b1a9, but c0a0c753 (v0.10.0) dropped it from the
// Literal, so the pinned axolotl refuses the recipe; the estimate keeps
// the activations on the GPU, the upper bound.
func axolotlCheckpointOffload(w *Workload, doc any) {
	v, ok := lookup(doc, "gradient_checkpointing")
	if !ok {
		return
	}
	if s, _ := v.(string); s == "offload" || s == "offload_disk" {
		w.set("activation_offloading", true, p("gradient_checkpointing"))
	}
}

// setIntPositive stores a positive integer field.
func (w *Workload) setIntPositive(field string, doc any, key string) {
	if v, ok := lookup(doc, key); ok {
		if n, ok := value.Int(v); ok && n > 0 {
			w.set(field, n, p(key))
		}
	}
}

// hfPrecision reads bf16/fp16 (and axolotl's bf16: auto and non-AMP
// bfloat16/float16 loading).
func hfPrecision(w *Workload, doc any, flavour string) {
	bfv, hasBF := lookup(doc, "bf16")
	fpv, hasFP := lookup(doc, "fp16")
	bf, _ := asBool(bfv)
	fp, _ := asBool(fpv)
	switch {
	case hasBF && bf:
		w.set("precision", "bf16", p("bf16"))
	case hasFP && fp:
		w.set("precision", "fp16", p("fp16"))
	case flavour == RecipeAxolotl && (!hasBF || bfv == nil || isAuto(bfv)):
		// axolotl's default: bf16 where the GPU supports it, else fp16.
		at := p()
		if hasBF {
			at = p("bf16")
		}
		w.set("precision", "auto", at)
	case flavour == RecipeLlamaFactory && truthy(doc, "pure_bf16"):
		w.set("precision", "bf16", p("pure_bf16"))
	case flavour == RecipeAxolotl && truthy(doc, "bfloat16"):
		w.set("precision", "bf16", p("bfloat16"))
	case flavour == RecipeAxolotl && truthy(doc, "float16"):
		w.set("precision", "fp16", p("float16"))
	case modelHalf(doc) != "":
		// A model loaded in bf16/fp16 (torch_dtype) computes in it even
		// without the mixed-precision flags.
		w.set("precision", modelHalf(doc), p("torch_dtype"))
	case hasBF:
		w.set("precision", "fp32", p("bf16"))
	case hasFP:
		w.set("precision", "fp32", p("fp16"))
	default:
		w.set("precision", "fp32", p())
	}
	if s, ok := valueOr(doc, "torch_dtype").(string); ok && s != "" {
		w.set("model_dtype", dtypeName(s), p("torch_dtype"))
	} else if flavour == RecipeAxolotl {
		// axolotl loads the model in bf16 when bf16 (or bfloat16) is set,
		// in fp16 for fp16 or 8-bit loading (axolotl/utils/config
		// normalize_config: cfg.torch_dtype).
		switch pr, _ := w.Get("precision"); pr {
		case "bf16", "auto", "fp16":
			w.set("model_dtype", pr, w.Paths["precision"])
		}
	}
}

// modelHalf is the 16-bit dtype a recipe loads the model in, if any.
func modelHalf(doc any) string {
	s, _ := valueOr(doc, "torch_dtype").(string)
	switch d := dtypeName(s); d {
	case "bf16", "fp16":
		return d
	}
	return ""
}

func truthy(doc any, key string) bool {
	b, _ := asBool(valueOr(doc, key))
	return b
}

// axolotlPlugin reports whether an axolotl recipe's plugins list names a
// plugin of the given module prefix.
func axolotlPlugin(doc any, prefix string) bool {
	ps, _ := valueOr(doc, "plugins").([]any)
	for _, x := range ps {
		if s, ok := x.(string); ok && strings.HasPrefix(strings.TrimSpace(s), prefix) {
			return true
		}
	}
	return false
}
