package gpulint.rules.vllm004_test

import data.gpulint.rules.vllm004

gib := 1073741824

test_095_without_estimate if {
	fs := vllm004.findings with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.95}},
		"paths": {"serve.gpu_memory_utilization": ["gpu-memory-utilization"]}, "target": {}, "params": {},
	}
	count(fs) == 1
	some f in fs
	f.path == ["gpu-memory-utilization"]
	f.patch == [{"op": "set", "path": ["gpu-memory-utilization"], "value": 0.9}]
	f.message == "gpu-memory-utilization 0.95 leaves 5% of the GPU for CUDA graphs, NCCL buffers, the CUDA context and any other process"
}

test_graph_headroom_negative if {
	some f in vllm004.findings with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.98}}, "paths": {}, "params": {},
		"target": {"gpu": {"name": "L4"}},
		"estimate": {"capacity": 98 * gib, "serve": {"gpu_memory_utilization": 0.98, "graph_headroom": -1 * gib}},
	}
	contains(f.message, "leaves 2.0 GiB of L4's 100.0 GiB outside vLLM's budget, and CUDA graphs and the CUDA context alone need more (1.0 GiB short)")
}

test_graph_headroom_positive if {
	some f in vllm004.findings with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.95}}, "paths": {}, "params": {},
		"target": {"gpu": {"name": "H100-80GB"}},
		"estimate": {"capacity": 95 * gib, "serve": {"gpu_memory_utilization": 0.95, "graph_headroom": 2 * gib}},
	}
	contains(f.message, "(2.0 GiB spare after them)")
}

test_default_quiet if {
	count(vllm004.findings) == 0 with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.9}}, "paths": {}, "target": {}, "params": {},
	}
}

test_threshold_param if {
	count(vllm004.findings) == 0 with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.95}}, "paths": {}, "target": {},
		"params": {"gpu-memory-utilization-high": {"threshold": 0.97}},
	}
}
