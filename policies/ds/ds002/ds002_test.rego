package gpulint.rules.ds002_test

import data.gpulint.rules.ds002

test_stage3_on_one_gpu if {
	fs := ds002.findings with input as {
		"kind": "deepspeed", "doc": {"zero_optimization": {"stage": 3}},
		"workload": {"device": "gpu", "zero": {"stage": 3, "offload_optimizer": "none", "offload_param": "none"}},
		"paths": {"zero.stage": ["zero_optimization", "stage"]},
		"target": {"gpus": 1, "gpus_from": "flag"},
	}
	count(fs) == 1
	some f in fs
	f.path == ["zero_optimization", "stage"]
	f.patch == [{"op": "set", "path": ["zero_optimization", "stage"], "value": 0}]
	contains(f.message, "ZeRO stage 3 partitions optimizer states, gradients and parameters")
}

test_legacy_bool_form if {
	some f in ds002.findings with input as {
		"kind": "deepspeed", "doc": {"zero_optimization": true},
		"workload": {"zero": {"stage": 1}}, "paths": {}, "target": {"gpus": 1, "gpus_from": "project"},
	}
	f.patch == [{"op": "set", "path": ["zero_optimization"], "value": false}]
}

test_accelerate_one_process if {
	some f in ds002.findings with input as {
		"kind": "accelerate", "doc": {},
		"workload": {"device": "gpu", "zero": {"stage": 2, "offload_optimizer": "none", "offload_param": "none"}},
		"paths": {}, "target": {"gpus": 1, "gpus_from": "config"},
	}
	f.patch == [{"op": "set", "path": ["deepspeed_config", "zero_stage"], "value": 0}]
}

test_offload_quiet if {
	count(ds002.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"zero_optimization": {"stage": 2}},
		"workload": {"zero": {"stage": 2, "offload_optimizer": "cpu", "offload_param": "none"}},
		"paths": {}, "target": {"gpus": 1, "gpus_from": "flag"},
	}
}

test_many_gpus_quiet if {
	count(ds002.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"zero_optimization": {"stage": 3}},
		"workload": {"zero": {"stage": 3}}, "paths": {}, "target": {"gpus": 8, "gpus_from": "flag"},
	}
}

test_unknown_gpus_quiet if {
	count(ds002.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {"zero_optimization": {"stage": 3}},
		"workload": {"zero": {"stage": 3}}, "paths": {}, "target": {},
	}
}
