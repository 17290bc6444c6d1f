package gpulint.rules.ds004_test

import data.gpulint.rules.ds004

test_offload_param_at_stage2_removed if {
	fs := ds004.findings with input as {
		"kind": "deepspeed",
		"workload": {"zero": {"stage": 2, "offload_param": "cpu", "offload_optimizer": "none"}},
		"paths": {"zero.offload_param": ["zero_optimization", "offload_param", "device"]},
	}
	count(fs) == 1
	some f in fs
	f.path == ["zero_optimization", "offload_param", "device"]
	f.patch == [{"op": "remove", "path": ["zero_optimization", "offload_param"]}]
	contains(f.message, "offload_param (device cpu) is ignored at ZeRO stage 2")
}

test_legacy_cpu_offload_param if {
	some f in ds004.findings with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 1, "offload_param": "cpu"}},
		"paths": {"zero.offload_param": ["zero_optimization", "cpu_offload_param"]},
	}
	f.patch == [{"op": "remove", "path": ["zero_optimization", "cpu_offload_param"]}]
}

test_accelerate_offload_param_device if {
	some f in ds004.findings with input as {
		"kind": "accelerate", "workload": {"zero": {"stage": 2, "offload_param": "cpu"}},
		"paths": {"zero.offload_param": ["deepspeed_config", "offload_param_device"]},
	}
	f.patch == [{"op": "set", "path": ["deepspeed_config", "offload_param_device"], "value": "none"}]
}

test_nvme_optimizer_below_stage3 if {
	some f in ds004.findings with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 2, "offload_optimizer": "nvme"}},
		"paths": {"zero.offload_optimizer": ["zero_optimization", "offload_optimizer", "device"]},
	}
	f.patch == [{"op": "set", "path": ["zero_optimization", "offload_optimizer", "device"], "value": "cpu"}]
}

test_stage3_quiet if {
	count(ds004.findings) == 0 with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3, "offload_param": "nvme", "offload_optimizer": "nvme"}}, "paths": {},
	}
}

test_none_quiet if {
	count(ds004.findings) == 0 with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 2, "offload_param": "none", "offload_optimizer": "cpu"}}, "paths": {},
	}
}
