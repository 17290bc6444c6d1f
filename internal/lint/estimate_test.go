package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize"
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

// TestFinetuneEstimateAgreesWithEstimate checks that the estimate a rule
// reads for a LoRA or QLoRA recipe is tuner.EstimateMemory of the same
// settings, as `gpulint estimate --workload lora|qlora --micro-batch 2
// --seq-len 2048 --lora-rank 32 --checkpointing` computes it.
func TestFinetuneEstimateAgreesWithEstimate(t *testing.T) {
	r, err := NewTargetResolver()
	if err != nil {
		t.Fatal(err)
	}
	gpu, ok := r.Catalog().GPU("H100-80GB")
	if !ok {
		t.Fatal("no H100-80GB in the catalog")
	}
	model, err := r.Model("meta-llama/Llama-3.1-8B", true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		recipe string
		want   tuner.Workload // the `gpulint estimate` flags
	}{
		{
			name: "axolotl lora",
			recipe: `base_model: meta-llama/Llama-3.1-8B
adapter: lora
lora_r: 32
lora_target_linear: true
sequence_len: 2048
micro_batch_size: 2
gradient_accumulation_steps: 4
bf16: auto
gradient_checkpointing: true
`,
			want: tuner.Workload{Kind: tuner.LoRA, MicroBatch: 2, SeqLen: 2048, LoRARank: 32, Checkpointing: true, DataParallel: 1},
		},
		{
			name: "axolotl lora with activation offloading",
			recipe: `base_model: meta-llama/Llama-3.1-8B
adapter: lora
lora_r: 32
lora_target_linear: true
sequence_len: 2048
micro_batch_size: 2
bf16: auto
gradient_checkpointing: true
activation_offloading: true
`,
			want: tuner.Workload{Kind: tuner.LoRA, MicroBatch: 2, SeqLen: 2048, LoRARank: 32, Checkpointing: true, ActivationOffloading: true, DataParallel: 1},
		},
		{
			name: "TRL qlora",
			recipe: `model_name_or_path: meta-llama/Llama-3.1-8B
torch_dtype: bfloat16
load_in_4bit: true
use_peft: true
lora_r: 32
max_seq_length: 2048
per_device_train_batch_size: 2
bf16: true
gradient_checkpointing: true
`,
			want: tuner.Workload{Kind: tuner.QLoRA, MicroBatch: 2, SeqLen: 2048, LoRARank: 32, Checkpointing: true, DataParallel: 1},
		},
		{
			name: "LLaMA-Factory lora without checkpointing",
			recipe: `model_name_or_path: meta-llama/Llama-3.1-8B
stage: sft
finetuning_type: lora
lora_rank: 32
lora_target: all
cutoff_len: 2048
per_device_train_batch_size: 2
bf16: true
disable_gradient_checkpointing: true
`,
			want: tuner.Workload{Kind: tuner.LoRA, MicroBatch: 2, SeqLen: 2048, LoRARank: 32, DataParallel: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tgt := Target{GPU: gpu, Model: model, ModelID: "meta-llama/Llama-3.1-8B"}
			got, _ := tgt.estimate(recipeWorkload(t, tc.recipe))
			if got == nil {
				t.Fatal("no estimate for the recipe")
			}
			want, err := tuner.EstimateMemory(model, gpu.Target(), tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if got["total"] != want.PerGPU.Total {
				t.Errorf("rule input total = %v, gpulint estimate total = %d", got["total"], want.PerGPU.Total)
			}
			wantBreakdown := map[string]any{
				"weights": want.PerGPU.Weights, "gradients": want.PerGPU.Gradients,
				"optimizer_states": want.PerGPU.OptimizerStates, "activations": want.PerGPU.Activations,
				"kv_cache": want.PerGPU.KVCache, "overhead": want.PerGPU.Overhead,
			}
			if diff := cmp.Diff(wantBreakdown, got["breakdown"]); diff != "" {
				t.Errorf("breakdown (-gpulint estimate +rule input):\n%s", diff)
			}
		})
	}
}

// A file's sizing is its tightest document's, and a document whose server
// cannot start is tighter than any that fits.
func TestTighterPrefersNotStartable(t *testing.T) {
	roomy := &Sizing{PerGPUBytes: 10, CapacityBytes: 100, Fits: true}
	tight := &Sizing{PerGPUBytes: 90, CapacityBytes: 100, Fits: true}
	blocked := &Sizing{PerGPUBytes: 10, CapacityBytes: 100, NotStartable: "tensor-parallel-size 4 needs 4 GPUs but the server gets 2"}
	tests := []struct {
		name string
		a, b *Sizing
		want *Sizing
	}{
		{"the larger share", roomy, tight, tight},
		{"the larger share, either order", tight, roomy, tight},
		{"not startable over a tight fit", tight, blocked, blocked},
		{"not startable first", blocked, tight, blocked},
		{"one nil", nil, roomy, roomy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tighter(tc.a, tc.b); got != tc.want {
				t.Errorf("tighter = %+v, want %+v", got, tc.want)
			}
		})
	}
}
