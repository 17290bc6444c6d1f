package lint

import (
	"strconv"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

// recipeKeys are the keys each recipe flavour reads the tuned settings
// from (the same table as recipe_keys in policies/lib/lib.rego); a plan
// writes them where the recipe has them, else adds these.
var recipeKeys = map[string]map[string]string{
	normalize.RecipeTrainer:      {"batch.micro": "per_device_train_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "gradient_checkpointing"},
	normalize.RecipeAxolotl:      {"batch.micro": "micro_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "gradient_checkpointing"},
	normalize.RecipeLlamaFactory: {"batch.micro": "per_device_train_batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "disable_gradient_checkpointing"},
	normalize.RecipeTorchtune:    {"batch.micro": "batch_size", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "enable_activation_checkpointing"},
	normalize.RecipeGPTNeoX:      {"batch.micro": "train_micro_batch_size_per_gpu", "batch.accumulation": "gradient_accumulation_steps", "checkpointing": "checkpoint_activations"},
}

// recipePath is where a recipe sets a workload field: the key it was read
// from, else the key its tool reads.
func recipePath(s *subject, field string) []any {
	if p := s.work.Paths[field]; len(p) > 0 {
		return p
	}
	r, _ := s.work.Get("recipe")
	rs, _ := r.(string)
	if k := recipeKeys[rs][field]; k != "" {
		return []any{k}
	}
	return nil
}

// finetuneTunePatch writes a plan's micro batch, accumulation and
// checkpointing in a recipe's spelling (ZeRO stage and offload live in the
// DeepSpeed config a recipe names; gpt-neox holds them inline).
func finetuneTunePatch(s *subject, c tuner.Choice) ([]any, any, bool) {
	recipe, _ := s.work.Get("recipe")
	switch c.Setting {
	case tuner.SettingMicroBatch, tuner.SettingGradAccumulation:
		field := map[string]string{tuner.SettingMicroBatch: "batch.micro", tuner.SettingGradAccumulation: "batch.accumulation"}[c.Setting]
		n, err := strconv.ParseInt(c.To, 10, 64)
		p := recipePath(s, field)
		return p, n, err == nil && p != nil
	case tuner.SettingCheckpointing:
		on := c.To == "on"
		p := recipePath(s, "checkpointing")
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

// finetunePrecisionOps switches a recipe to the plan's 16-bit precision:
// the bf16/fp16 flags of the Trainer-based tools (both written, since
// TrainingArguments refuses both true), torchtune's dtype (bf16 only) or
// gpt-neox's precision.
func finetunePrecisionOps(s *subject, c tuner.Choice) ([]check.Op, bool) {
	if c.To != "bf16" && c.To != "fp16" {
		return nil, false
	}
	recipe, _ := s.work.Get("recipe")
	switch recipe {
	case normalize.RecipeTorchtune:
		return []check.Op{{Op: "set", Path: []any{"dtype"}, Value: "bf16"}}, c.To == "bf16"
	case normalize.RecipeGPTNeoX:
		v := map[string]string{"bf16": "bfloat16", "fp16": "fp16"}[c.To]
		return []check.Op{{Op: "set", Path: []any{"precision"}, Value: v}}, s.work.Paths["precision"] == nil || len(s.work.Paths["precision"]) == 1
	}
	ops := []check.Op{{Op: "set", Path: []any{c.To}, Value: true}}
	other := map[string]string{"bf16": "fp16", "fp16": "bf16"}[c.To]
	if m, ok := s.value.(map[string]any); ok {
		if b, ok := m[other].(bool); ok && b {
			ops = append(ops, check.Op{Op: "set", Path: []any{other}, Value: false})
		}
	}
	return ops, true
}
