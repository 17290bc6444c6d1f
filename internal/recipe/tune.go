package recipe

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/value"
	"github.com/gpulint/gpulint/tuner"
)

// keys are the keys each recipe flavour reads the tuned settings from
// (the same table as recipe_keys in policies/lib/lib.rego); a plan writes
// them where the recipe has them, else adds these.
//
// Each tool steps the optimizer once per gradient_accumulation_steps
// micro batches, so a plan that changes the micro batch writes the
// accumulation with it to keep their product (tuner.PlanRequest):
// axolotl's micro_batch_size and gradient_accumulation_steps
// (axolotl-ai-cloud/axolotl src/axolotl/utils/schemas/training.py
// HyperparametersConfig, commit 067b021c; normalize_config derives
// batch_size = micro_batch_size × gradient_accumulation_steps per GPU, and
// a written batch_size sets no accumulation: AxolotlBatchSize),
// torchtune's batch_size and gradient_accumulation_steps
// (pytorch/torchtune recipes/lora_finetune_single_device.py, commit
// bd2a0fc7), and TrainingArguments' per_device_train_batch_size and
// gradient_accumulation_steps, which LLaMA-Factory passes through
// (huggingface/transformers src/transformers/training_args.py).
var keys = map[string]map[string]string{
	normalize.RecipeTrainer:      {"batch.micro": "per_device_train_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "gradient_checkpointing"},
	normalize.RecipeAxolotl:      {"batch.micro": "micro_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "gradient_checkpointing"},
	normalize.RecipeLlamaFactory: {"batch.micro": "per_device_train_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "disable_gradient_checkpointing"},
	normalize.RecipeTorchtune:    {"batch.micro": "batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "enable_activation_checkpointing"},
	normalize.RecipeGPTNeoX:      {"batch.micro": "train_micro_batch_size_per_gpu", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "checkpoint_activations"},
}

// Path is where a recipe sets a workload field: the key it was read from,
// else the key its tool reads; nil when neither is known.
func Path(w *normalize.Workload, field string) []any {
	if p := w.Paths[field]; len(p) > 0 {
		return p
	}
	r, _ := w.Get("recipe")
	rs, _ := r.(string)
	if k := keys[rs][field]; k != "" {
		return []any{k}
	}
	return nil
}

// StatedAccumulation is the gradient accumulation a recipe's workload w
// fixes: gradient_accumulation_steps where it is written. ok is false when
// the recipe leaves the accumulation to its default, so the global batch
// moves with the micro batch; an axolotl batch_size does not fix it
// (AxolotlBatchSize).
func StatedAccumulation(w *normalize.Workload) (int, bool) {
	if w.Paths["batch.accumulation"] == nil {
		return 0, false
	}
	n, ok := w.Get("batch.accumulation")
	v, isInt := n.(int64)
	return int(v), ok && isInt && v > 0
}

// AxolotlBatchSize reports the batch_size an axolotl recipe writes instead
// of gradient_accumulation_steps, 0 otherwise. It sets no accumulation
// (the schema's default 1 comes first: see normalize's hfRecipe), and a
// plan may not write gradient_accumulation_steps beside it: axolotl
// refuses both (check_gas_bsz, axolotl-ai-cloud/axolotl
// src/axolotl/utils/schemas/validation.py @ 067b021c).
func AxolotlBatchSize(w *normalize.Workload, doc any) int64 {
	if r, _ := w.Get("recipe"); r != normalize.RecipeAxolotl || w.Paths["batch.accumulation"] != nil {
		return 0
	}
	m, _ := doc.(map[string]any)
	bs, _ := value.Int(m["batch_size"])
	return bs
}

// TunePatch writes a plan's micro batch, accumulation and checkpointing
// in a recipe's spelling (ZeRO stage and offload live in the DeepSpeed
// config a recipe names; gpt-neox holds them inline): the path to set and
// its value, ok false when the recipe cannot hold the choice.
func TunePatch(w *normalize.Workload, c tuner.Choice) (path []any, value any, ok bool) {
	recipe, _ := w.Get("recipe")
	switch c.Setting {
	case tuner.SettingMicroBatch, tuner.SettingGradAccumulation:
		field := map[string]string{tuner.SettingMicroBatch: "batch.micro", tuner.SettingGradAccumulation: "batch.accumulation"}[c.Setting]
		n, err := strconv.ParseInt(c.To, 10, 64)
		p := Path(w, field)
		return p, n, err == nil && p != nil
	case tuner.SettingCheckpointing:
		on := c.To == "on"
		p := Path(w, "checkpointing")
		if len(p) == 1 && p[0] == "disable_gradient_checkpointing" {
			return p, !on, true
		}
		return p, on, p != nil
	case tuner.SettingZeroStage:
		if recipe != normalize.RecipeGPTNeoX {
			return nil, nil, false
		}
		n, err := strconv.ParseInt(c.To, 10, 64)
		return []any{"zero_optimization", "stage"}, n, err == nil
	}
	return nil, nil, false
}

// Set is one value a patch writes at a path of the recipe.
type Set struct {
	Path  []any
	Value any
}

// PrecisionSets switches a recipe (its workload w and decoded document
// doc) to the plan's 16-bit precision: the bf16/fp16 flags of the
// Trainer-based tools (both written, since TrainingArguments refuses both
// true), torchtune's dtype (bf16 only) or gpt-neox's precision. ok is
// false when the recipe cannot hold the choice.
func PrecisionSets(w *normalize.Workload, doc any, c tuner.Choice) ([]Set, bool) {
	if c.To != "bf16" && c.To != "fp16" {
		return nil, false
	}
	recipe, _ := w.Get("recipe")
	switch recipe {
	case normalize.RecipeTorchtune:
		return []Set{{Path: []any{"dtype"}, Value: "bf16"}}, c.To == "bf16"
	case normalize.RecipeGPTNeoX:
		v := map[string]string{"bf16": "bfloat16", "fp16": "fp16"}[c.To]
		return []Set{{Path: []any{"precision"}, Value: v}}, w.Paths["precision"] == nil || len(w.Paths["precision"]) == 1
	}
	sets := []Set{{Path: []any{c.To}, Value: true}}
	other := map[string]string{"bf16": "fp16", "fp16": "bf16"}[c.To]
	if m, ok := doc.(map[string]any); ok {
		if b, ok := m[other].(bool); ok && b {
			sets = append(sets, Set{Path: []any{other}, Value: false})
		}
	}
	return sets, true
}

// FSDPSets writes a plan's FSDP strategy or CPU offload choice in a
// recipe's own keys: TrainingArguments' fsdp string ("full_shard auto_wrap
// offload": the strategy token replaced, offload added or dropped;
// transformers training_args.py FSDPOption), an fsdp_config offload key
// (axolotl fsdp_offload_params), or torchtune's fsdp_cpu_offload and
// fsdp_reshard_after_forward (true FULL_SHARD, false SHARD_GRAD_OP). ok is
// false when the recipe cannot hold the choice (a list-form fsdp, a
// strategy torchtune's fully_shard lacks).
//
// Both choices rewrite the one fsdp string, so the string is written once,
// by the first of the plan's changed FSDP choices (all), holding every
// change; the others return no set.
func FSDPSets(w *normalize.Workload, doc any, c tuner.Choice, all []tuner.Choice) ([]Set, bool) {
	m, _ := doc.(map[string]any)
	recipe, _ := w.Get("recipe")
	if recipe == normalize.RecipeTorchtune {
		if w.Paths["fsdp.sharding"] == nil {
			// FSDP inferred from the GPU count: a single-device recipe
			// does not read the distributed recipes' keys.
			return nil, false
		}
		switch c.Setting {
		case tuner.SettingFSDPOffload:
			return []Set{{Path: []any{"fsdp_cpu_offload"}, Value: c.To == "on"}}, true
		case tuner.SettingFSDPSharding:
			v, ok := map[string]bool{"FULL_SHARD": true, "SHARD_GRAD_OP": false}[c.To]
			if !ok {
				return nil, false
			}
			return []Set{{Path: []any{"fsdp_reshard_after_forward"}, Value: v}}, true
		}
		return nil, false
	}
	if at := w.Paths["fsdp.cpu_offload"]; c.Setting == tuner.SettingFSDPOffload && len(at) == 2 && at[0] == "fsdp_config" {
		return []Set{{Path: at, Value: c.To == "on"}}, true
	}
	if at := w.Paths["fsdp.sharding"]; c.Setting == tuner.SettingFSDPSharding && len(at) == 2 && at[0] == "fsdp_config" &&
		strings.HasSuffix(fmt.Sprint(at[1]), "reshard_after_forward") {
		// The recipe's own reshard_after_forward overrides the fsdp
		// string (transformers training_args.py reads it after the
		// string's strategy): the choice goes there, a bool under FSDP2,
		// a strategy name under FSDP1.
		if v, _ := w.Get("fsdp.version"); v == int64(2) {
			b, ok := map[string]bool{"FULL_SHARD": true, "SHARD_GRAD_OP": false}[c.To]
			if !ok {
				return nil, false
			}
			return []Set{{Path: at, Value: b}}, true
		}
		return []Set{{Path: at, Value: c.To}}, true
	}
	str, ok := m["fsdp"].(string)
	if !ok {
		return nil, false
	}
	strategies := map[string]bool{"full_shard": true, "shard_grad_op": true, "no_shard": true, "hybrid_shard": true, "hybrid_shard_zero2": true}
	var changed []tuner.Choice
	for _, x := range all {
		if x.Changed() && (x.Setting == tuner.SettingFSDPSharding || x.Setting == tuner.SettingFSDPOffload) {
			changed = append(changed, x)
		}
	}
	if len(changed) == 0 || changed[0].Setting != c.Setting {
		return nil, c.Setting == tuner.SettingFSDPSharding || c.Setting == tuner.SettingFSDPOffload
	}
	fields := strings.Fields(str)
	for _, x := range changed {
		var out []string
		switch x.Setting {
		case tuner.SettingFSDPOffload:
			for _, f := range fields {
				if strings.ToLower(f) != "offload" {
					out = append(out, f)
				}
			}
			if x.To == "on" {
				out = append(out, "offload")
			}
		case tuner.SettingFSDPSharding:
			to := strings.TrimPrefix(strings.ToLower(x.To), "_")
			replaced := false
			for _, f := range fields {
				if strategies[strings.ToLower(f)] {
					f, replaced = to, true
				}
				out = append(out, f)
			}
			if !replaced {
				out = append([]string{to}, out...)
			}
		}
		fields = out
	}
	return []Set{{Path: []any{"fsdp"}, Value: strings.Join(fields, " ")}}, true
}
