package gpulint.rules.gpu005_test

import data.gpulint.rules.gpu005

t4 := {"name": "T4", "vendor": "nvidia", "bf16": false, "fp8": false, "fp4": false, "cc": "7.5", "cc_major": 7, "cc_minor": 5}

v100 := {"name": "V100-16GB", "vendor": "nvidia", "bf16": false, "fp8": false, "fp4": false, "cc": "7.0", "cc_major": 7, "cc_minor": 0}

a100 := {"name": "A100-80GB", "vendor": "nvidia", "bf16": true, "fp8": false, "fp4": false, "cc": "8.0", "cc_major": 8, "cc_minor": 0}

h100 := {"name": "H100-80GB", "vendor": "nvidia", "bf16": true, "fp8": true, "fp4": false, "cc": "9.0", "cc_major": 9, "cc_minor": 0}

b200 := {"name": "B200", "vendor": "nvidia", "bf16": true, "fp8": true, "fp4": true, "cc": "10.0", "cc_major": 10, "cc_minor": 0}

mi250 := {"name": "MI250X", "vendor": "amd", "bf16": true, "fp8": false, "fp4": false, "cc": "0.0", "cc_major": 0, "cc_minor": 0}

test_deepspeed_bf16_on_t4_swaps_to_fp16 if {
	fs := gpu005.findings with input as {
		"kind": "deepspeed", "doc": {"bf16": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {"precision": ["bf16", "enabled"]},
		"target": {"gpu": t4},
	}
	count(fs) == 1
	some f in fs
	f.path == ["bf16", "enabled"]
	f.patch == [{"op": "set", "path": ["bf16", "enabled"], "value": false}, {"op": "set", "path": ["fp16", "enabled"], "value": true}]
	contains(f.message, "bf16.enabled is true but T4 has no BF16 (compute capability 7.5")
	not f.level
}

test_deepspeed_legacy_bfloat16_block if {
	some f in gpu005.findings with input as {
		"kind": "deepspeed", "doc": {"bfloat16": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {"precision": ["bfloat16", "enabled"]},
		"target": {"gpu": v100},
	}
	f.patch[0].path == ["bfloat16", "enabled"]
}

test_deepspeed_autocast_bf16_has_no_patch if {
	some f in gpu005.findings with input as {
		"kind": "deepspeed", "doc": {"torch_autocast": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {"precision": ["torch_autocast", "enabled"]},
		"target": {"gpu": t4},
	}
	not f.patch
	contains(f.message, "torch_autocast")
}

test_deepspeed_bf16_on_a100_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"bf16": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {}, "target": {"gpu": a100},
	}
}

test_bf16_without_gpu_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"bf16": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {}, "target": {},
	}
}

test_accelerate_bf16_on_v100 if {
	some f in gpu005.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "bf16"},
		"workload": {"precision": "bf16", "device": "gpu"}, "paths": {"precision": ["mixed_precision"]},
		"target": {"gpu": v100},
	}
	f.patch == [{"op": "set", "path": ["mixed_precision"], "value": "fp16"}]
}

test_accelerate_fp8_on_a100_falls_back_to_bf16 if {
	some f in gpu005.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "fp8"},
		"workload": {"precision": "fp8", "device": "gpu"}, "paths": {"precision": ["mixed_precision"]},
		"target": {"gpu": a100},
	}
	f.patch == [{"op": "set", "path": ["mixed_precision"], "value": "bf16"}]
	contains(f.message, "compute capability 8.0")
}

test_accelerate_fp8_on_h100_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "fp8"},
		"workload": {"precision": "fp8", "device": "gpu"}, "paths": {}, "target": {"gpu": h100},
	}
}

test_vllm_bfloat16_on_t4_sets_half if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"dtype": "bfloat16"},
		"workload": {"precision": "bf16"}, "paths": {}, "target": {"gpu": t4, "model": {"model_type": "llama"}},
	}
	f.patch == [{"op": "set", "path": ["dtype"], "value": "half"}]
}

test_vllm_gemma2_on_t4_sets_float32 if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"dtype": "bfloat16"},
		"workload": {"precision": "bf16"}, "paths": {}, "target": {"gpu": t4, "model": {"model_type": "gemma2"}},
	}
	f.patch == [{"op": "set", "path": ["dtype"], "value": "float32"}]
}

test_vllm_fp8_on_a100_is_warning if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"quantization": "fp8"},
		"workload": {"precision": "auto", "serve": {"quantization": "fp8"}},
		"paths": {"serve.quantization": ["quantization"]}, "target": {"gpu": a100},
	}
	f.level == "warning"
	contains(f.message, "weight-only")
}

test_vllm_fp8_on_v100_is_error if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"quantization": "fp8"},
		"workload": {"precision": "auto", "serve": {"quantization": "fp8"}},
		"paths": {}, "target": {"gpu": v100},
	}
	not f.level
}

test_vllm_nvfp4_on_h100 if {
	fs := gpu005.findings with input as {
		"kind": "vllm", "doc": {},
		"workload": {"precision": "auto", "serve": {"quantization": "modelopt_fp4", "kv_cache_dtype": "nvfp4"}},
		"paths": {}, "target": {"gpu": h100},
	}
	count(fs) == 2
}

test_vllm_nvfp4_on_b200_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {},
		"workload": {"precision": "auto", "serve": {"quantization": "modelopt_fp4", "kv_cache_dtype": "nvfp4"}},
		"paths": {}, "target": {"gpu": b200},
	}
}

test_vllm_mxfp4_on_hopper_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {}, "workload": {"precision": "auto", "serve": {"quantization": "mxfp4"}},
		"paths": {}, "target": {"gpu": h100},
	}
}

test_vllm_fp8_kv_cache_on_t4_is_warning if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {}, "workload": {"precision": "auto", "serve": {"kv_cache_dtype": "fp8_e5m2"}},
		"paths": {}, "target": {"gpu": t4},
	}
	f.level == "warning"
}

test_vllm_fp8_kv_cache_on_a100_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {}, "workload": {"precision": "auto", "serve": {"kv_cache_dtype": "fp8"}},
		"paths": {}, "target": {"gpu": a100},
	}
}

test_amd_is_left_out if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {}, "workload": {"precision": "auto", "serve": {"quantization": "fp8"}},
		"paths": {}, "target": {"gpu": mi250},
	}
}

test_awq_with_bfloat16_sets_half if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"dtype": "bfloat16", "quantization": "awq"},
		"workload": {"precision": "bf16", "serve": {"quantization": "awq"}},
		"paths": {"serve.quantization": ["quantization"]}, "target": {},
	}
	f.path == ["quantization"]
	f.patch == [{"op": "set", "path": ["dtype"], "value": "half"}]
	contains(f.message, "torch.bfloat16 is not supported for quantization method awq")
}

test_awq_with_auto_and_bf16_checkpoint if {
	some f in gpu005.findings with input as {
		"kind": "vllm", "doc": {"quantization": "gptq"},
		"workload": {"precision": "auto", "serve": {"quantization": "gptq"}},
		"paths": {}, "target": {"model": {"dtype": "bfloat16"}},
	}
	contains(f.message, "dtype auto resolves to the checkpoint's bfloat16")
}

test_awq_marlin_with_bfloat16_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {"dtype": "bfloat16", "quantization": "awq_marlin"},
		"workload": {"precision": "bf16", "serve": {"quantization": "awq_marlin"}}, "paths": {}, "target": {},
	}
}

test_awq_with_half_quiet if {
	count(gpu005.findings) == 0 with input as {
		"kind": "vllm", "doc": {"dtype": "half", "quantization": "awq"},
		"workload": {"precision": "fp16", "serve": {"quantization": "awq"}}, "paths": {}, "target": {},
	}
}

recipe_bf16(recipe, doc, at) := {
	"kind": "finetune", "doc": doc, "params": {},
	"workload": {"recipe": recipe, "precision": "bf16"}, "paths": {"precision": at},
	"target": {"gpu": v100},
}

test_recipe_bf16_flag_switches_to_fp16 if {
	some f in gpu005.findings with input as recipe_bf16("trainer", {"bf16": true}, ["bf16"])
	f.patch == [{"op": "set", "path": ["bf16"], "value": false}, {"op": "set", "path": ["fp16"], "value": true}]
}

test_recipe_torch_dtype if {
	some f in gpu005.findings with input as recipe_bf16("trainer", {"torch_dtype": "bfloat16"}, ["torch_dtype"])
	f.patch == [{"op": "set", "path": ["torch_dtype"], "value": "float16"}]
}

test_torchtune_goes_to_fp32 if {
	some f in gpu005.findings with input as recipe_bf16("torchtune", {"dtype": "bf16"}, ["dtype"])
	f.patch == [{"op": "set", "path": ["dtype"], "value": "fp32"}]
}

test_neox_bf16_block if {
	some f in gpu005.findings with input as recipe_bf16("gpt-neox", {"bf16": {"enabled": true}}, ["bf16", "enabled"])
	f.patch == [{"op": "set", "path": ["bf16", "enabled"], "value": false}, {"op": "set", "path": ["fp16", "enabled"], "value": true}]
}

test_neox_precision_key if {
	some f in gpu005.findings with input as recipe_bf16("gpt-neox", {"precision": "bfloat16"}, ["precision"])
	f.patch == [{"op": "set", "path": ["precision"], "value": "fp16"}]
}

test_recipe_auto_quiet if {
	count(gpu005.findings) == 0 with input as object.union(recipe_bf16("axolotl", {"bf16": "auto"}, ["bf16"]), {"workload": {"recipe": "axolotl", "precision": "auto"}})
}
