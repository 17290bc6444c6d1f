package gpulint.rules.gpu006_test

import data.gpulint.rules.gpu006

h100 := {"name": "H100-80GB", "bf16": true}

t4 := {"name": "T4", "bf16": false}

test_deepspeed_fp16_on_h100_swaps if {
	fs := gpu006.findings with input as {
		"kind": "deepspeed", "doc": {"fp16": {"enabled": true, "loss_scale": 0}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": h100},
	}
	count(fs) == 1
	some f in fs
	f.path == ["fp16", "enabled"]
	f.patch == [{"op": "set", "path": ["fp16", "enabled"], "value": false}, {"op": "set", "path": ["bf16", "enabled"], "value": true}]
	contains(f.message, "dynamic loss scaling")
}

test_deepspeed_static_scale_named if {
	some f in gpu006.findings with input as {
		"kind": "deepspeed", "doc": {"fp16": {"enabled": true, "loss_scale": 128}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": h100},
	}
	contains(f.message, "a static loss scale of 128")
}

test_deepspeed_legacy_bfloat16_block if {
	some f in gpu006.findings with input as {
		"kind": "deepspeed", "doc": {"fp16": {"enabled": true}, "bfloat16": {"enabled": false}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": h100},
	}
	f.patch[1].path == ["bfloat16", "enabled"]
}

test_deepspeed_fp16_on_t4_quiet if {
	count(gpu006.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"fp16": {"enabled": true}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": t4},
	}
}

test_unknown_gpu_quiet if {
	count(gpu006.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"fp16": {"enabled": true}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]}, "target": {},
	}
}

test_apex_amp_quiet if {
	count(gpu006.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"amp": {"enabled": true}},
		"workload": {"precision": "fp16"}, "paths": {"precision": ["amp", "enabled"]},
		"target": {"gpu": h100},
	}
}

test_accelerate_fp16 if {
	some f in gpu006.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "fp16"},
		"workload": {"precision": "fp16", "device": "gpu"}, "paths": {"precision": ["mixed_precision"]},
		"target": {"gpu": h100},
	}
	f.patch == [{"op": "set", "path": ["mixed_precision"], "value": "bf16"}]
}

test_recipe_fp16_flag if {
	some f in gpu006.findings with input as {
		"kind": "finetune", "doc": {"fp16": true},
		"workload": {"recipe": "axolotl", "precision": "fp16"}, "paths": {"precision": ["fp16"]},
		"target": {"gpu": h100},
	}
	f.patch == [{"op": "set", "path": ["fp16"], "value": false}, {"op": "set", "path": ["bf16"], "value": true}]
}

test_neox_fp16_block if {
	some f in gpu006.findings with input as {
		"kind": "finetune", "doc": {"fp16": {"enabled": true}},
		"workload": {"recipe": "gpt-neox", "precision": "fp16"}, "paths": {"precision": ["fp16", "enabled"]},
		"target": {"gpu": h100},
	}
	f.patch == [{"op": "set", "path": ["fp16", "enabled"], "value": false}, {"op": "set", "path": ["bf16", "enabled"], "value": true}]
}

test_neox_precision_key if {
	some f in gpu006.findings with input as {
		"kind": "finetune", "doc": {"precision": "fp16"},
		"workload": {"recipe": "gpt-neox", "precision": "fp16"}, "paths": {"precision": ["precision"]},
		"target": {"gpu": h100},
	}
	f.patch == [{"op": "set", "path": ["precision"], "value": "bfloat16"}]
}

test_recipe_fp16_on_t4_quiet if {
	count(gpu006.findings) == 0 with input as {
		"kind": "finetune", "doc": {"fp16": true},
		"workload": {"recipe": "trainer", "precision": "fp16"}, "paths": {"precision": ["fp16"]},
		"target": {"gpu": t4},
	}
}
