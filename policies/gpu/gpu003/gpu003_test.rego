package gpulint.rules.gpu003_test

import data.gpulint.rules.gpu003

pod(containers, product) := {"pods": [{"path": ["spec"], "replicas": 1, "product": product, "containers": containers}]}

test_two_mig_slices_fire if {
	fs := gpu003.findings with input as {"kind": "kubernetes", "k8s": pod([{
		"name": "llm", "gpu": 0,
		"mig": [{"profile": "1g.10gb", "count": 2, "path": ["spec", "containers", 0, "resources", "limits", "nvidia.com/mig-1g.10gb"]}],
	}], "")}
	count(fs) == 1
	some f in fs
	f.path[5] == "nvidia.com/mig-1g.10gb"
	contains(f.message, "2 MIG slices")
}

test_one_mig_slice_quiet if {
	count(gpu003.findings) == 0 with input as {"kind": "kubernetes", "k8s": pod([{
		"name": "llm", "gpu": 0, "mig": [{"profile": "3g.40gb", "count": 1, "path": []}],
	}], "")}
}

test_single_strategy_multi_gpu_fires if {
	some f in gpu003.findings with input as {"kind": "kubernetes", "k8s": pod([{
		"name": "llm", "gpu": 2, "gpu_path": ["g"], "mig": [],
	}], "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")}
	f.path == ["g"]
}

test_full_gpus_quiet if {
	count(gpu003.findings) == 0 with input as {"kind": "kubernetes", "k8s": pod([{
		"name": "llm", "gpu": 2, "gpu_path": ["g"], "mig": [],
	}], "NVIDIA-H100-80GB-HBM3")}
}

test_vllm_larger_than_slice_fires if {
	some f in gpu003.findings with input as {
		"kind": "vllm", "workload": {"model": "m"}, "paths": {"model": ["model"]},
		"target": {"mig_profile": {"name": "1g.10gb"}},
		"estimate": {"total": 20 * 1073741824, "capacity": 9 * 1073741824, "summary": "s"},
	}
	f.path == ["model"]
	contains(f.message, "MIG slice 1g.10gb")
}
