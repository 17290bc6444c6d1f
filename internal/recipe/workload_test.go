package recipe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/tuner"
)

// recipeWorkload normalizes a recipe written as YAML.
func recipeWorkload(t *testing.T, text string) *normalize.Workload {
	t.Helper()
	f, err := source.Parse("recipe.yaml", []byte(text), source.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Docs[0].Root.ToValue(source.DefaultLimits().MaxNodes)
	if err != nil {
		t.Fatal(err)
	}
	return normalize.Finetune(v)
}

func TestWorkload(t *testing.T) {
	tests := []struct {
		name   string
		recipe string
		gpus   int
		want   tuner.Workload
		ok     bool
	}{
		{
			name:   "torchtune full fine-tune trains in pure bf16",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: bf16\noptimizer_in_bwd: True\n",
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.PureBF16, MicroBatch: 4, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1, OptimizerInBackward: true},
			ok:     true,
		},
		{
			name:   "Trainer full fine-tune on one GPU runs AMP",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 2\nbf16: true\noptim: paged_adamw_8bit\n",
			gpus:   1,
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Optimizer: tuner.Adam8bit, PagedOptimizer: true, MicroBatch: 2, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "multi-GPU Trainer full fine-tune: sharding left to the launcher",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 2\nbf16: true\n",
			gpus:   4,
			ok:     false,
		},
		{
			name:   "axolotl full fine-tune loads the model in bf16",
			recipe: "base_model: m\nmicro_batch_size: 1\nbf16: true\nsequence_len: 2048\n",
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.PureBF16, MicroBatch: 1, SeqLen: 2048, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "multi-GPU torchtune shards with FSDP",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\ndtype: bf16\n",
			gpus:   8,
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.PureBF16, ZeroStage: 3, Sharding: tuner.FSDP2, MicroBatch: 4, DataParallel: 8, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "context parallelism splits the sequence",
			recipe: "base_model: m\nadapter: lora\nmicro_batch_size: 1\nbf16: true\nsequence_len: 32768\ncontext_parallel_size: 4\n",
			gpus:   8,
			want:   tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 1, SeqLen: 8192, DataParallel: 2, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "activation offloading has no regime",
			recipe: "base_model: m\nadapter: lora\nmicro_batch_size: 1\nbf16: true\nactivation_offloading: legacy\n",
			ok:     false,
		},
		{
			name:   "a DeepSpeed config that was not found leaves the stage unknown",
			recipe: "base_model: m\nadapter: lora\nmicro_batch_size: 1\nbf16: true\ndeepspeed: deepspeed_configs/zero3.json\n",
			ok:     false,
		},
		{
			name:   "FSDP full shard with offload is ZeRO-3 with both offloads",
			recipe: "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\nfsdp: full_shard auto_wrap offload\n",
			gpus:   8,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.BF16, ZeroStage: 3, Sharding: tuner.FSDP1, OffloadOptimizer: tuner.CPU, OffloadParam: tuner.CPU,
				MicroBatch: 1, DataParallel: 8, TensorParallel: 1, PipelineParallel: 1},
			ok: true,
		},
		{
			name:   "8-bit base is the quantized-base regime in int8",
			recipe: "base_model: m\nadapter: lora\nload_in_8bit: true\nlora_target_modules: [q_proj, v_proj]\nmicro_batch_size: 1\nbf16: true\n",
			want: tuner.Workload{Kind: tuner.QLoRA, WeightQuant: "int8", Precision: tuner.BF16, MicroBatch: 1, SeqLen: 512,
				DataParallel: 1, TensorParallel: 1, PipelineParallel: 1, LoRATargets: []string{"q_proj", "v_proj"}},
			ok: true,
		},
		{
			name:   "unknown target modules fall back to the default targets",
			recipe: "base_model: m\nadapter: lora\nlora_target_modules: [c_attn]\nmicro_batch_size: 1\nbf16: true\n",
			want:   tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 1, SeqLen: 512, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "LLaMA-Factory freeze tuning has no regime",
			recipe: "model_name_or_path: m\nfinetuning_type: freeze\nbf16: true\n",
			ok:     false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := recipe.Workload(recipeWorkload(t, tc.recipe), tc.gpus)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("workload (-want +got):\n%s", diff)
			}
		})
	}
}

// A comment's sharding sizes a multi-GPU full fine-tune the recipe leaves
// to its launcher; the recipe's own DeepSpeed config or FSDP keys win.
func TestWorkloadAssuming(t *testing.T) {
	const sft = "model_name_or_path: m\nbf16: true\nper_device_train_batch_size: 2\n"
	if _, ok := recipe.Workload(recipeWorkload(t, sft), 8); ok {
		t.Fatal("a multi-GPU full fine-tune with no sharding was sized")
	}
	tw, ok := recipe.WorkloadAssuming(recipeWorkload(t, sft), 8, recipe.Sharding{Scheme: "zero", Stage: 3})
	if !ok || tw.ZeroStage != 3 || tw.Sharding != tuner.ZeRO || tw.DataParallel != 8 || tw.Precision != tuner.BF16 {
		t.Errorf("ZeRO-3 from a comment: %+v (ok %v), want stage 3 over 8 in mixed bf16", tw, ok)
	}
	tw, ok = recipe.WorkloadAssuming(recipeWorkload(t, sft), 128, recipe.Sharding{Scheme: "fsdp", Stage: 3, Version: 1})
	if !ok || tw.ZeroStage != 3 || tw.Sharding != tuner.FSDP1 {
		t.Errorf("FSDP1 from a comment: %+v (ok %v), want FSDP1 full shard", tw, ok)
	}
	own := sft + "fsdp: full_shard auto_wrap\n"
	tw, ok = recipe.WorkloadAssuming(recipeWorkload(t, own), 8, recipe.Sharding{Scheme: "zero", Stage: 2})
	if !ok || tw.Sharding != tuner.FSDP1 || tw.ZeroStage != 3 {
		t.Errorf("the recipe's FSDP keys: %+v (ok %v), want its own FSDP full shard", tw, ok)
	}
}

// use_liger_kernel fuses the loss only for families whose Liger patch
// does so by default.
func TestFusedLoss(t *testing.T) {
	on := recipeWorkload(t, "model_name_or_path: m\nbf16: true\nuse_liger_kernel: true\n")
	off := recipeWorkload(t, "model_name_or_path: m\nbf16: true\n")
	qwen := &tuner.Model{ModelType: "qwen2"}
	if !recipe.FusedLoss(on, qwen) {
		t.Error("use_liger_kernel on a Qwen2 model: loss not fused")
	}
	if recipe.FusedLoss(off, qwen) {
		t.Error("no use_liger_kernel: loss fused")
	}
	if recipe.FusedLoss(on, &tuner.Model{ModelType: "granite"}) || recipe.FusedLoss(on, nil) {
		t.Error("Granite (whose patch keeps the logits) or an unknown model: loss fused")
	}
}

// A multi-GPU full fine-tune whose recipe and comment name no sharding is
// estimated under each sharding its launcher may give it; any stated
// sharding, one GPU or an adapter run leaves nothing open.
func TestShardingAlternatives(t *testing.T) {
	const sft = "model_name_or_path: m\nbf16: true\ntorch_dtype: bfloat16\nper_device_train_batch_size: 2\n"
	alts, ok := recipe.ShardingAlternatives(recipeWorkload(t, sft), 8, recipe.Sharding{})
	if !ok {
		t.Fatal("no alternatives for an 8-GPU full fine-tune with no sharding")
	}
	type alt struct {
		Label     string
		Sharding  tuner.Sharding
		Stage     int
		Precision tuner.Precision
		DP        int
	}
	var got []alt
	for _, a := range alts {
		got = append(got, alt{a.Label, a.Workload.Sharding, a.Workload.ZeroStage, a.Workload.Precision, a.Workload.DataParallel})
	}
	want := []alt{
		{"unsharded (DDP)", "", 0, tuner.PureBF16, 8},
		{"ZeRO-2", tuner.ZeRO, 2, tuner.BF16, 8},
		{"ZeRO-3", tuner.ZeRO, 3, tuner.BF16, 8},
		{"FSDP full shard", tuner.FSDP1, 3, tuner.BF16, 8},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alternatives (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name    string
		recipe  string
		gpus    int
		assumed recipe.Sharding
	}{
		{"one GPU", sft, 1, recipe.Sharding{}},
		{"the comment's sharding", sft, 8, recipe.Sharding{Scheme: "zero", Stage: 3}},
		{"the recipe's FSDP keys", sft + "fsdp: full_shard auto_wrap\n", 8, recipe.Sharding{}},
		{"LoRA", "base_model: m\nadapter: lora\nmicro_batch_size: 1\nbf16: true\n", 8, recipe.Sharding{}},
	} {
		if _, ok := recipe.ShardingAlternatives(recipeWorkload(t, tc.recipe), tc.gpus, tc.assumed); ok {
			t.Errorf("%s: alternatives offered, want none", tc.name)
		}
	}
}
