# METADATA
# title: Precision the target GPU cannot run
# custom:
#   id: GPU005
#   slug: precision-unsupported
#   severity: error
#   levels: [error, warning, info]
#   rationale: >-
#     BF16 needs compute capability 8.0: on V100 and T4 it is emulated, and
#     neither DeepSpeed, Accelerate nor transformers stops it, because
#     torch.cuda.is_bf16_supported() returns True through emulation - the
#     job runs several times slower or fails in a kernel with "not
#     implemented for 'BFloat16'" (precision.md §4, deepspeed.md §3.4).
#     FP8 compute needs compute capability 8.9 (Ada, Hopper): Accelerate
#     mixed_precision fp8 has no tensor cores to run on, and vLLM
#     --quantization fp8 falls back to weight-only FP8 on newer versions
#     and fails on older ones (vllm.md §4). FP4 (NVFP4, MXFP4) needs
#     Blackwell (10.0). An FP8 KV cache below 8.0 depends on a backend that
#     may not support it (vllm.md §5). Forcing --quantization awq or gptq
#     with bfloat16 stops vLLM at start-up with "torch.bfloat16 is not
#     supported for quantization method awq" (precision.md §3.4).
#   remediation: >-
#     Use FP16 on GPUs before compute capability 8.0 (DeepSpeed
#     "fp16": {"enabled": true}, Accelerate mixed_precision: fp16, vLLM
#     dtype: half); use bf16 instead of fp8 before 8.9; use a BF16 or
#     INT4 checkpoint instead of FP4 before Blackwell; run awq/gptq with
#     dtype half, or drop --quantization so vLLM picks the Marlin kernel,
#     which accepts bf16. Fine-tuning recipes: bf16: false and fp16: true
#     (torchtune dtype: fp32, gpt-neox precision: fp16).
#   kinds: [deepspeed, accelerate, vllm, finetune]
#   inputs: [gpu]
#   since: 0.1.0
#   fixable: false
#   example: |
#     {"train_micro_batch_size_per_gpu": 8, "bf16": {"enabled": true}}
#     # with gpu: T4
package gpulint.rules.gpu005

import data.gpulint.lib

# The NVIDIA capability checks; AMD GPUs report no compute capability and
# are left out.
gpu := input.target.gpu

cc := sprintf("compute capability %s", [gpu.cc])

emulated := "DeepSpeed, Accelerate and transformers do not stop this: torch.cuda.is_bf16_supported() returns True through emulation, so training runs several times slower or fails with \"not implemented for 'BFloat16'\""

# BF16 before compute capability 8.0 ------------------------------------

no_bf16 if {
	lib.gpu_known
	gpu.vendor == "nvidia"
	gpu.bf16 == false
}

# DeepSpeed: bf16.enabled (or the legacy bfloat16 block).
findings contains f if {
	input.kind == "deepspeed"
	no_bf16
	input.workload.precision == "bf16"
	block := ds_bf16_block
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("%s.enabled is true but %s has no BF16 (%s; BF16 needs 8.0); %s", [block, lib.gpu_name, cc, emulated])),
		sprintf("set %s.enabled to false and fp16.enabled to true", [block]),
		[lib.set_op([block, "enabled"], false), lib.set_op(["fp16", "enabled"], true)],
	)
}

ds_bf16_block := "bf16" if input.doc.bf16.enabled

ds_bf16_block := "bfloat16" if {
	not input.doc.bf16.enabled
	input.doc.bfloat16.enabled
}

# DeepSpeed through torch_autocast: no patch (the dtype choice is the
# user's model code's).
findings contains f if {
	input.kind == "deepspeed"
	no_bf16
	input.workload.precision == "bf16"
	not ds_bf16_block
	f := lib.finding(lib.where("precision"), sprintf("torch_autocast runs in bfloat16 but %s has no BF16 (%s; BF16 needs 8.0); %s", [lib.gpu_name, cc, emulated]))
}

# Accelerate: mixed_precision bf16.
findings contains f if {
	input.kind == "accelerate"
	input.workload.device == "gpu"
	no_bf16
	input.workload.precision == "bf16"
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("mixed_precision is bf16 but %s has no BF16 (%s; BF16 needs 8.0); %s", [lib.gpu_name, cc, emulated])),
		"set mixed_precision to fp16",
		[lib.set_op(["mixed_precision"], "fp16")],
	)
}

# Fine-tuning recipes: bf16 (axolotl's bf16: auto picks fp16 itself).
findings contains f if {
	input.kind == "finetune"
	no_bf16
	input.workload.precision == "bf16"
	f := recipe_fixed(lib.finding(lib.where("precision"), sprintf("the recipe trains in bf16 but %s has no BF16 (%s; BF16 needs 8.0); %s", [lib.gpu_name, cc, emulated])))
}

recipe_fixed(f) := lib.with_fix(f, recipe_bf16_fix.msg, recipe_bf16_fix.ops) if {
	recipe_bf16_fix
} else := f

# The fix follows the key that made the recipe bf16.
recipe_bf16_fix := {"msg": "set dtype to fp32", "ops": [lib.set_op(["dtype"], "fp32")]} if {
	input.workload.recipe == "torchtune" # bf16 or fp32 only
} else := {"msg": "set torch_dtype to float16", "ops": [lib.set_op(["torch_dtype"], "float16")]} if {
	lib.where("precision") == ["torch_dtype"]
} else := {"msg": "set precision to fp16", "ops": [lib.set_op(["precision"], "fp16")]} if {
	lib.where("precision") == ["precision"]
} else := {"msg": sprintf("set %s to false and fp16.enabled to true", [concat(".", p)]), "ops": [lib.set_op(p, false), lib.set_op(["fp16", "enabled"], true)]} if {
	p := lib.where("precision")
	count(p) == 2
} else := {"msg": sprintf("set %s to false and fp16 to true", [p[0]]), "ops": [lib.set_op(p, false), lib.set_op(["fp16"], true)]} if {
	p := lib.where("precision")
	count(p) == 1
}

# vLLM: dtype bfloat16. gemma2/3, glm4 and plamo2 reject float16 in vLLM
# ("numerical instability", vllm.md §2), so for them the only choice on
# these GPUs is float32.
no_fp16_models := {"gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"}

vllm_half := "float32" if {
	no_fp16_models[input.target.model.model_type]
} else := "half"

findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	no_bf16
	input.workload.precision == "bf16"
	f := lib.with_fix(
		lib.finding(["dtype"], sprintf("dtype is %v but %s has no BF16 (%s; BF16 needs 8.0): older vLLM refuses to start (\"Bfloat16 is only supported on GPUs with compute capability of at least 8.0\"), newer versions fall back with a warning", [input.doc.dtype, lib.gpu_name, cc])),
		sprintf("set dtype to %s", [vllm_half]),
		[lib.set_op(["dtype"], vllm_half)],
	)
}

# FP8 compute before 8.9 ------------------------------------------------

no_fp8 if {
	lib.gpu_known
	gpu.vendor == "nvidia"
	gpu.fp8 == false
}

findings contains f if {
	input.kind == "accelerate"
	input.workload.device == "gpu"
	no_fp8
	input.workload.precision == "fp8"
	want := {true: "bf16", false: "fp16"}[gpu.bf16]
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("mixed_precision is fp8 but %s has no FP8 tensor cores (%s; FP8 needs 8.9 or 9.0+): Transformer Engine and torchao FP8 cannot run there", [lib.gpu_name, cc])),
		sprintf("set mixed_precision to %s", [want]),
		[lib.set_op(["mixed_precision"], want)],
	)
}

fp8_methods := {"fp8", "fbgemm_fp8", "ptpc_fp8"}

# Newest vLLM runs FP8 checkpoints weight-only (Marlin) from 7.5/8.0
# (vllm.md §4): a warning there, an error on older GPUs.
findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	no_fp8
	q := input.workload.serve.quantization
	fp8_methods[q]
	fallback := gpu.cc_major * 10 + gpu.cc_minor >= 75
	msg := sprintf("quantization %s needs FP8 tensor cores (compute capability 8.9 or 9.0+) but %s has %s: %s", [q, lib.gpu_name, cc, fp8_consequence(fallback)])
	f := level(lib.finding(lib.where("serve.quantization"), msg), fallback)
}

fp8_consequence(true) := "newer vLLM falls back to weight-only FP8 (Marlin kernels, no FP8 compute speed-up), older versions refuse to start"

fp8_consequence(false) := "vLLM has no FP8 kernel for it and refuses to start"

level(f, true) := lib.with_level(f, "warning")

level(f, false) := f

# FP4 before Blackwell ---------------------------------------------------

no_fp4 if {
	lib.gpu_known
	gpu.vendor == "nvidia"
	gpu.fp4 == false
}

findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	no_fp4
	q := input.workload.serve.quantization
	q in {"modelopt_fp4", "nvfp4"}
	f := lib.with_level(lib.finding(lib.where("serve.quantization"), sprintf("quantization %s is NVFP4, which needs FP4 tensor cores (Blackwell, compute capability 10.0+) but %s has %s: newer vLLM emulates it weight-only at a fraction of the speed, older versions refuse to start", [q, lib.gpu_name, cc])), "warning")
}

# MXFP4 (gpt-oss) has fallback kernels on Hopper (precision.md §4); before
# Hopper support is unverified.
findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	no_fp4
	input.workload.serve.quantization == "mxfp4"
	gpu.cc_major < 9
	f := lib.with_level(lib.finding(lib.where("serve.quantization"), sprintf("quantization mxfp4 needs FP4 tensor cores (compute capability 10.0+) for native speed and has fallback kernels only from Hopper (9.0); %s has %s", [lib.gpu_name, cc])), "warning")
}

findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	no_fp4
	kv := input.workload.serve.kv_cache_dtype
	startswith(kv, "nvfp4")
	f := lib.finding(lib.where("serve.kv_cache_dtype"), sprintf("kv-cache-dtype %s is an FP4 format that needs Blackwell (compute capability 10.0+) but %s has %s", [kv, lib.gpu_name, cc]))
}

# FP8 KV cache before 8.0 (vllm.md §5: warn) ----------------------------

findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	lib.gpu_known
	gpu.vendor == "nvidia"
	gpu.cc_major < 8
	kv := input.workload.serve.kv_cache_dtype
	startswith(kv, "fp8")
	f := lib.with_level(lib.finding(lib.where("serve.kv_cache_dtype"), sprintf("kv-cache-dtype %s on %s (%s): FP8 KV caches are converted in software before 8.0 and the attention backend vLLM picks there may not support them", [kv, lib.gpu_name, cc])), "warning")
}

# awq/gptq forced with bfloat16 -----------------------------------------

fp16_only := {"awq", "gptq", "gptq_marlin_24"}

# The dtype vLLM resolves: explicit, or the checkpoint's under auto.
vllm_bf16 := sprintf("dtype is %v", [input.doc.dtype]) if {
	input.workload.precision == "bf16"
} else := "dtype auto resolves to the checkpoint's bfloat16" if {
	input.workload.precision == "auto"
	input.target.model.dtype == "bfloat16"
}

findings contains f if {
	input.kind == "vllm"
	not lib.vllm_off_gpu
	lib.bf16 # before 8.0 the BF16 finding above already says it
	q := input.workload.serve.quantization
	fp16_only[q]
	why := vllm_bf16
	f := lib.with_fix(
		lib.finding(lib.where("serve.quantization"), sprintf("quantization %s accepts only float16 but %s: vLLM stops with \"torch.bfloat16 is not supported for quantization method %s. Supported dtypes: [torch.float16]\"", [q, why, q])),
		"set dtype to half",
		[lib.set_op(["dtype"], "half")],
	)
}
