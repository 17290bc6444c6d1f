package gpulint.rules.gpu001_test

import data.gpulint.rules.gpu001

h100 := {"name": "H100-80GB", "bf16": true}

t4 := {"name": "T4", "bf16": false}

test_deepspeed_fp32_fires_with_bf16_fix if {
	fs := gpu001.findings with input as {
		"kind": "deepspeed",
		"doc": {"fp16": {"enabled": false}},
		"workload": {"precision": "fp32"},
		"paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": h100},
	}
	count(fs) == 1
	some f in fs
	f.path == ["fp16", "enabled"]
	f.patch == [{"op": "set", "path": ["bf16", "enabled"], "value": true}]
	contains(f.message, "H100-80GB supports BF16")
}

test_deepspeed_fp32_on_t4_recommends_fp16 if {
	some f in gpu001.findings with input as {
		"kind": "deepspeed", "doc": {}, "workload": {"precision": "fp32"},
		"paths": {}, "target": {"gpu": t4},
	}
	f.patch == [{"op": "set", "path": ["fp16", "enabled"], "value": true}]
	f.path == []
}

test_deepspeed_bf16_quiet if {
	count(gpu001.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"bf16": {"enabled": true}},
		"workload": {"precision": "bf16"}, "paths": {}, "target": {"gpu": h100},
	}
}

test_accelerate_no_fires if {
	some f in gpu001.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "no"},
		"workload": {"precision": "fp32", "device": "gpu"},
		"paths": {"precision": ["mixed_precision"]}, "target": {},
	}
	f.patch == [{"op": "set", "path": ["mixed_precision"], "value": "bf16"}]
	contains(f.message, "mixed_precision is 'no'")
}

test_accelerate_deepspeed_file_mode_quiet if {
	count(gpu001.findings) == 0 with input as {
		"kind": "accelerate", "doc": {},
		"workload": {"precision": "fp32", "device": "gpu", "deepspeed_config_file": "ds.json"},
		"paths": {}, "target": {},
	}
}

test_accelerate_cpu_quiet if {
	count(gpu001.findings) == 0 with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "no"},
		"workload": {"precision": "fp32", "device": "cpu"}, "paths": {}, "target": {},
	}
}

test_vllm_float32_fires if {
	some f in gpu001.findings with input as {
		"kind": "vllm", "doc": {"dtype": "float32"},
		"workload": {"precision": "fp32"}, "paths": {}, "target": {"gpu": t4},
	}
	f.patch == [{"op": "set", "path": ["dtype"], "value": "half"}]
	f.path == ["dtype"]
}

test_vllm_auto_quiet if {
	count(gpu001.findings) == 0 with input as {
		"kind": "vllm", "doc": {}, "workload": {"precision": "auto"}, "paths": {}, "target": {},
	}
}

recipe_fp32(recipe, doc, at, gpu) := {
	"kind": "finetune", "doc": doc, "params": {},
	"workload": {"recipe": recipe, "precision": "fp32"}, "paths": {"precision": at},
	"target": {"gpu": gpu},
}

test_recipe_fp32_on_h100_sets_bf16 if {
	some f in gpu001.findings with input as recipe_fp32("axolotl", {"bf16": false}, ["bf16"], {"name": "H100-80GB", "bf16": true})
	f.patch == [{"op": "set", "path": ["bf16"], "value": true}]
}

test_recipe_fp32_on_t4_sets_fp16 if {
	some f in gpu001.findings with input as recipe_fp32("trainer", {}, [], {"name": "T4", "bf16": false})
	f.patch == [{"op": "set", "path": ["fp16"], "value": true}]
}

test_torchtune_on_t4_quiet if {
	count(gpu001.findings) == 0 with input as recipe_fp32("torchtune", {"dtype": "fp32"}, ["dtype"], {"name": "T4", "bf16": false})
}

test_neox_fragment_quiet if {
	count(gpu001.findings) == 0 with input as recipe_fp32("gpt-neox", {}, [], {"name": "H100-80GB", "bf16": true})
}

test_neox_fp16_off_sets_precision if {
	some f in gpu001.findings with input as recipe_fp32("gpt-neox", {"fp16": {"enabled": false}}, ["fp16", "enabled"], {"name": "H100-80GB", "bf16": true})
	f.patch == [{"op": "set", "path": ["precision"], "value": "bfloat16"}]
}
