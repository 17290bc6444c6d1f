package normalize

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/source"
)

// recipeValue parses a recipe the way gpulint does (YAML 1.1 scalars).
func recipeValue(t *testing.T, name, text string) any {
	t.Helper()
	f, err := source.Parse(name, []byte(text), source.DefaultLimits())
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	v, err := f.Docs[0].Root.ToValue(source.DefaultLimits().MaxNodes)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFinetune(t *testing.T) {
	tests := []struct {
		name   string
		recipe string
		want   map[string]any   // fields of the model
		paths  map[string][]any // provenance of some fields
	}{
		{
			name: "axolotl qlora",
			recipe: `base_model: meta-llama/Llama-3.1-8B
load_in_4bit: true
adapter: qlora
lora_r: 32
lora_target_linear: true
sequence_len: 4096
sample_packing: true
micro_batch_size: 2
gradient_accumulation_steps: 4
bf16: auto
gradient_checkpointing: true
deepspeed: deepspeed_configs/zero2.json
`,
			want: map[string]any{
				"kind": "finetune", "framework": "transformers", "role": "train", "recipe": "axolotl",
				"model": "meta-llama/Llama-3.1-8B", "precision": "auto", "model_dtype": "auto",
				"batch":         map[string]any{"micro": int64(2), "accumulation": int64(4)},
				"checkpointing": true, "seq_len": int64(4096), "packing": true,
				"adapter":               map[string]any{"type": "qlora", "rank": int64(32), "targets": []any{"all-linear"}},
				"quantization":          map[string]any{"bits": int64(4), "method": "bitsandbytes"},
				"deepspeed_config_file": "deepspeed_configs/zero2.json",
			},
			paths: map[string][]any{"precision": {"bf16"}, "batch.micro": {"micro_batch_size"}, "adapter.type": {"adapter"}},
		},
		{
			name: "llamafactory defaults: lora, checkpointing on, micro 8",
			recipe: `model_name_or_path: Qwen/Qwen2.5-7B
stage: sft
do_train: true
quantization_bit: 4
cutoff_len: 2048
bf16: true
dataloader_num_workers: 0
`,
			want: map[string]any{
				"kind": "finetune", "framework": "transformers", "role": "train", "recipe": "llamafactory",
				"model": "Qwen/Qwen2.5-7B", "precision": "bf16",
				"batch":         map[string]any{"micro": int64(8), "accumulation": int64(1)},
				"checkpointing": true, "seq_len": int64(2048),
				"adapter":      map[string]any{"type": "qlora", "rank": int64(8)},
				"quantization": map[string]any{"bits": int64(4), "method": "bitsandbytes"},
				"dataloader":   map[string]any{"workers": int64(0)},
			},
			paths: map[string][]any{"checkpointing": {}, "batch.micro": {}, "adapter.type": {}, "quantization.bits": {"quantization_bit"}},
		},
		{
			name: "trainer (TRL) full fine-tune in fp32 with pin memory off",
			recipe: `model_name_or_path: mistralai/Mistral-7B-v0.1
per_device_train_batch_size: 4
gradient_checkpointing: false
dataloader_pin_memory: false
max_seq_length: 1024
optim: adamw_bnb_8bit
fsdp: full_shard auto_wrap offload
`,
			want: map[string]any{
				"kind": "finetune", "framework": "transformers", "role": "train", "recipe": "trainer",
				"model": "mistralai/Mistral-7B-v0.1", "precision": "fp32",
				"batch":         map[string]any{"micro": int64(4), "accumulation": int64(1)},
				"checkpointing": false, "seq_len": int64(1024),
				"adapter":    map[string]any{"type": "none"},
				"dataloader": map[string]any{"pin_memory": false},
				"optimizer":  "adamw_bnb_8bit",
				"fsdp":       map[string]any{"sharding": "full_shard", "cpu_offload": true},
			},
			paths: map[string][]any{"precision": {}, "fsdp.cpu_offload": {"fsdp"}},
		},
		{
			name: "torchtune lora",
			recipe: `model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj']
  apply_lora_to_mlp: True
  lora_rank: 8
dataset:
  _component_: torchtune.datasets.alpaca_dataset
  packed: False
batch_size: 4
gradient_accumulation_steps: 2
dtype: bf16
enable_activation_checkpointing: True
optimizer:
  _component_: torch.optim.AdamW
`,
			want: map[string]any{
				"kind": "finetune", "framework": "torchtune", "role": "train", "recipe": "torchtune",
				"model": "meta-llama/Llama-3.1-8B", "precision": "bf16",
				"batch":         map[string]any{"micro": int64(4), "accumulation": int64(2)},
				"checkpointing": true, "packing": false,
				"adapter":   map[string]any{"type": "lora", "rank": int64(8), "targets": []any{"q_proj", "v_proj", "w1", "w2", "w3"}},
				"optimizer": "torch.optim.adamw",
			},
			paths: map[string][]any{"model": {"model", "_component_"}, "checkpointing": {"enable_activation_checkpointing"}},
		},
		{
			// torchtune PPO (recipes/configs/mistral/7B_full_ppo_low_memory.yaml
			// @ bd2a0fc): the policy is the model, the backward batch
			// ppo_batch_size over the accumulation.
			name: "torchtune ppo",
			recipe: `tokenizer:
  max_seq_len: 512
policy_model:
  _component_: torchtune.models.mistral.mistral_7b
reward_and_value_model:
  _component_: torchtune.modules.classifier_model
  base_model_path: torchtune.models.mistral.mistral_7b
  num_classes: 1
batch_size: 128
ppo_batch_size: 64
gradient_accumulation_steps: 2
forward_batch_size: 128
max_generated_tokens: 58
enable_kv_cache: True
enable_activation_checkpointing: True
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW
optimizer_in_bwd: False
dtype: bf16
`,
			want: map[string]any{
				"kind": "finetune", "framework": "torchtune", "role": "train", "recipe": "torchtune",
				"model": "mistralai/Mistral-7B-v0.1", "precision": "bf16",
				"batch":         map[string]any{"micro": int64(32), "accumulation": int64(2)},
				"checkpointing": true, "seq_len": int64(512),
				"adapter":   map[string]any{"type": "none"},
				"optimizer": "bitsandbytes.optim.pagedadamw", "optimizer_in_backward": false,
				"ppo": map[string]any{"value_model": "mistralai/Mistral-7B-v0.1", "value_classes": int64(1),
					"forward_batch": int64(128), "max_generated_tokens": int64(58), "kv_cache": true},
			},
			paths: map[string][]any{"model": {"policy_model", "_component_"}, "batch.micro": {"ppo_batch_size"},
				"ppo.value_model": {"reward_and_value_model", "base_model_path"}},
		},
		{
			name: "gpt-neox with dashed keys",
			recipe: `{
  "pipe-parallel-size": 1,
  "model-parallel-size": 2,
  "num-layers": 12,
  "hidden-size": 768,
  "seq-length": 2048,
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 1,},
  "checkpoint-activations": true,
  "fp16": {"enabled": true},
}
`,
			want: map[string]any{
				"kind": "finetune", "framework": "gpt-neox", "role": "train", "recipe": "gpt-neox",
				"precision":     "fp16",
				"batch":         map[string]any{"micro": int64(4)},
				"zero":          map[string]any{"stage": int64(1), "offload_optimizer": "none", "offload_param": "none"},
				"checkpointing": true, "seq_len": int64(2048),
				"parallel": map[string]any{"pp": int64(1), "tp": int64(2)},
				"adapter":  map[string]any{"type": "none"},
			},
			paths: map[string][]any{"seq_len": {"seq-length"}, "precision": {"fp16", "enabled"}},
		},
	}
	v := newTestValidator(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Finetune(recipeValue(t, "recipe.yaml", tc.recipe))
			if diff := cmp.Diff(tc.want, w.Model); diff != "" {
				t.Errorf("model (-want +got):\n%s", diff)
			}
			for f, want := range tc.paths {
				if diff := cmp.Diff(want, w.Paths[f], cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("path of %s (-want +got):\n%s", f, diff)
				}
			}
			vs, err := v.Validate("workload", w.Model)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) > 0 {
				t.Errorf("workload breaks workload.cue: %+v", vs)
			}
		})
	}
}

func TestTorchtuneModel(t *testing.T) {
	tests := []struct {
		component, id, adapter string
		ok                     bool
	}{
		{"torchtune.models.llama3_1.lora_llama3_1_8b", "meta-llama/Llama-3.1-8B", "lora", true},
		{"torchtune.models.llama2.qlora_llama2_7b", "meta-llama/Llama-2-7b-hf", "qlora", true},
		{"torchtune.models.qwen2_5.qwen2_5_0_5b", "Qwen/Qwen2.5-0.5B", "none", true},
		{"torchtune.models.llama3_1.qlora_llama3_1_405b", "meta-llama/Llama-3.1-405B", "qlora", true},
		{"torchtune.models.llama4.llama4_maverick_17b_128e", "meta-llama/Llama-4-Maverick-17B-128E", "none", true},
		{"torchtune.models.llama4.lora_llama4_scout_17b_16e", "meta-llama/Llama-4-Scout-17B-16E", "lora", true},
		{"torchtune.models.gemma.gemma_2b", "", "none", false},
	}
	for _, tc := range tests {
		t.Run(tc.component, func(t *testing.T) {
			id, adapter, ok := TorchtuneModel(tc.component)
			if id != tc.id || adapter != tc.adapter || ok != tc.ok {
				t.Errorf("TorchtuneModel = %q, %q, %v; want %q, %q, %v", id, adapter, ok, tc.id, tc.adapter, tc.ok)
			}
		})
	}
}

// TestFinetuneCorpus normalizes every recipe of the corpus: each gets a
// flavour, a precision and a batch, and a model the workload schema
// accepts.
func TestFinetuneCorpus(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "finetune")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := newTestValidator(t)
	flavours := map[string]int{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w := Finetune(recipeValue(t, e.Name(), string(data)))
		r, _ := w.Get("recipe")
		flavours[r.(string)]++
		for _, f := range []string{"precision", "adapter.type"} {
			if _, ok := w.Get(f); !ok {
				t.Errorf("%s: no %s", e.Name(), f)
			}
		}
		vs, err := v.Validate("workload", w.Model)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range vs {
			t.Errorf("%s: %v: %s", e.Name(), x.Path, x.Message)
		}
	}
	// corpus/NOTES.md: axolotl 23, gpt-neox 12, LLaMA-Factory 10,
	// alignment-handbook 5, torchtune 5.
	want := map[string]int{"axolotl": 23, "gpt-neox": 12, "llamafactory": 10, "trainer": 5, "torchtune": 5}
	if diff := cmp.Diff(want, flavours); diff != "" {
		t.Errorf("recipe flavours (-want +got):\n%s", diff)
	}
}

// TestFlavourOwnParsers holds the recipe family to the script that reads
// the recipe: the Trainer's flavour only for recipes a Trainer script
// accepts, the script's own family (or unknown) for recipes of scripts
// with their own argument parsers, whose workload then carries no
// precision or batch read with the Trainer's defaults.
func TestFlavourOwnParsers(t *testing.T) {
	tests := []struct {
		name, recipe, want string
		trainerFields      bool
	}{
		{"trl recipe", "model_name_or_path: m\nper_device_train_batch_size: 2\nlearning_rate: 1.0e-5\nbf16: true\n", RecipeTrainer, true},
		{"accelerate loop script", "model_name_or_path: m\nper_device_train_batch_size: 2\nlearning_rate: 1.0e-5\nwith_tracking: true\n", RecipeAccelerateLoop, false},
		{"accelerate loop by its checkpoint option", "model_name_or_path: m\nnum_train_epochs: 2\ncheckpointing_steps: epoch\n", RecipeAccelerateLoop, false},
		{"ms-swift by its tuner option", "model: m\ntuner_type: lora\nnum_train_epochs: 1\n", RecipeSwift, false},
		{"ms-swift rlhf", "model: m\nrlhf_type: grpo\nper_device_train_batch_size: 1\n", RecipeSwift, false},
		{"model named model is no trainer script", "model: m\nper_device_train_batch_size: 2\nnum_train_epochs: 1\n", RecipeUnknown, false},
		{"axolotl stays axolotl", "base_model: m\nmicro_batch_size: 2\n", RecipeAxolotl, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Finetune(recipeValue(t, "recipe.yaml", tc.recipe))
			if got, _ := w.Get("recipe"); got != tc.want {
				t.Errorf("recipe = %v, want %s", got, tc.want)
			}
			_, hasPrecision := w.Get("precision")
			_, hasBatch := w.Get("batch.micro")
			if hasPrecision != tc.trainerFields || hasBatch != tc.trainerFields {
				t.Errorf("precision set %v, batch set %v; want both %v", hasPrecision, hasBatch, tc.trainerFields)
			}
		})
	}
}

// axolotl states its accumulation only as gradient_accumulation_steps: a
// batch_size beside it derives nothing, since the schema's default
// gradient_accumulation_steps 1 is in place before normalize_config would
// divide batch_size by micro_batch_size (see hfRecipe). The accumulation's
// provenance is the key that states it, and the default (1) has none.
func TestAxolotlBatchSizeSetsNoAccumulation(t *testing.T) {
	tests := []struct {
		name   string
		recipe string
		want   map[string]any
		path   []any
	}{
		{"batch_size over micro", "base_model: x/y\nmicro_batch_size: 4\nbatch_size: 16\n",
			map[string]any{"micro": int64(4), "accumulation": int64(1)}, nil},
		{"micro batch defaults to 1", "base_model: x/y\nbatch_size: 8\n",
			map[string]any{"micro": int64(1), "accumulation": int64(1)}, nil},
		{"written accumulation", "base_model: x/y\nmicro_batch_size: 2\ngradient_accumulation_steps: 3\n",
			map[string]any{"micro": int64(2), "accumulation": int64(3)}, []any{"gradient_accumulation_steps"}},
		{"no batch_size: the default", "base_model: x/y\nmicro_batch_size: 4\n",
			map[string]any{"micro": int64(4), "accumulation": int64(1)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Finetune(recipeValue(t, "recipe.yaml", "adapter: lora\nsequence_len: 1024\n"+tc.recipe))
			if r, _ := w.Get("recipe"); r != RecipeAxolotl {
				t.Fatalf("recipe %v, want axolotl", r)
			}
			if diff := cmp.Diff(tc.want, w.Model["batch"]); diff != "" {
				t.Errorf("batch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.path, w.Paths["batch.accumulation"], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("path of batch.accumulation (-want +got):\n%s", diff)
			}
		})
	}
}

// axolotl's gradient_checkpointing "offload" and "offload_disk" turn on
// activation offloading (validation.py check_gradient_checkpointing_w_offload
// @ 067b021c), even over a written activation_offloading: false; "unsloth",
// which that release refuses, and true only checkpoint.
func TestAxolotlCheckpointOffload(t *testing.T) {
	tests := []struct {
		name    string
		recipe  string
		offload any // activation_offloading, nil when unset
		path    []any
	}{
		{"offload", "gradient_checkpointing: offload\n", true, []any{"gradient_checkpointing"}},
		{"offload_disk", "gradient_checkpointing: offload_disk\n", true, []any{"gradient_checkpointing"}},
		{"offload over a written false", "gradient_checkpointing: offload\nactivation_offloading: false\n", true, []any{"gradient_checkpointing"}},
		{"true and its own key", "gradient_checkpointing: true\nactivation_offloading: legacy\n", true, []any{"activation_offloading"}},
		{"true alone", "gradient_checkpointing: true\n", nil, nil},
		{"unsloth", "gradient_checkpointing: unsloth\n", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Finetune(recipeValue(t, "recipe.yaml", "base_model: x/y\nadapter: lora\nsequence_len: 1024\n"+tc.recipe))
			if r, _ := w.Get("recipe"); r != RecipeAxolotl {
				t.Fatalf("recipe %v, want axolotl", r)
			}
			if c, _ := w.Get("checkpointing"); c != true {
				t.Errorf("checkpointing %v, want true", c)
			}
			got, _ := w.Get("activation_offloading")
			if got != tc.offload {
				t.Errorf("activation_offloading %v, want %v", got, tc.offload)
			}
			if diff := cmp.Diff(tc.path, w.Paths["activation_offloading"], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("path of activation_offloading (-want +got):\n%s", diff)
			}
		})
	}
}

// The Trainer's gradient_checkpointing is a bool: a string there is no
// axolotl offloading.
func TestTrainerCheckpointStringNoOffload(t *testing.T) {
	w := Finetune(recipeValue(t, "recipe.yaml", "model_name_or_path: x/y\nper_device_train_batch_size: 1\ngradient_checkpointing: offload\n"))
	if r, _ := w.Get("recipe"); r == RecipeAxolotl {
		t.Fatalf("recipe %v, want not axolotl", r)
	}
	if got, ok := w.Get("activation_offloading"); ok {
		t.Errorf("activation_offloading %v, want unset", got)
	}
}

// axolotl's CutCrossEntropyPlugin turns Cut Cross Entropy on unless the
// recipe's cut_cross_entropy says otherwise (CutCrossEntropyArgs default
// True @ 067b021c); the key means nothing without the plugin.
func TestAxolotlCutCrossEntropy(t *testing.T) {
	const plugin = "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
	tests := []struct {
		name   string
		recipe string
		want   any // cut_cross_entropy, nil when unset
		path   []any
	}{
		{"plugin alone", plugin, true, []any{"plugins"}},
		{"plugin, turned off", plugin + "cut_cross_entropy: false\n", false, []any{"cut_cross_entropy"}},
		{"plugin, null", plugin + "cut_cross_entropy:\n", false, []any{"cut_cross_entropy"}},
		{"key without the plugin", "cut_cross_entropy: true\n", nil, nil},
		{"liger plugin only", "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Finetune(recipeValue(t, "recipe.yaml", "base_model: x/y\nadapter: lora\nbf16: true\nsequence_len: 1024\n"+tc.recipe))
			if r, _ := w.Get("recipe"); r != RecipeAxolotl {
				t.Fatalf("recipe %v, want axolotl", r)
			}
			got, _ := w.Get("cut_cross_entropy")
			if got != tc.want {
				t.Errorf("cut_cross_entropy %v, want %v", got, tc.want)
			}
			if diff := cmp.Diff(tc.path, w.Paths["cut_cross_entropy"], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}
