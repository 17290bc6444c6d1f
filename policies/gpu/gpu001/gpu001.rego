# METADATA
# title: Full FP32 compute where BF16 would do
# custom:
#   id: GPU001
#   slug: fp32-where-bf16
#   severity: warning
#   rationale: >-
#     FP32 compute skips the tensor cores' 16-bit paths: on Ampere and newer
#     GPUs BF16 runs matmuls several times faster, halves activation and
#     weight memory, and needs no loss scaling. DeepSpeed trains in FP32
#     when neither fp16 nor bf16 is enabled; accelerate launch uses 'no'
#     mixed precision when the config does not say; vLLM --dtype float32
#     doubles weight and KV-cache memory. On V100 and T4 (no BF16) FP16 is
#     the 16-bit choice.
#   remediation: >-
#     Enable bf16 (fp16 on GPUs before compute capability 8.0):
#     DeepSpeed "bf16": {"enabled": true}; Accelerate mixed_precision: bf16;
#     vLLM dtype: bfloat16.
#   kinds: [deepspeed, accelerate, vllm]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": false}}
package gpulint.rules.gpu001

import data.gpulint.lib

want := "bf16" if lib.bf16

want := "fp16" if not lib.bf16

why := sprintf("%s supports BF16", [lib.gpu_name]) if {
	lib.gpu_known
	lib.bf16
}

why := sprintf("%s has no BF16 (compute capability below 8.0), so FP16 is the 16-bit choice", [lib.gpu_name]) if not lib.bf16

why := "any GPU since Ampere supports BF16 (use FP16 on V100 or T4)" if not lib.gpu_known

# DeepSpeed: neither fp16 nor bf16 enabled.
findings contains f if {
	input.kind == "deepspeed"
	input.workload.precision == "fp32"
	block := ds_block
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("DeepSpeed trains in full FP32: neither fp16 nor bf16 is enabled; %s", [why])),
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
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("Accelerate runs in full FP32: %s; %s", [acc_reason, why])),
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
	f := lib.with_fix(
		lib.finding(["dtype"], sprintf("vLLM serves in FP32 (dtype %v), doubling weight and KV-cache memory; %s", [input.doc.dtype, why])),
		sprintf("set dtype to %s", [vdt]),
		[lib.set_op(["dtype"], vdt)],
	)
}
