# METADATA
# title: Full FP32 compute where BF16 would do
# custom:
#   id: GPU001
#   slug: fp32-where-bf16
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     FP32 compute skips the tensor cores' 16-bit paths: on Ampere and newer
#     GPUs BF16 runs matmuls several times faster, halves activation and
#     weight memory, and needs no loss scaling. DeepSpeed trains in FP32
#     when neither fp16 nor bf16 is enabled; accelerate launch uses 'no'
#     mixed precision when the config does not say; vLLM --dtype float32
#     doubles weight and KV-cache memory. The Hugging Face Trainer (and
#     axolotl, LLaMA-Factory, TRL on top of it) trains in FP32 unless bf16
#     or fp16 is set, torchtune in its dtype. On V100 and T4 (no BF16) FP16
#     is the 16-bit choice.
#   remediation: >-
#     Enable bf16 (fp16 on GPUs before compute capability 8.0):
#     DeepSpeed "bf16": {"enabled": true}; Accelerate mixed_precision: bf16;
#     vLLM dtype: bfloat16; fine-tuning recipes bf16: true (torchtune
#     dtype: bf16, gpt-neox precision: bfloat16).
#   kinds: [deepspeed, accelerate, vllm, finetune]
#   inputs: [model_dtype]
#   fix_needs: [gpu]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": false}}
package gpulint.rules.gpu001

import data.gpulint.lib

# fix_needs: [gpu]. With no GPU known the fix enables BF16 (lib.bf16 holds
# when no GPU is named), which a V100 or T4 (compute capability below 8.0)
# does not have: accelerate refuses it where torch reports no BF16
# (huggingface/accelerate src/accelerate/accelerator.py Accelerator.__init__
# and src/accelerate/commands/launch.py: "bf16 mixed precision requires
# PyTorch >= 1.10 and a supported device" unless is_bf16_available(True)),
# vLLM refuses dtype bfloat16 below 8.0, and where torch emulates BF16
# (is_bf16_supported(including_emulation=True), precision.md §4) kernels
# fail or crawl. The finding stays; the fix waits for the GPU.

want := "bf16" if lib.bf16

want := "fp16" if not lib.bf16

why := sprintf("%s supports BF16", [lib.gpu_name]) if {
	lib.gpu_known
	lib.bf16
}

why := sprintf("%s has no BF16 (compute capability below 8.0), so FP16 is the 16-bit choice", [lib.gpu_name]) if not lib.bf16

why := "any GPU since Ampere supports BF16 (use FP16 on V100 or T4)" if not lib.gpu_known

# Without mixed precision a run trains in the dtype its script loads the
# model in (from_pretrained's torch_dtype; DeepSpeed and Accelerate cast
# nothing when no fp16/bf16 is set: accelerate.md §3, deepspeed.md §3).
# A DeepSpeed or Accelerate file, or a Trainer recipe without torch_dtype,
# does not say which: the verdict rests on model_dtype, and is info until
# it is stated; stated 16-bit, the run is not FP32 at all.
loads_half if {
	lib.stated("model_dtype")
	input.target.inputs.model_dtype.value in {"bf16", "bfloat16", "fp16", "float16", "half", "auto"}
}

# claim says what the run does: full FP32 for certain when the load dtype
# is stated (or the tool decides it), else conditional on the script.
claim(who) := sprintf("%s trains in full FP32", [who]) if {
	lib.stated("model_dtype")
} else := sprintf("%s trains in full FP32", [who]) if {
	input.kind == "finetune"
	input.workload.recipe != "trainer"
} else := sprintf("%s trains in the dtype the script loads the model in, full FP32 unless it loads 16-bit weights", [who])

# DeepSpeed: neither fp16 nor bf16 enabled.
findings contains f if {
	input.kind == "deepspeed"
	input.workload.precision == "fp32"
	not loads_half
	block := ds_block
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("%s: neither fp16 nor bf16 is enabled; %s", [claim("DeepSpeed"), why])),
		sprintf("set %s.enabled to true", [block]),
		[lib.set_op([block, "enabled"], true)],
	)
}

ds_block := "bfloat16" if {
	want == "bf16"
	input.doc.bfloat16
	not input.doc.bf16
} else := "bf16" if {
	want == "bf16"
} else := "fp16"

# Accelerate: mixed_precision 'no' or absent, outside DeepSpeed-file mode.
findings contains f if {
	input.kind == "accelerate"
	input.workload.device == "gpu"
	input.workload.precision == "fp32"
	not input.workload.deepspeed_config_file
	not loads_half
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("%s: %s; %s", [claim("Accelerate"), acc_reason, why])),
		sprintf("set mixed_precision to %s", [want]),
		[lib.set_op(["mixed_precision"], want)],
	)
}

acc_reason := "mixed_precision is false (PyYAML reads an unquoted NO as false)" if {
	input.doc.mixed_precision == false
} else := sprintf("mixed_precision is '%v'", [input.doc.mixed_precision]) if {
	input.doc.mixed_precision
} else := "mixed_precision is not set, so accelerate launch uses 'no'"

# vLLM: --dtype float32 / float.
findings contains f if {
	input.kind == "vllm"
	input.workload.precision == "fp32"
	vdt := {"bf16": "bfloat16", "fp16": "half"}[want]
	f := lib.with_inputs(lib.with_fix(
		lib.finding(["dtype"], sprintf("vLLM serves in FP32 (dtype %v), doubling weight and KV-cache memory; %s", [input.doc.dtype, why])),
		sprintf("set dtype to %s", [vdt]),
		[lib.set_op(["dtype"], vdt)],
	), [])
}

# Fine-tuning recipes: the Trainer-based tools train in FP32 unless bf16 or
# fp16 is set; torchtune in its dtype; gpt-neox in FP32 unless precision or
# an fp16/bf16 block says otherwise.
findings contains f if {
	input.kind == "finetune"
	input.workload.precision == "fp32"
	not neox_fragment
	not loads_half
	fix := recipe_fix[input.workload.recipe][want]
	f := lib.with_inputs(lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("%s: %s; %s", [claim(tool[input.workload.recipe]), recipe_reason, why])),
		fix.msg, fix.ops,
	), recipe_inputs)
}

# Only a Trainer recipe leaves the load dtype to its script: axolotl and
# LLaMA-Factory load in the dtype their precision flags name (fp32 without
# them), torchtune and gpt-neox train in the dtype they state.
recipe_inputs := ["model_dtype"] if input.workload.recipe == "trainer"

default recipe_inputs := []

# gpt-neox merges several config files (model, precision, cluster setup);
# a file that says nothing about precision is one part of a run.
neox_fragment if {
	input.workload.recipe == "gpt-neox"
	lib.where("precision") == []
}

tool := {
	"trainer": "the Hugging Face Trainer", "axolotl": "axolotl", "llamafactory": "LLaMA-Factory",
	"torchtune": "torchtune", "gpt-neox": "gpt-neox",
}

recipe_reason := sprintf("dtype is %v", [input.doc.dtype]) if {
	input.workload.recipe == "torchtune"
	input.doc.dtype
} else := "dtype is not set" if {
	input.workload.recipe == "torchtune"
} else := sprintf("precision is %v", [input.doc.precision]) if {
	input.workload.recipe == "gpt-neox"
	input.doc.precision
} else := "neither bf16 nor fp16 is enabled"

hf_fix := {
	"bf16": {"msg": "set bf16 to true", "ops": [lib.set_op(["bf16"], true)]},
	"fp16": {"msg": "set fp16 to true", "ops": [lib.set_op(["fp16"], true)]},
}

# torchtune has no FP16 training (bf16 or fp32 only), so no finding there
# on GPUs without BF16.
recipe_fix := {
	"trainer": hf_fix, "axolotl": hf_fix, "llamafactory": hf_fix,
	"torchtune": {"bf16": {"msg": "set dtype to bf16", "ops": [lib.set_op(["dtype"], "bf16")]}},
	"gpt-neox": {
		"bf16": {"msg": "set precision to bfloat16", "ops": [lib.set_op(["precision"], "bfloat16")]},
		"fp16": {"msg": "set precision to fp16", "ops": [lib.set_op(["precision"], "fp16")]},
	},
}
