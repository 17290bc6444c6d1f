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
			name:   "axolotl activation offloading moves activations to the host",
			recipe: "base_model: m\nadapter: lora\nmicro_batch_size: 1\nbf16: true\nactivation_offloading: legacy\n",
			want: tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 1, SeqLen: 512, ActivationOffloading: true,
				DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok: true,
		},
		{
			name:   "torchtune enable_activation_offloading moves activations to the host",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\nbatch_size: 2\ndtype: bf16\nenable_activation_checkpointing: true\nenable_activation_offloading: true\n",
			want: tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 2, Checkpointing: true, ActivationOffloading: true,
				DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok: true,
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
			name:   "path-qualified target modules are read (axolotl's Llama 4 QLoRA names them so)",
			recipe: "base_model: m\nadapter: lora\nlora_target_modules: [self_attn.q_proj, shared_expert.gate_proj]\nmicro_batch_size: 1\nbf16: true\n",
			want: tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 1, SeqLen: 512, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1,
				LoRATargets: []string{"self_attn.q_proj", "shared_expert.gate_proj"}},
			ok: true,
		},
		{
			name:   "unknown target modules fall back to the default targets",
			recipe: "base_model: m\nadapter: lora\nlora_target_modules: [c_attn]\nmicro_batch_size: 1\nbf16: true\n",
			want:   tuner.Workload{Kind: tuner.LoRA, Precision: tuner.BF16, MicroBatch: 1, SeqLen: 512, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "torchtune with bitsandbytes' 32-bit AdamW keeps fp32 states",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 2\ndtype: bf16\noptimizer:\n  _component_: bitsandbytes.optim.AdamW\n",
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.PureBF16, FP32OptimizerStates: true, MicroBatch: 2, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
			ok:     true,
		},
		{
			name:   "torchtune with bitsandbytes' 8-bit AdamW",
			recipe: "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 2\ndtype: bf16\noptimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\n",
			want:   tuner.Workload{Kind: tuner.Train, Precision: tuner.PureBF16, Optimizer: tuner.Adam8bit, PagedOptimizer: true, MicroBatch: 2, DataParallel: 1, TensorParallel: 1, PipelineParallel: 1},
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

// Each bitsandbytes optimizer is sized by its own states: one-state
// classes (Lion, SGD with momentum, RMSprop, Adagrad, LARS) keep one fp32
// state or one byte, two-state classes two, paged ones page; a class whose
// states the memory model does not know (AdEMAMix's three) is unsized,
// not sized as 32-bit Adam.
func TestBitsandbytesOptimizers(t *testing.T) {
	torchtune := func(class string) string {
		return "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 2\ndtype: bf16\noptimizer:\n  _component_: bitsandbytes.optim." + class + "\n"
	}
	trainer := func(optim string) string {
		return "model_name_or_path: m\nper_device_train_batch_size: 1\nbf16: true\noptim: " + optim + "\n"
	}
	type opt struct {
		o            tuner.Optimizer
		paged, fp32s bool
	}
	tests := []struct {
		name, recipe string
		want         opt
		ok           bool
	}{
		{"Lion", torchtune("Lion"), opt{o: tuner.SGD, fp32s: true}, true},
		{"Lion32bit", torchtune("Lion32bit"), opt{o: tuner.SGD, fp32s: true}, true},
		{"Lion8bit", torchtune("Lion8bit"), opt{o: tuner.OneState8bit}, true},
		{"PagedLion8bit", torchtune("PagedLion8bit"), opt{o: tuner.OneState8bit, paged: true}, true},
		{"SGD8bit", torchtune("SGD8bit"), opt{o: tuner.OneState8bit}, true},
		{"SGD", torchtune("SGD"), opt{o: tuner.SGD, fp32s: true}, true},
		{"RMSprop8bit", torchtune("RMSprop8bit"), opt{o: tuner.OneState8bit}, true},
		{"Adagrad32bit", torchtune("Adagrad32bit"), opt{o: tuner.SGD, fp32s: true}, true},
		{"LAMB8bit", torchtune("LAMB8bit"), opt{o: tuner.Adam8bit}, true},
		{"PagedAdamW", torchtune("PagedAdamW"), opt{paged: true, fp32s: true}, true},
		{"Adam8bit", torchtune("Adam8bit"), opt{o: tuner.Adam8bit}, true},
		{"AdEMAMix8bit is unsized", torchtune("AdEMAMix8bit"), opt{}, false},
		{"PagedAdEMAMix is unsized", torchtune("PagedAdEMAMix"), opt{}, false},
		{"Trainer lion_8bit", trainer("lion_8bit"), opt{o: tuner.OneState8bit}, true},
		{"Trainer paged_lion_32bit", trainer("paged_lion_32bit"), opt{o: tuner.SGD, paged: true, fp32s: true}, true},
		{"Trainer rmsprop_bnb_8bit", trainer("rmsprop_bnb_8bit"), opt{o: tuner.OneState8bit}, true},
		{"Trainer rmsprop_bnb", trainer("rmsprop_bnb"), opt{o: tuner.SGD, fp32s: true}, true},
		{"Trainer paged_adamw_32bit", trainer("paged_adamw_32bit"), opt{paged: true, fp32s: true}, true},
		{"Trainer adamw_bnb_8bit", trainer("adamw_bnb_8bit"), opt{o: tuner.Adam8bit}, true},
		{"Trainer paged_ademamix_8bit is unsized", trainer("paged_ademamix_8bit"), opt{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := recipe.Workload(recipeWorkload(t, tc.recipe), 1)
			if ok != tc.ok {
				t.Fatalf("sized = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if g := (opt{got.Optimizer, got.PagedOptimizer, got.FP32OptimizerStates}); g != tc.want {
				t.Errorf("optimizer %+v, want %+v", g, tc.want)
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

// Each family's own Liger switch reaches the fused loss: LLaMA-Factory's
// enable_liger_kernel in the stages that keep Liger's defaults (sft, the
// default, and pt; not the preference stages, which need the logits),
// axolotl's liger_fused_linear_cross_entropy under its Liger plugin, and
// axolotl's Cut Cross Entropy plugin (on by default) for any model type.
func TestFusedLossOfEachFamily(t *testing.T) {
	const lmf = "model_name_or_path: m\nfinetuning_type: full\nbf16: true\nenable_liger_kernel: true\n"
	const axo = "base_model: m\nbf16: true\n"
	const plugin = "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
	const cce = "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
	tests := []struct {
		name, recipe string
		fused        bool
	}{
		{"LLaMA-Factory sft by default", lmf, true},
		{"LLaMA-Factory pt", lmf + "stage: pt\n", true},
		{"LLaMA-Factory dpo keeps the logits", lmf + "stage: dpo\n", false},
		{"LLaMA-Factory without Liger", "model_name_or_path: m\nfinetuning_type: full\nbf16: true\n", false},
		{"LLaMA-Factory's key in a Trainer recipe", "model_name_or_path: m\nbf16: true\nenable_liger_kernel: true\n", false},
		{"axolotl plugin with the fused loss", axo + plugin + "liger_fused_linear_cross_entropy: true\n", true},
		{"axolotl plugin with the plain Liger cross-entropy", axo + plugin + "liger_cross_entropy: true\nliger_rms_norm: true\n", false},
		{"axolotl fused loss without the plugin", axo + "liger_fused_linear_cross_entropy: true\n", false},
		{"axolotl's Trainer switch is not read", axo + "use_liger_kernel: true\n", false},
		{"axolotl Cut Cross Entropy plugin", axo + cce, true},
		{"axolotl Cut Cross Entropy turned off", axo + cce + "cut_cross_entropy: false\n", false},
		{"axolotl cut_cross_entropy without the plugin", axo + "cut_cross_entropy: true\n", false},
	}
	qwen := &tuner.Model{ModelType: "qwen2"}
	for _, tt := range tests {
		if got := recipe.FusedLoss(recipeWorkload(t, tt.recipe), qwen); got != tt.fused {
			t.Errorf("%s: fused loss %v, want %v", tt.name, got, tt.fused)
		}
	}
}

// A recipe's FSDP version reaches the memory model's sharding: Trainer
// fsdp_config's fsdp_version or version (transformers strips the fsdp_
// prefix), axolotl's top-level fsdp_version; under FSDP2 the recipe's
// reshard_after_forward false is SHARD_GRAD_OP. Unstated, it stays FSDP1.
func TestFSDPVersionOfRecipe(t *testing.T) {
	const sft = "model_name_or_path: m\nbf16: true\nper_device_train_batch_size: 1\nfsdp: full_shard auto_wrap\n"
	const axo = "base_model: m\nbf16: true\nfsdp_config:\n  offload_params: false\n"
	tests := []struct {
		name, recipe string
		sharding     tuner.Sharding
		stage        int
	}{
		{"Trainer without a version", sft, tuner.FSDP1, 3},
		{"Trainer fsdp_config.fsdp_version 2", sft + "fsdp_config:\n  fsdp_version: 2\n", tuner.FSDP2, 3},
		{"Trainer fsdp_config.version 2", sft + "fsdp_config:\n  version: 2\n", tuner.FSDP2, 3},
		{"Trainer FSDP2 without resharding", sft + "fsdp_config:\n  version: 2\n  reshard_after_forward: false\n", tuner.FSDP2, 2},
		{"Trainer FSDP1 strategy in reshard_after_forward", sft + "fsdp_config:\n  fsdp_reshard_after_forward: SHARD_GRAD_OP\n", tuner.FSDP1, 2},
		{"axolotl top-level fsdp_version 2", axo + "fsdp_version: 2\n", tuner.FSDP2, 3},
		{"axolotl version 2 inside fsdp_config", "base_model: m\nbf16: true\nfsdp_config:\n  fsdp_version: 2\n  reshard_after_forward: false\nfsdp: [full_shard]\n", tuner.FSDP2, 2},
	}
	for _, tt := range tests {
		tw, ok := recipe.Workload(recipeWorkload(t, tt.recipe), 8)
		if !ok || tw.Sharding != tt.sharding || tw.ZeroStage != tt.stage {
			t.Errorf("%s: %s stage %d (ok %v), want %s stage %d", tt.name, tw.Sharding, tw.ZeroStage, ok, tt.sharding, tt.stage)
		}
	}
}

// A Trainer-family recipe that enables neither bf16 nor fp16 trains in
// the mixed precision its launch's Accelerate config exports; its own
// flag, or a tool that does not build TrainingArguments, keeps its own.
func TestMergeLaunchPrecision(t *testing.T) {
	launched := func(mp string) *normalize.Workload {
		return normalize.Accelerate(map[string]any{"distributed_type": "MULTI_GPU", "mixed_precision": mp, "num_processes": int64(8)})
	}
	tests := []struct {
		name, recipe, launch, want string
	}{
		{"no flags: the launch's bf16", "model_name_or_path: m\n", "bf16", "bf16"},
		{"bf16 false only leaves the launch's value", "model_name_or_path: m\nbf16: false\n", "fp16", "fp16"},
		{"the recipe's own fp16 wins", "model_name_or_path: m\nfp16: true\n", "bf16", ""},
		{"a launch without mixed precision", "model_name_or_path: m\n", "no", ""},
		{"LLaMA-Factory builds TrainingArguments too", "model_name_or_path: m\nfinetuning_type: lora\n", "bf16", "bf16"},
		{"torchtune has its own dtype", "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: fp32\n", "bf16", ""},
	}
	for _, tt := range tests {
		w := recipeWorkload(t, tt.recipe)
		before, _ := w.Get("precision")
		got := recipe.MergeLaunchPrecision(w, launched(tt.launch))
		after, _ := w.Get("precision")
		if got != tt.want || (tt.want != "" && after != tt.want) || (tt.want == "" && after != before) {
			t.Errorf("%s: took %q, precision %v -> %v; want %q", tt.name, got, before, after, tt.want)
		}
	}
}

// TestOptimizerStandIn: an optimizer the memory model has no regime for is
// named with what it is sized as; one it sizes itself is not.
func TestOptimizerStandIn(t *testing.T) {
	tests := []struct{ name, want string }{
		{"galore_adamw", "sized as AdamW: the memory model has no regime for galore_adamw's states"},
		{"galore_adamw_8bit", "sized as 8-bit Adam: the memory model has no regime for galore_adamw_8bit's states"},
		{"galore_adafactor", "sized as Adafactor: the memory model has no regime for galore_adafactor's states"},
		{"lomo", "sized as AdamW: the memory model has no regime for lomo's states"},
		{"adamw_torch_fused", ""},
		{"paged_adamw_8bit", ""},
		{"adafactor", ""},
		{"torch.optim.adamw", ""},
		// bitsandbytes' Lion and RMSprop are sized by their own states.
		{"lion_8bit", ""},
		{"bitsandbytes.optim.lion", ""},
		{"rmsprop_bnb_32bit", ""},
		{"rmsprop", "sized as AdamW: the memory model has no regime for rmsprop's states"},
	}
	for _, tc := range tests {
		if got := recipe.OptimizerStandIn(tc.name); got != tc.want {
			t.Errorf("OptimizerStandIn(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A multi-GPU full fine-tune whose recipe and comment name no sharding is
// estimated under each sharding its launcher may give it; any stated
// sharding, one GPU or an adapter run leaves nothing open.
func TestShardingAlternatives(t *testing.T) {
	const sft = "model_name_or_path: m\nbf16: true\ntorch_dtype: bfloat16\nper_device_train_batch_size: 2\n"
	alts, ok := recipe.ShardingAlternatives(recipeWorkload(t, sft), 8, nil, "", recipe.Sharding{})
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
		if _, ok := recipe.ShardingAlternatives(recipeWorkload(t, tc.recipe), tc.gpus, nil, "", tc.assumed); ok {
			t.Errorf("%s: alternatives offered, want none", tc.name)
		}
	}
}

// TestAlternativesKeepCheckpointingUnderOffloading: torchtune refuses
// activation offloading without checkpointing, so a recipe that offloads
// gets no run without checkpointing to compare against (which
// checkpointing-unneeded would advise).
func TestAlternativesKeepCheckpointingUnderOffloading(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := c.Model("meta-llama/Llama-3.1-8B")
	if !ok {
		t.Fatal("no Llama-3.1-8B in the catalog")
	}
	g, ok := c.GPU("H100-80GB")
	if !ok {
		t.Fatal("no H100-80GB in the catalog")
	}
	tw := tuner.Workload{Kind: tuner.LoRA, MicroBatch: 1, SeqLen: 1024, Checkpointing: true}
	if _, ok := recipe.Alternatives(m, g.Target(), tw, 0.1)["no_checkpointing"]; !ok {
		t.Fatal("test premise: no no_checkpointing alternative without offloading")
	}
	tw.ActivationOffloading = true
	if alt, ok := recipe.Alternatives(m, g.Target(), tw, 0.1)["no_checkpointing"]; ok {
		t.Errorf("no_checkpointing alternative %v offered while activations are offloaded", alt)
	}
}

// ppoRecipe is a torchtune PPO recipe (the shape of
// recipes/configs/mistral/7B_full_ppo_low_memory.yaml) with the value
// model's base builder and the GPU-relevant keys as parameters.
func ppoRecipe(valueBase, extra string) string {
	return `tokenizer:
  _component_: torchtune.models.qwen2_5.qwen2_5_tokenizer
  max_seq_len: 512
policy_model:
  _component_: torchtune.models.qwen2_5.qwen2_5_0_5b
reward_and_value_model:
  _component_: torchtune.modules.classifier_model
  base_model_path: ` + valueBase + `
  num_classes: 1
batch_size: 64
ppo_batch_size: 32
forward_batch_size: 16
max_generated_tokens: 58
enable_kv_cache: True
enable_activation_checkpointing: True
optimizer:
  _component_: bitsandbytes.optim.PagedAdamW
optimizer_in_bwd: True
dtype: bf16
` + extra
}

func TestPPOWorkload(t *testing.T) {
	same := "torchtune.models.qwen2_5.qwen2_5_0_5b"
	tests := []struct {
		name   string
		recipe string
		gpus   int
		want   tuner.Workload
		ok     bool
	}{
		{
			name:   "policy and value model of one architecture",
			recipe: ppoRecipe(same, "gradient_accumulation_steps: 1\n"),
			gpus:   1,
			want: tuner.Workload{Kind: tuner.PPO, Precision: tuner.PureBF16, PagedOptimizer: true, FP32OptimizerStates: true, OptimizerInBackward: true,
				MicroBatch: 32, SeqLen: 512 + 58, Checkpointing: true,
				PPO: tuner.PPOShape{ValueClasses: 1, GeneratedTokens: 58, ForwardBatch: 16, KVCache: true}},
			ok: true,
		},
		{
			name:   "the backward batch is ppo_batch_size over the accumulation",
			recipe: ppoRecipe(same, "gradient_accumulation_steps: 4\n"),
			want: tuner.Workload{Kind: tuner.PPO, Precision: tuner.PureBF16, PagedOptimizer: true, FP32OptimizerStates: true, OptimizerInBackward: true,
				MicroBatch: 8, SeqLen: 512 + 58, Checkpointing: true,
				PPO: tuner.PPOShape{ValueClasses: 1, GeneratedTokens: 58, ForwardBatch: 16, KVCache: true}},
			ok: true,
		},
		{
			name:   "a value model of another architecture is not sized from the policy's",
			recipe: ppoRecipe("torchtune.models.qwen2_5.qwen2_5_1_5b", ""),
			ok:     false,
		},
		{
			name:   "a value model of an unknown builder",
			recipe: ppoRecipe("torchtune.models.gemma.gemma_2b", ""),
			ok:     false,
		},
		{
			name:   "the single-device recipe on several GPUs",
			recipe: ppoRecipe(same, ""),
			gpus:   2,
			ok:     false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := recipe.Workload(recipeWorkload(t, tc.recipe), tc.gpus)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("workload (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestAlternativesNoBF16BaseForQuantizedCheckpoint: QLoRA on a base whose
// checkpoint is stored quantized (here a bitsandbytes re-pack mapped by
// name) gets no 16-bit-base alternative, so quantized-base-on-large-gpu
// never advises loading a 16-bit base the checkpoint does not hold.
func TestAlternativesNoBF16BaseForQuantizedCheckpoint(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	g, ok := c.GPU("H100-80GB")
	if !ok {
		t.Fatal("no H100-80GB in the catalog")
	}
	tw := tuner.Workload{Kind: tuner.QLoRA, MicroBatch: 1, SeqLen: 1024, Checkpointing: true}
	plain, ok := c.Model("meta-llama/Llama-3.1-8B")
	if !ok {
		t.Fatal("no Llama-3.1-8B in the catalog")
	}
	if _, ok := recipe.Alternatives(plain, g.Target(), tw, 0.1)["bf16_base"]; !ok {
		t.Fatal("test premise: no bf16_base alternative for an unquantized checkpoint")
	}
	quant, _, ok := c.ModelByName("unsloth/llama-3.1-8b-bnb-4bit")
	if !ok || quant.Quant == nil {
		t.Fatalf("test premise: unsloth/llama-3.1-8b-bnb-4bit maps to %+v, %v", quant, ok)
	}
	if alt, ok := recipe.Alternatives(quant, g.Target(), tw, 0.1)["bf16_base"]; ok {
		t.Errorf("bf16_base alternative %v offered for a checkpoint stored in 4 bits", alt)
	}
}
