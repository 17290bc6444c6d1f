package gpulint.rules.mig002_test

import data.gpulint.rules.mig002

test_invalid_layout_fires if {
	fs := mig002.findings with input as {"mig": {"layouts": [{
		"path": ["mig-configs", "halves", 0, "mig-devices"], "config": "halves", "entry": 0,
		"gpu": "H100-80GB", "gpu_from": "flag", "valid": false,
		"reason": "4g.40gb can be placed once per GPU, layout asks for 2",
	}]}}
	count(fs) == 1
	some f in fs
	f.path == ["mig-configs", "halves", 0, "mig-devices"]
	f.message == "MIG config \"halves\" entry 0 cannot be applied on H100-80GB (the target GPU): 4g.40gb can be placed once per GPU, layout asks for 2; if the entry is meant for other GPUs, add a device-filter for them"
}

test_profiles_mode_names_gpus if {
	some f in mig002.findings with input as {"mig": {"layouts": [{
		"path": [], "config": "c", "entry": 1, "gpu": "A100-40GB", "gpu_from": "profiles",
		"gpus": ["A100-40GB-PCIe", "A100-40GB"], "valid": false, "reason": "r",
	}]}}
	contains(f.message, "on any GPU that has its profiles (A100-40GB-PCIe, A100-40GB): r")
}

test_valid_quiet if {
	count(mig002.findings) == 0 with input as {"mig": {"layouts": [{"path": [], "config": "c", "entry": 0, "gpu": "A30", "gpu_from": "device-filter", "valid": true}]}}
}
