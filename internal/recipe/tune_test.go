package recipe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/tuner"
)

func TestTunePatch(t *testing.T) {
	type patch struct {
		Path  []any
		Value any
		OK    bool
	}
	tests := []struct {
		name   string
		recipe string
		choice tuner.Choice
		want   patch
	}{
		{
			name:   "micro batch where the recipe wrote it",
			recipe: "base_model: m\nmicro_batch_size: 4\nbf16: true\n",
			choice: tuner.Choice{Setting: tuner.SettingMicroBatch, To: "2"},
			want:   patch{Path: []any{"micro_batch_size"}, Value: int64(2), OK: true},
		},
		{
			name:   "accumulation added under the key the Trainer reads",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 4\nbf16: true\n",
			choice: tuner.Choice{Setting: tuner.SettingGradAccumulation, To: "8"},
			want:   patch{Path: []any{"gradient_accumulation_steps"}, Value: int64(8), OK: true},
		},
		{
			name:   "LLaMA-Factory turns checkpointing on by clearing its disable flag",
			recipe: "model_name_or_path: m\nfinetuning_type: lora\nper_device_train_batch_size: 4\nbf16: true\n",
			choice: tuner.Choice{Setting: tuner.SettingCheckpointing, To: "on"},
			want:   patch{Path: []any{"disable_gradient_checkpointing"}, Value: false, OK: true},
		},
		{
			name:   "ZeRO stage lives in the DeepSpeed config, not a Trainer recipe",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 4\nbf16: true\n",
			choice: tuner.Choice{Setting: tuner.SettingZeroStage, To: "3"},
			want:   patch{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got patch
			got.Path, got.Value, got.OK = recipe.TunePatch(recipeWorkload(t, tc.recipe), tc.choice)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TunePatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrecisionSets(t *testing.T) {
	tests := []struct {
		name   string
		recipe string
		doc    any
		to     string
		want   []recipe.Set
		ok     bool
	}{
		{
			name:   "Trainer switching from fp16 clears it",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 4\nfp16: true\n",
			doc:    map[string]any{"fp16": true},
			to:     "bf16",
			want:   []recipe.Set{{Path: []any{"bf16"}, Value: true}, {Path: []any{"fp16"}, Value: false}},
			ok:     true,
		},
		{
			name:   "torchtune holds bf16 only",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: fp32\n",
			to:     "fp16",
			want:   []recipe.Set{{Path: []any{"dtype"}, Value: "bf16"}},
			ok:     false,
		},
		{
			name:   "fp8 is no recipe flag",
			recipe: "base_model: m\nmicro_batch_size: 1\nbf16: true\n",
			to:     "fp8",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := recipe.PrecisionSets(recipeWorkload(t, tc.recipe), tc.doc, tuner.Choice{Setting: tuner.SettingPrecision, To: tc.to})
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PrecisionSets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFSDPSets(t *testing.T) {
	shard := func(from, to string) tuner.Choice {
		return tuner.Choice{Setting: tuner.SettingFSDPSharding, From: from, To: to}
	}
	offload := func(from, to string) tuner.Choice {
		return tuner.Choice{Setting: tuner.SettingFSDPOffload, From: from, To: to}
	}
	tests := []struct {
		name   string
		recipe string
		doc    any
		choice tuner.Choice
		all    []tuner.Choice
		want   []recipe.Set
		ok     bool
	}{
		{
			name:   "Trainer fsdp string: both changes land in one rewrite by the first choice",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\nfsdp: full_shard auto_wrap offload\n",
			doc:    map[string]any{"fsdp": "full_shard auto_wrap offload"},
			choice: shard("FULL_SHARD", "SHARD_GRAD_OP"),
			all:    []tuner.Choice{shard("FULL_SHARD", "SHARD_GRAD_OP"), offload("on", "off")},
			want:   []recipe.Set{{Path: []any{"fsdp"}, Value: "shard_grad_op auto_wrap"}},
			ok:     true,
		},
		{
			name:   "FSDP2 recipe: the strategy goes to its own reshard_after_forward, a bool",
			recipe: "model_name_or_path: m\nbf16: true\nfsdp: full_shard auto_wrap\nfsdp_config:\n  fsdp_version: 2\n  reshard_after_forward: true\n",
			doc:    map[string]any{"fsdp": "full_shard auto_wrap", "fsdp_config": map[string]any{"fsdp_version": int64(2), "reshard_after_forward": true}},
			choice: shard("FULL_SHARD", "SHARD_GRAD_OP"),
			all:    []tuner.Choice{shard("FULL_SHARD", "SHARD_GRAD_OP")},
			want:   []recipe.Set{{Path: []any{"fsdp_config", "reshard_after_forward"}, Value: false}},
			ok:     true,
		},
		{
			name:   "the second FSDP choice writes nothing of its own",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\nfsdp: full_shard auto_wrap offload\n",
			doc:    map[string]any{"fsdp": "full_shard auto_wrap offload"},
			choice: offload("on", "off"),
			all:    []tuner.Choice{shard("FULL_SHARD", "SHARD_GRAD_OP"), offload("on", "off")},
			ok:     true,
		},
		{
			name:   "Trainer offload added to a string without a strategy token",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\nfsdp: auto_wrap\n",
			doc:    map[string]any{"fsdp": "auto_wrap"},
			choice: offload("off", "on"),
			all:    []tuner.Choice{offload("off", "on")},
			want:   []recipe.Set{{Path: []any{"fsdp"}, Value: "auto_wrap offload"}},
			ok:     true,
		},
		{
			name:   "axolotl offload lives in fsdp_config",
			recipe: "base_model: m\nmicro_batch_size: 1\nbf16: true\nfsdp:\n  - full_shard\nfsdp_config:\n  fsdp_offload_params: true\n",
			doc:    map[string]any{"fsdp": []any{"full_shard"}, "fsdp_config": map[string]any{"fsdp_offload_params": true}},
			choice: offload("on", "off"),
			all:    []tuner.Choice{offload("on", "off")},
			want:   []recipe.Set{{Path: []any{"fsdp_config", "fsdp_offload_params"}, Value: false}},
			ok:     true,
		},
		{
			name:   "a list-form strategy is not rewritten",
			recipe: "base_model: m\nmicro_batch_size: 1\nbf16: true\nfsdp:\n  - full_shard\n",
			doc:    map[string]any{"fsdp": []any{"full_shard"}},
			choice: shard("FULL_SHARD", "SHARD_GRAD_OP"),
			all:    []tuner.Choice{shard("FULL_SHARD", "SHARD_GRAD_OP")},
		},
		{
			name:   "torchtune SHARD_GRAD_OP is reshard_after_forward false",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: bf16\nfsdp_cpu_offload: false\n",
			choice: shard("FULL_SHARD", "SHARD_GRAD_OP"),
			all:    []tuner.Choice{shard("FULL_SHARD", "SHARD_GRAD_OP")},
			want:   []recipe.Set{{Path: []any{"fsdp_reshard_after_forward"}, Value: false}},
			ok:     true,
		},
		{
			name:   "torchtune has no NO_SHARD",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: bf16\nfsdp_cpu_offload: true\n",
			choice: shard("FULL_SHARD", "NO_SHARD"),
			all:    []tuner.Choice{shard("FULL_SHARD", "NO_SHARD")},
		},
		{
			name:   "a torchtune recipe without FSDP keys gets none",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: bf16\n",
			choice: offload("off", "on"),
			all:    []tuner.Choice{offload("off", "on")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := recipe.FSDPSets(recipeWorkload(t, tc.recipe), tc.doc, tc.choice, tc.all)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FSDPSets (-want +got):\n%s", diff)
			}
		})
	}
}
