package gpulint.rules.vllm004_test

import data.gpulint.rules.vllm004

gib := 1073741824

serve(u) := {"workload": {"serve": {"gpu_memory_utilization": u}}, "paths": {"serve.gpu_memory_utilization": ["gpu-memory-utilization"]}, "params": {}, "doc": {}}

l4 := {"target": {"gpu": {"name": "L4", "memory": 24 * gib}}}

# A 7B-class model's pool as the estimate gives it: 0.6-1.0 GiB.
pool := {"estimate": {"serve": {"context_bytes": gib / 2, "cuda_graphs": {
	"bytes": 0.8 * gib, "low": 0.5 * gib, "high": gib, "graphs": 86, "legacy_graphs": 67, "max_size": 512, "layers": 28,
	"v0_11": {"graphs": 86, "bytes": 0.8 * gib, "low": 0.6 * gib, "high": gib},
	"before_v0_11": {"graphs": 67, "bytes": 0.72 * gib, "low": 0.5 * gib, "high": 0.9 * gib},
}}}}

old_release := {"vllm": {"release": "v0.10.1", "release_from": "image vllm/vllm-openai:v0.10.1", "capture_rule": "before_v0_11", "cuda_graphs": "outside", "cuda_graphs_from": "image vllm/vllm-openai:v0.10.1"}}

with_all(parts) := object.union_n(parts)

# 5 % of an 80 GB GPU is 4 GiB: room for the context and any graph pool.
test_095_on_80gb_quiet if {
	count(vllm004.findings) == 0 with input as object.union(serve(0.95), {"target": {"gpu": {"name": "A100-80GB", "memory": 80 * gib}}})
}

# A release before v0.21 and a rest below the least the pool measured:
# capture runs out of memory, a warning with the fix.
test_old_release_short_of_least_warns if {
	fs := vllm004.findings with input as with_all([serve(0.99), l4, pool, old_release])
	count(fs) == 1
	some f in fs
	not f.level
	f.path == ["gpu-memory-utilization"]
	f.patch == [{"op": "set", "path": ["gpu-memory-utilization"], "value": 0.9}]
	f.message == "gpu-memory-utilization 0.99 leaves 0.2 GiB of L4's 24.0 GiB outside vLLM's budget, where vLLM captures CUDA graphs after the KV cache is allocated (image vllm/vllm-openai:v0.10.1): 0.5-0.9 GiB for this model, 28 layers × 67 captured graphs, more than is left"
}

# The same release with a rest between the pool's least and the context
# plus its most: possible, so info.
test_old_release_within_range_info if {
	fs := vllm004.findings with input as with_all([serve(0.95), l4, pool, old_release])
	count(fs) == 1
	some f in fs
	f.level == "info"
	f.message == "gpu-memory-utilization 0.95 leaves 1.2 GiB of L4's 24.0 GiB outside vLLM's budget, less than the CUDA context (0.5 GiB) and CUDA graphs may need there after the KV cache is allocated (graphs: 0.5-0.9 GiB for this model, 28 layers × 67 captured graphs); lower it: vLLM captures them there (image vllm/vllm-openai:v0.10.1)"
}

# No release stated: v0.21 and later reserve the graphs inside the budget,
# so even a rest short of the pool's least is only info, naming the tag,
# with the range over both capture rules.
test_no_release_is_info if {
	fs := vllm004.findings with input as with_all([serve(0.99), l4, pool])
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "(graphs: 0.5-1.0 GiB for this model, 28 layers × 86 captured graphs, 67 before v0.11)")
	contains(f.message, "the file states no vLLM release: before v0.21 vLLM captures them there, v0.21 and later reserve them inside the budget; pin the image tag")
}

# v0.21 and later (or the variable set to 1) reserve the graphs: quiet.
test_budgeted_release_quiet if {
	inp := with_all([serve(0.99), l4, pool, {"vllm": {"release": "v0.21.0", "cuda_graphs": "budget", "cuda_graphs_from": "image vllm/vllm-openai:v0.21.0"}}])
	count(vllm004.findings) == 0 with input as inp
}

# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 keeps them outside whatever
# the release.
test_env_off_warns_naming_it if {
	inp := with_all([serve(0.98), l4, pool, {"vllm": {"cuda_graphs": "outside", "cuda_graphs_from": "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"}}])
	some f in vllm004.findings with input as inp
	not f.level
	contains(f.message, "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0)")
}

# A file with its own capture sizes captures another number of graphs:
# no warning, info saying so.
test_own_capture_sizes_info if {
	inp := with_all([serve(0.98), l4, pool, old_release, {"doc": {"cudagraph-capture-sizes": [1, 2, 4]}}])
	fs := vllm004.findings with input as inp
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "the file sets its own capture sizes")
}

# Model unknown: the top measured pool, as info naming the model.
test_unknown_model_info if {
	fs := vllm004.findings with input as with_all([serve(0.95), l4, old_release])
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "up to 2.0 GiB (the top measured; name the model to size them)")
}

# enforce-eager captures no graphs: nothing needs the rest.
test_enforce_eager_quiet if {
	inp := with_all([serve(0.99), l4, pool, old_release])
	count(vllm004.findings) == 0 with input as object.union(inp, {"workload": {"serve": {"gpu_memory_utilization": 0.99, "enforce_eager": true}}})
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

# Values at or below vLLM's own defaults are never questioned.
test_default_quiet if {
	count(vllm004.findings) == 0 with input as with_all([serve(0.92), {"target": {"gpu": {"name": "L4", "memory": 2 * gib}}}, old_release])
}

