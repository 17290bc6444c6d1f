package recipe

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/value"
	"github.com/gpulint/gpulint/tuner"
)

// Workload maps a fine-tuning recipe run on gpus GPUs (0 when unknown) to
// the memory model: a full fine-tune (tuner.Train), LoRA, or QLoRA (LoRA
// on a 4- or 8-bit base), with its micro batch, sequence length,
// checkpointing, optimizer and the sharding of its DeepSpeed config or
// FSDP. ok is false for adapters the memory model has no regime for
// (LLaMA-Factory freeze, other PEFT).
func Workload(w *normalize.Workload, gpus int) (tuner.Workload, bool) {
	return WorkloadAssuming(w, gpus, Sharding{})
}

// WorkloadAssuming is Workload with a sharding the recipe does not state
// in its own keys: the one its leading comment names (StatedHardware).
// The recipe's DeepSpeed config or FSDP keys win; a recipe that names a
// DeepSpeed config gpulint could not read stays unknown.
func WorkloadAssuming(w *normalize.Workload, gpus int, assumed Sharding) (tuner.Workload, bool) {
	return WorkloadLaunched(w, gpus, nil, assumed)
}

// WorkloadLaunched is WorkloadAssuming for a recipe whose launch passes a
// config (launched, its workload; nil when none): a DeepSpeed config on
// the command line, or an Accelerate config, whose DeepSpeed stage and
// offload, FSDP strategy, version and offload, or plain data-parallel
// MULTI_GPU accelerate launch exports to the training process
// (ACCELERATE_USE_DEEPSPEED, ACCELERATE_DEEPSPEED_ZERO_STAGE,
// ACCELERATE_USE_FSDP, FSDP_VERSION, ...: huggingface/accelerate 16cb6eb
// src/accelerate/utils/launch.py), where the Trainer's Accelerator picks
// them up (src/accelerate/accelerator.py). Where the recipe states no
// sharding of its own, the launch's is the run's: the recipe's own keys
// win over the launch, and the launch over the comment.
func WorkloadLaunched(w *normalize.Workload, gpus int, launched *normalize.Workload, assumed Sharding) (tuner.Workload, bool) {
	return WorkloadWithFSDP(w, gpus, launched, "", assumed)
}

// WorkloadWithFSDP is WorkloadLaunched for a recipe whose sharding, when
// neither it nor its launch states one, is FSDP with the given strategy (a
// project file's targets.fsdp; "" when unknown): the recipe's keys win,
// then the launch, then the project file, then the comment.
func WorkloadWithFSDP(w *normalize.Workload, gpus int, launched *normalize.Workload, fsdp string, assumed Sharding) (tuner.Workload, bool) {
	tw, st := workload(w, gpus, launched, fsdp, assumed)
	return tw, st == sized
}

// status is what workload could make of a recipe.
type status int

const (
	sized        status = iota
	unsized             // the memory model has no regime for it, or a key it needs is unreadable
	shardingOpen        // a multi-GPU full fine-tune whose sharding its launcher decides
)

// ShardingAlternative is one sharding a launcher may give a recipe that
// states none, and the recipe's workload under it.
type ShardingAlternative struct {
	// Label names the sharding: "unsharded (DDP)", "ZeRO-2" (DeepSpeed),
	// "ZeRO-3", "FSDP full shard".
	Label    string
	Workload tuner.Workload
}

// shardingChoices are the shardings a Hugging Face Trainer or TRL recipe
// gets from the Accelerate config it is launched with: none (DDP,
// Accelerate's MULTI_GPU), DeepSpeed ZeRO-2 or ZeRO-3, or FSDP full shard
// (huggingface/accelerate src/accelerate/utils/dataclasses.py
// DistributedType; huggingface/open-r1 @ 1416fa0c ships exactly these as
// recipes/accelerate_configs/{ddp,zero2,zero3,fsdp}.yaml, picked per run
// with --accelerator). FSDP's SHARD_GRAD_OP partitions as ZeRO-2 does
// and is not estimated apart.
var shardingChoices = []struct {
	label string
	s     Sharding
}{
	{"unsharded (DDP)", Sharding{Scheme: "none"}},
	{"ZeRO-2", Sharding{Scheme: "zero", Stage: 2}},
	{"ZeRO-3", Sharding{Scheme: "zero", Stage: 3}},
	{"FSDP full shard", Sharding{Scheme: "fsdp", Stage: 3, Version: 1}},
}

// ShardingAlternatives is the recipe's workload under each sharding its
// launcher may give it, when that is the one input left open: a
// multi-GPU full fine-tune whose recipe names no DeepSpeed config or FSDP
// and whose comment names no sharding (assumed). ok is false when the
// sharding is known, or when the recipe cannot be estimated for another
// reason.
func ShardingAlternatives(w *normalize.Workload, gpus int, launched *normalize.Workload, fsdp string, assumed Sharding) ([]ShardingAlternative, bool) {
	if _, st := workload(w, gpus, launched, fsdp, assumed); st != shardingOpen {
		return nil, false
	}
	var out []ShardingAlternative
	for _, c := range shardingChoices {
		tw, st := workload(w, gpus, launched, fsdp, c.s)
		if st != sized {
			return nil, false
		}
		out = append(out, ShardingAlternative{Label: c.label, Workload: tw})
	}
	return out, true
}

// workload is WorkloadWithFSDP with what it could not decide: an assumed
// sharding of Scheme "none" stands for a launcher that shards nothing
// (DDP).
func workload(w *normalize.Workload, gpus int, launched *normalize.Workload, fsdp string, assumed Sharding) (tuner.Workload, status) {
	get := func(f string) any { v, _ := w.Get(f); return v }
	num := func(f string) int { n, _ := get(f).(int64); return int(n) }
	str := func(f string) string { return value.String(get(f)) }
	var tw tuner.Workload
	if _, ok := w.Model["ppo"]; ok {
		return ppoWorkload(w, gpus)
	}
	adapter, bits := str("adapter.type"), num("quantization.bits")
	switch {
	case adapter == "none" && bits > 0:
		return tw, unsized // a full fine-tune of a quantized base is not trainable as such
	case adapter == "none":
		tw.Kind = tuner.Train
	case adapter == "lora" && bits == 0:
		tw.Kind = tuner.LoRA
	case adapter == "lora" || adapter == "qlora":
		// The memory model's quantized-base regime is QLoRA with the base's
		// weight format (nf4 with double quantization by default).
		tw.Kind = tuner.QLoRA
		switch {
		case bits == 8:
			tw.WeightQuant = "int8"
		case str("quantization.method") == "gptq":
			tw.WeightQuant = "gptq"
		}
	default:
		return tw, unsized
	}

	// torchtune's enable_activation_offloading and axolotl's
	// activation_offloading (normalize: true, "legacy" and "offload_disk"
	// all move saved activations off the GPU) have their regime in the
	// memory model: tuner.Workload.ActivationOffloading.
	if b, _ := get("activation_offloading").(bool); b {
		tw.ActivationOffloading = true
	}
	_, hasDS := w.Get("deepspeed_config_file")
	sharded, unsharded := false, false
	if zeroOf(w, &tw) {
		sharded = true
	} else if w.ApplyFSDP(&tw) {
		// FSDP FULL_SHARD partitions like ZeRO-3, SHARD_GRAD_OP like ZeRO-2
		// (normalize.Workload.ApplyFSDP); the planner speaks FSDP's names.
		sharded = true
	} else if !hasDS && launched != nil {
		dist, _ := launched.Get("distributed_type")
		switch d := strings.ToUpper(value.String(dist)); {
		case zeroOf(launched, &tw) || launched.ApplyFSDP(&tw):
			sharded = true
		case launched.Paths["deepspeed_config_file"] != nil:
			// DeepSpeed from a file the Accelerate config names that
			// could not be read: its stage is unknown.
			hasDS = true
		case d == "MULTI_GPU":
			unsharded = true // plain data parallelism: DDP
		}
	}
	if !sharded && !unsharded && !hasDS && fsdp != "" {
		// FSDP wraps the model whatever the strategy (NO_SHARD included).
		normalize.FSDPStrategy(&tw, fsdp, false)
		sharded = true
	} else if !sharded && !unsharded && !hasDS && assumed.apply(&tw) {
		sharded = true
	} else if !sharded && !unsharded && !hasDS && assumed.Scheme == "none" {
		unsharded = true // an assumed launcher that shards nothing (DDP)
	}
	switch {
	case unsharded:
	case hasDS && !sharded:
		// The recipe names a DeepSpeed config that was not found: its ZeRO
		// stage is unknown.
		return tw, unsized
	case !sharded && gpus > 1 && str("recipe") == normalize.RecipeTorchtune:
		// torchtune's distributed recipes shard with FSDP (full shard).
		tw.ZeroStage, tw.Sharding, sharded = 3, tuner.FSDP2, true
	case !sharded && gpus > 1 && tw.Kind == tuner.Train && str("recipe") != normalize.RecipeGPTNeoX:
		// A multi-GPU full fine-tune whose recipe names no DeepSpeed or
		// FSDP is sharded, or not, by its launcher (an Accelerate config
		// passed to accelerate launch): unknown here
		// (ShardingAlternatives estimates each).
		return tw, shardingOpen
	}

	tw.Precision = precision(str("precision"), str("recipe"), str("model_dtype"), tw.Kind, sharded)
	if tw.Precision == "" {
		return tw, unsized
	}

	if !optimizerOf(w, &tw) {
		return tw, unsized
	}

	tw.TensorParallel = max(num("parallel.tp"), 1)
	tw.PipelineParallel = max(num("parallel.pp"), 1)
	// Context parallelism splits each sequence over cp ranks: per GPU the
	// activations are those of seq_len / cp tokens, and cp ranks form one
	// data-parallel replica (our approximation; the memory model has no
	// context-parallel degree).
	cp := max(num("parallel.cp"), 1)
	tw.DataParallel = max(max(gpus, 1)/(tw.TensorParallel*tw.PipelineParallel*cp), 1)
	tw.MicroBatch = max(num("batch.micro"), 1)
	tw.SeqLen = max(num("seq_len"), 0)
	if tw.SeqLen > 0 && cp > 1 {
		tw.SeqLen = max(tw.SeqLen/cp, 1)
	}
	if b, ok := get("checkpointing").(bool); ok {
		tw.Checkpointing = b
	}
	if tw.Kind != tuner.Train {
		tw.LoRARank = max(num("adapter.rank"), 0)
		if ts, ok := get("adapter.targets").([]any); ok {
			for _, x := range ts {
				s, _ := x.(string)
				// A recipe naming a module tuner.Workload does not know is
				// estimated with the default targets.
				if !tuner.KnownLoRATarget(s) {
					tw.LoRATargets = nil
					break
				}
				tw.LoRATargets = append(tw.LoRATargets, s)
			}
		}
	}
	return tw, sized
}

// optimizerOf sets the optimizer a recipe names (lower-cased component or
// optim name), whether it is paged, and whether it steps in backward. It
// returns false for a bitsandbytes optimizer whose states the memory model
// does not know (bnbOptimizerOf): the recipe is then unsized.
func optimizerOf(w *normalize.Workload, tw *tuner.Workload) bool {
	o, _ := w.Get("optimizer")
	opt := value.String(o)
	if b, isBnb, ok := bnbOptimizerOf(opt); isBnb {
		if !ok {
			return false
		}
		tw.Optimizer, tw.PagedOptimizer, tw.FP32OptimizerStates = b.optimizer, b.paged, b.fp32States
	} else {
		switch {
		case strings.Contains(opt, "8bit"):
			tw.Optimizer = tuner.Adam8bit
		case strings.Contains(opt, "adafactor"):
			tw.Optimizer = tuner.Adafactor
		case strings.Contains(opt, "sgd"):
			tw.Optimizer = tuner.SGD
		}
		tw.PagedOptimizer = strings.Contains(opt, "paged")
		// A Trainer optim name of a bnb 32-bit optimizer
		// (paged_adamw_32bit; transformers' OptimizerNames) keeps fp32
		// states over bf16 parameters (tuner.Workload.FP32OptimizerStates).
		tw.FP32OptimizerStates = tw.Optimizer == "" && strings.Contains(opt, "32bit")
	}
	if b, _ := w.Get("optimizer_in_backward"); b == true {
		tw.OptimizerInBackward = true
	}
	return true
}

// ppoWorkload maps a torchtune PPO recipe (normalize's torchtunePPO) to
// the memory model's PPO workload: the policy is the recipe's model, the
// value and reward models the same architecture with a classifier head.
// The recipe runs on one device (ppo_full_finetune_single_device); the
// query+response is the prompt bound (tokenizer.max_seq_len) plus
// max_generated_tokens. It is unsized when the value model is another
// architecture than the policy (the model sizes both from the policy's),
// when the recipe runs on more than one GPU, or when a key it needs is
// missing.
func ppoWorkload(w *normalize.Workload, gpus int) (tuner.Workload, status) {
	get := func(f string) any { v, _ := w.Get(f); return v }
	num := func(f string) int { n, _ := get(f).(int64); return int(n) }
	var tw tuner.Workload
	policy, valueModel := get("model"), get("ppo.value_model")
	gen, prompt, micro := num("ppo.max_generated_tokens"), num("seq_len"), num("batch.micro")
	if policy == nil || policy != valueModel || gen < 1 || prompt < 1 || micro < 1 || gpus > 1 {
		return tw, unsized
	}
	tw.Kind = tuner.PPO
	switch get("precision") {
	case "bf16":
		tw.Precision = tuner.PureBF16 // torchtune trains in its dtype throughout
	case "fp32":
		tw.Precision = tuner.FP32
	default:
		return tw, unsized // the recipe refuses fp16 ("RuntimeError: If dtype is set to fp16")
	}
	if !optimizerOf(w, &tw) {
		return tw, unsized
	}
	tw.MicroBatch = micro
	tw.SeqLen = prompt + gen
	tw.Checkpointing, _ = get("checkpointing").(bool)
	kv, _ := get("ppo.kv_cache").(bool)
	tw.PPO = tuner.PPOShape{ValueClasses: num("ppo.value_classes"), GeneratedTokens: gen,
		ForwardBatch: num("ppo.forward_batch"), KVCache: kv}
	return tw, sized
}

// MergeLaunchPrecision gives a Hugging Face Trainer recipe that enables
// neither bf16 nor fp16 the mixed precision of the Accelerate config its
// launch passes (launched): accelerate launch exports it as
// ACCELERATE_MIXED_PRECISION (huggingface/accelerate 16cb6eb
// src/accelerate/utils/launch.py) and TrainingArguments starts from that
// variable, overriding it only with its own fp16 or bf16
// (huggingface/transformers src/transformers/training_args.py:
// mixed_precision = os.environ.get("ACCELERATE_MIXED_PRECISION", "no")).
// The field keeps its place in the recipe, where a fix would write it.
// It returns the precision taken, "" when none.
func MergeLaunchPrecision(w, launched *normalize.Workload) string {
	r, _ := w.Get("recipe")
	own, _ := w.Get("precision")
	lp, _ := launched.Get("precision")
	if !normalize.HFTrainerFamily(value.String(r)) || own != "fp32" || (lp != "bf16" && lp != "fp16") {
		return ""
	}
	w.Model["precision"] = lp
	return lp.(string)
}

// trainerSizingArgs are the Trainer and TRL arguments the memory model
// reads from a Trainer recipe (normalize's hfRecipe, hfPrecision, hfAdapter
// and hfFSDP): a value given on the command line for one of them replaces
// the recipe's (TrlParser: "Command line arguments can override values set
// by the config file", huggingface/trl f2cd577 trl/scripts/utils.py).
var trainerSizingArgs = map[string]bool{
	"model_name_or_path": true, "torch_dtype": true, "dtype": true, "bf16": true, "fp16": true,
	"per_device_train_batch_size": true, "max_length": true, "max_seq_length": true, "model_max_length": true,
	"packing": true, "gradient_checkpointing": true, "use_liger_kernel": true, "optim": true,
	"fsdp": true, "fsdp_config": true, "use_peft": true, "lora_r": true, "lora_target_modules": true,
	"load_in_4bit": true, "load_in_8bit": true,
}

// OverriddenOnCommandLine lists, sorted, the arguments a Trainer script's
// command line gives that replace what the memory model reads from its
// recipe; the recipe as written is then not what runs.
func OverriddenOnCommandLine(flags []string) []string {
	var out []string
	for _, f := range flags {
		if trainerSizingArgs[f] {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// zeroOf sets the ZeRO stage and offload a workload states (a recipe's
// merged DeepSpeed config, an Accelerate config's deepspeed_config).
func zeroOf(w *normalize.Workload, tw *tuner.Workload) bool {
	s, ok := w.Model["zero"].(map[string]any)
	if !ok {
		return false
	}
	stage, ok := s["stage"].(int64)
	if !ok {
		return false
	}
	tw.ZeroStage = int(stage)
	tw.OffloadOptimizer = tuner.Device(cmp.Or(value.String(s["offload_optimizer"]), "none"))
	tw.OffloadParam = tuner.Device(cmp.Or(value.String(s["offload_param"]), "none"))
	// ZeRO-3's gathered-parameter settings the DeepSpeed config states
	// (normalize.DeepSpeed reads them).
	for k, to := range map[string]**int64{"max_live_parameters": &tw.ZeRO3MaxLiveParams,
		"prefetch_bucket_size": &tw.ZeRO3PrefetchBucket, "max_reuse_distance": &tw.ZeRO3MaxReuseDistance} {
		if n, ok := s[k].(int64); ok {
			*to = &n
		}
	}
	return true
}

// apply sets a named sharding on a workload: ZeRO at its stage, or FSDP
// full shard (FSDP1 unless FSDP2 is named: FullyShardedDataParallelPlugin's
// fsdp_version defaults to 1, huggingface/accelerate 16cb6eb
// src/accelerate/utils/dataclasses.py). false when s names none.
func (s Sharding) apply(tw *tuner.Workload) bool {
	switch s.Scheme {
	case "zero":
		tw.Sharding, tw.ZeroStage = tuner.ZeRO, s.Stage
	case "fsdp":
		tw.Sharding, tw.ZeroStage = tuner.FSDP1, 3
		if s.Version == 2 {
			tw.Sharding = tuner.FSDP2
		}
	default:
		return false
	}
	tw.OffloadOptimizer, tw.OffloadParam = tuner.NoOffload, tuner.NoOffload
	return true
}

// precision picks the memory model's precision regime for a
// recipe (our reading of the tools; memory-model.md §3.2, §6.3):
//   - torchtune trains in its dtype throughout, without fp32 master
//     weights (pure bf16);
//   - adapters train on a base loaded in the 16-bit compute dtype;
//   - a full fine-tune under DeepSpeed or FSDP keeps fp32 master weights
//     (mixed precision); without them the Trainer runs PyTorch AMP on fp32
//     weights, unless the model was loaded in bf16 (torch_dtype, or
//     axolotl's bf16), which then trains in bf16 throughout.
//
// axolotl's bf16: auto counts as bf16. An empty result means no regime
// fits.
func precision(precision, recipe, modelDtype string, kind tuner.WorkloadKind, sharded bool) tuner.Precision {
	half := map[string]tuner.Precision{"bf16": tuner.BF16, "auto": tuner.BF16, "fp16": tuner.FP16, "fp8": tuner.FP8}
	switch {
	case precision == "fp32":
		return tuner.FP32
	case half[precision] == "":
		return ""
	case kind != tuner.Train:
		if precision == "fp8" {
			return tuner.BF16
		}
		return half[precision]
	case recipe == normalize.RecipeTorchtune && precision == "bf16":
		return tuner.PureBF16
	case recipe == normalize.RecipeGPTNeoX || sharded:
		return half[precision]
	case (modelDtype == "bf16" || modelDtype == "auto") && precision != "fp16":
		return tuner.PureBF16
	}
	return tuner.AMP
}

// Alternatives estimates what the recipe's advice rules compare
// against, each {total, fits} leaving headroom free: the same run
// without activation checkpointing, a LoRA run of the same model on one
// GPU (for a full fine-tune), the full fine-tune at ZeRO-2 without offload
// (what it needs without ZeRO-3 or offload), and the same adapters on a
// bf16 base (for a 4-bit base).
func Alternatives(m *tuner.Model, tt tuner.Target, tw tuner.Workload, headroom float64) map[string]any {
	limit := int64(float64(tt.Capacity) * (1 - headroom))
	est := func(w tuner.Workload) (map[string]any, bool) {
		e, err := tuner.EstimateMemory(m, tt, w)
		if err != nil {
			return nil, false
		}
		return map[string]any{"total": e.PerGPU.Total, "fits": e.PerGPU.Total <= limit}, true
	}
	out := map[string]any{}
	// Offloading rests on checkpointing in the recipes that offer it:
	// torchtune raises "enable_activation_offloading should only be True
	// when enable_activation_checkpointing is True"
	// (recipes/lora_finetune_single_device.py @ bd2a0fc), and axolotl's
	// "legacy" and "offload_disk" patch only the checkpoint function
	// (src/axolotl/loaders/patch_manager.py
	// _apply_gradient_checkpointing_patches). So no run without
	// checkpointing is offered while offloading is on.
	if tw.Checkpointing && !tw.ActivationOffloading {
		alt := tw
		alt.Checkpointing = false
		if r, ok := est(alt); ok {
			out["no_checkpointing"] = r
		}
	}
	if tw.Kind == tuner.Train {
		lora := tuner.Workload{Kind: tuner.LoRA, Precision: tw.Precision, Optimizer: tw.Optimizer,
			DataParallel: 1, MicroBatch: tw.MicroBatch, SeqLen: tw.SeqLen, Checkpointing: tw.Checkpointing}
		switch lora.Precision {
		case tuner.AMP, tuner.PureBF16, tuner.FP8:
			lora.Precision = tuner.BF16
		}
		if r, ok := est(lora); ok {
			r["gpus"] = int64(1)
			r["rank"] = int64(16) // tuner.Workload.LoRARank default
			out["lora"] = r
		}
		z2 := tw
		z2.ZeroStage = min(tw.ZeroStage, 2)
		z2.OffloadOptimizer, z2.OffloadParam = tuner.NoOffload, tuner.NoOffload
		if r, ok := est(z2); ok {
			out["unsharded"] = r
		}
	}
	// A checkpoint published quantized (its config.json's
	// quantization_config, or a name such as "...-bnb-4bit" mapped to a
	// catalog model with its weights) loads quantized whatever the recipe
	// says: transformers treats a config.json that carries a
	// quantization_config as pre-quantized and loads with the stored one
	// (huggingface/transformers get_hf_quantizer, in modeling_utils.py
	// from_pretrained and later quantizers/auto.py), so no 16-bit base
	// exists under that id to compare with.
	if tw.Kind == tuner.QLoRA && tw.WeightQuant == "" && m.Quant == nil {
		bf := tw
		bf.Kind = tuner.LoRA
		if r, ok := est(bf); ok {
			out["bf16_base"] = r
		}
	}
	return out
}

// ligerFusedLoss lists the model types whose Liger patch fuses the LM head
// into the loss by default (fused_linear_cross_entropy=True in
// apply_liger_kernel_to_<family>, linkedin/Liger-Kernel 00218a0
// src/liger_kernel/transformers/monkey_patch.py). Granite, for one, keeps
// the logits (its patch refuses the fused loss).
var ligerFusedLoss = map[string]bool{
	"llama": true, "mistral": true, "mixtral": true, "ministral": true, "qwen2": true,
	"gemma": true, "gemma2": true, "phi3": true, "smollm3": true, "nemotron": true,
}

// FusedLoss reports whether a recipe's loss never holds the whole logits:
// it turns on Liger kernels (use_liger_kernel) for a model whose Liger
// patch fuses the loss, or axolotl's Cut Cross Entropy.
func FusedLoss(w *normalize.Workload, m *tuner.Model) bool {
	if cce, _ := w.Get("cut_cross_entropy"); cce == true {
		// Cut Cross Entropy keeps no logits at all; the memory model's
		// fused loss (Liger's chunked logits) is its upper bound.
		return true
	}
	on, _ := w.Get("liger")
	return on == true && m != nil && ligerFusedLoss[strings.ToLower(m.ModelType)]
}
