package gpulint.rules.ds003_test

import data.gpulint.rules.ds003

gib := 1073741824

stages(f0, f1, f2) := {"0": {"total": 60 * gib, "fits": f0}, "1": {"total": 40 * gib, "fits": f1}, "2": {"total": 30 * gib, "fits": f2}, "3": {"total": 20 * gib, "fits": true}}

test_stage0_fits if {
	fs := ds003.findings with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3}},
		"paths": {"zero.stage": ["zero_optimization", "stage"]},
		"target": {"gpu": {"name": "H100-80GB"}, "gpus": 8}, "estimate": {"stages": stages(true, true, true)},
	}
	count(fs) == 1
	some f in fs
	f.patch == [{"op": "set", "path": ["zero_optimization", "stage"], "value": 0}]
	contains(f.message, "yet stage 0 fits: about 60.0 GiB per GPU on H100-80GB with 8 GPUs")
}

test_lowest_fitting_stage if {
	some f in ds003.findings with input as {
		"kind": "accelerate", "workload": {"zero": {"stage": 3}}, "paths": {},
		"target": {"gpus": 8}, "estimate": {"stages": stages(false, false, true)},
	}
	f.patch == [{"op": "set", "path": ["deepspeed_config", "zero_stage"], "value": 2}]
}

test_optimizer_offload_skips_stage0 if {
	some f in ds003.findings with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3, "offload_optimizer": "cpu"}}, "paths": {},
		"target": {"gpus": 8}, "estimate": {"stages": stages(true, true, true)},
	}
	f.patch[0].value == 1
}

test_nothing_lower_fits_quiet if {
	count(ds003.findings) == 0 with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3}}, "paths": {},
		"target": {"gpus": 8}, "estimate": {"stages": stages(false, false, false)},
	}
}

test_param_offload_quiet if {
	count(ds003.findings) == 0 with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3, "offload_param": "cpu"}}, "paths": {},
		"target": {"gpus": 8}, "estimate": {"stages": stages(true, true, true)},
	}
}

test_single_gpu_left_to_ds002 if {
	count(ds003.findings) == 0 with input as {
		"kind": "deepspeed", "workload": {"zero": {"stage": 3}}, "paths": {},
		"target": {"gpus": 1}, "estimate": {"stages": stages(true, true, true)},
	}
}
