package gpulint.rules.vllm004_test

import data.gpulint.rules.vllm004

gib := 1073741824

serve(u) := {"workload": {"serve": {"gpu_memory_utilization": u}}, "paths": {"serve.gpu_memory_utilization": ["gpu-memory-utilization"]}, "params": {}}

# 5 % of an 80 GB GPU is 4 GiB: room for CUDA graphs at TP 1.
test_095_on_80gb_quiet if {
	count(vllm004.findings) == 0 with input as object.union(serve(0.95), {"target": {"gpu": {"name": "A100-80GB", "memory": 80 * gib}}})
}

# 5 % of a 24 GB GPU is 1.2 GiB: short of the graph pool.
test_095_on_24gb_fires if {
	fs := vllm004.findings with input as object.union(serve(0.95), {"target": {"gpu": {"name": "L4", "memory": 24 * gib}}})
	count(fs) == 1
	some f in fs
	not f.level
	f.path == ["gpu-memory-utilization"]
	f.patch == [{"op": "set", "path": ["gpu-memory-utilization"], "value": 0.9}]
	f.message == "gpu-memory-utilization 0.95 leaves 1.2 GiB of L4's 24.0 GiB outside vLLM's budget, less than CUDA graphs (about 2 GiB at most) need there after the KV cache is allocated"
}

# enforce-eager captures no graphs: nothing needs the rest at TP 1.
test_enforce_eager_quiet if {
	inp := object.union(serve(0.99), {"target": {"gpu": {"name": "L4", "memory": 24 * gib}}})
	count(vllm004.findings) == 0 with input as object.union(inp, {"workload": {"serve": {"gpu_memory_utilization": 0.99, "enforce_eager": true}}})
}

# Tensor parallelism adds NCCL buffers to what lives outside.
test_tp_adds_nccl if {
	inp := object.union(serve(0.97), {"target": {"gpu": {"name": "H100-80GB", "memory": 80 * gib}}})
	some f in vllm004.findings with input as object.union(inp, {"workload": {"serve": {"gpu_memory_utilization": 0.97}, "parallel": {"tp": 4}}})
	contains(f.message, "tensor-parallel NCCL buffers")
}

test_tp1_same_value_quiet if {
	count(vllm004.findings) == 0 with input as object.union(serve(0.97), {"target": {"gpu": {"name": "H100-80GB", "memory": 80 * gib}}})
}

# A MIG slice is the capacity, not the whole GPU.
test_mig_slice_capacity if {
	inp := object.union(serve(0.95), {"target": {"gpu": {"name": "A100-80GB", "memory": 80 * gib}, "mig_profile": {"name": "3g.40gb", "memory": 20 * gib}}})
	count(vllm004.findings) == 1 with input as inp
}

# Unknown GPU: quiet while an 80 GB GPU would have room ...
test_unknown_gpu_095_quiet if {
	count(vllm004.findings) == 0 with input as object.union(serve(0.95), {"target": {}})
}

# ... info naming the assumption when even 80 GB would be short.
test_unknown_gpu_099_info if {
	fs := vllm004.findings with input as object.union(serve(0.99), {"target": {}})
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "assumes a GPU of at most 80 GB")
}

test_default_quiet if {
	count(vllm004.findings) == 0 with input as object.union(serve(0.9), {"target": {"gpu": {"name": "T4", "memory": 15 * gib}}})
}

test_threshold_param if {
	count(vllm004.findings) == 0 with input as {
		"workload": {"serve": {"gpu_memory_utilization": 0.95}}, "paths": {}, "target": {"gpu": {"name": "L4", "memory": 24 * gib}},
		"params": {"gpu-memory-utilization-high": {"threshold": 0.97}},
	}
}

