package gpulint.rules.vllm001_test

import data.gpulint.rules.vllm001

test_tp4_on_one_gpu if {
	fs := vllm001.findings with input as {
		"doc": {}, "workload": {"parallel": {"tp": 4}},
		"paths": {"parallel.tp": ["tensor-parallel-size"]},
		"target": {"gpus": 1, "gpus_from": "manifest"}, "k8s": {"pod": {"group": ""}},
	}
	count(fs) == 1
	some f in fs
	f.path == ["tensor-parallel-size"]
	contains(f.message, "needs 4 GPUs but the server gets 1 (its nvidia.com/gpu limit)")
}

test_multi_node_group_skipped if {
	count(vllm001.findings) == 0 with input as {
		"doc": {}, "workload": {"parallel": {"tp": 8, "pp": 2}}, "paths": {},
		"target": {"gpus": 8, "gpus_from": "manifest"}, "k8s": {"pod": {"group": "leader-worker-set"}},
	}
}

test_flag_counts_for_multi_node_too if {
	some f in vllm001.findings with input as {
		"doc": {}, "workload": {"parallel": {"tp": 8, "pp": 2}}, "paths": {},
		"target": {"gpus": 8, "gpus_from": "flag"}, "k8s": {"pod": {"group": "ray"}},
	}
	contains(f.message, "needs 16 GPUs")
}

test_data_parallel_counts if {
	some f in vllm001.findings with input as {
		"doc": {}, "workload": {"parallel": {"tp": 2, "dp": 4}}, "paths": {},
		"target": {"gpus": 4, "gpus_from": "project"},
	}
	f.message == "tensor-parallel-size 2 × data-parallel-size 4 needs 8 GPUs but the server gets 4 (the project file): vLLM starts one worker per GPU and fails at start-up"
}

test_local_data_parallel_size if {
	count(vllm001.findings) == 0 with input as {
		"doc": {"data-parallel-size-local": "2"}, "workload": {"parallel": {"tp": 2, "dp": 4}}, "paths": {},
		"target": {"gpus": 4, "gpus_from": "manifest"},
	}
}

test_gpus_from_config_or_unknown_quiet if {
	count(vllm001.findings) == 0 with input as {
		"doc": {}, "workload": {"parallel": {"tp": 4}}, "paths": {}, "target": {},
	}
}

test_enough_gpus_quiet if {
	count(vllm001.findings) == 0 with input as {
		"doc": {}, "workload": {"parallel": {"tp": 4}}, "paths": {}, "target": {"gpus": 4, "gpus_from": "manifest"},
	}
}

test_leader_worker_set_group_gpus if {
	some f in vllm001.findings with input as {
		"doc": {}, "workload": {"parallel": {"tp": 8, "pp": 4}}, "paths": {},
		"target": {"gpus": 8, "gpus_from": "manifest"},
		"k8s": {"pod": {"group": "leader-worker-set", "group_pods": 2, "group_gpus": 16}},
	}
	contains(f.message, "needs 32 GPUs but the server gets 16 (the LeaderWorkerSet group's 2 pods together)")
}

test_leader_worker_set_group_enough if {
	count(vllm001.findings) == 0 with input as {
		"doc": {}, "workload": {"parallel": {"tp": 8, "pp": 2}}, "paths": {},
		"target": {"gpus": 8, "gpus_from": "manifest"},
		"k8s": {"pod": {"group": "leader-worker-set", "group_pods": 2, "group_gpus": 16}},
	}
}

test_tgi_shards_over_gpus if {
	some f in vllm001.findings with input as {
		"kind": "tgi", "doc": {}, "workload": {"parallel": {"tp": 4}},
		"paths": {"parallel.tp": ["tensor-parallel-size"]},
		"target": {"gpus": 2, "gpus_from": "manifest"}, "k8s": {"pod": {"group": ""}},
	}
	f.message == "num-shard 4 needs 4 GPUs but the server gets 2 (its nvidia.com/gpu limit): TGI starts one shard per GPU, each asserting it has a GPU of its own, and fails at start-up"
}

test_tgi_shards_match_gpus if {
	count(vllm001.findings) == 0 with input as {
		"kind": "tgi", "doc": {}, "workload": {"parallel": {"tp": 2}}, "paths": {},
		"target": {"gpus": 2, "gpus_from": "manifest"}, "k8s": {"pod": {"group": ""}},
	}
}
