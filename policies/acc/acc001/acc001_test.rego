package gpulint.rules.acc001_test

import data.gpulint.rules.acc001

test_per_node_count_in_multi_node_config if {
	fs := acc001.findings with input as {
		"workload": {"device": "gpu", "parallel": {"world_size": 8, "num_machines": 2}},
		"paths": {"parallel.world_size": ["num_processes"]},
		"target": {"gpus": 8, "gpus_from": "project"},
	}
	count(fs) == 1
	some f in fs
	f.path == ["num_processes"]
	f.patch == [{"op": "set", "path": ["num_processes"], "value": 16}]
	contains(f.message, "num_processes is 8, the total across 2 machines, but the job gets 16 (8 GPUs per node × 2 machines): 8 GPUs stay idle")
}

test_flag_is_the_total if {
	count(acc001.findings) == 0 with input as {
		"workload": {"device": "gpu", "parallel": {"world_size": 16, "num_machines": 2}},
		"paths": {}, "target": {"gpus": 16, "gpus_from": "flag"},
	}
}

test_more_processes_than_gpus if {
	some f in acc001.findings with input as {
		"workload": {"device": "gpu", "parallel": {"world_size": 8}},
		"paths": {}, "target": {"gpus": 4, "gpus_from": "flag"},
	}
	contains(f.message, "invalid device ordinal")
}

test_gpus_from_config_quiet if {
	count(acc001.findings) == 0 with input as {
		"workload": {"device": "gpu", "parallel": {"world_size": 8}},
		"paths": {}, "target": {"gpus": 8, "gpus_from": "config"},
	}
}

test_cpu_quiet if {
	count(acc001.findings) == 0 with input as {
		"workload": {"device": "cpu", "parallel": {"world_size": 8}},
		"paths": {}, "target": {"gpus": 4, "gpus_from": "flag"},
	}
}
