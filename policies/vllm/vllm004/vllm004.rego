# METADATA
# title: gpu_memory_utilization leaves no room outside vLLM
# custom:
#   id: VLLM004
#   slug: gpu-memory-utilization-high
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     gpu_memory_utilization is the share of the whole GPU vLLM's weights,
#     activations and KV cache may take (vllm.md §2). Before v0.21 vLLM
#     captures its CUDA graphs after the KV cache is sized, so the graph
#     pool and the CUDA context must fit in the rest (vllm-project/vllm
#     vllm/v1/worker/gpu_worker.py @ 35d5cda: requested_memory = total ×
#     gpu_memory_utilization, capture_model runs in compile_or_warm_up_model
#     after initialize_from_config). The pool grows with the layers on a
#     rank and the number of captured graphs: 0.51-1.85 GiB in vLLM 0.19's
#     logs on H100 (tuner/cudagraph.go). From v0.21 the profiler captures
#     the graphs once before sizing the KV cache and reserves them inside
#     the budget (vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS,
#     "Enabled by default as of v0.21.0"), so the rest needs no room for
#     them. The verdict is in GiB against the known GPU, not a share: 0.95
#     of an 80 GB GPU leaves 4 GiB, ample; of a 24 GB GPU 1.1 GiB, too
#     little for a 7B model's graphs on older releases.
#   remediation: >-
#     Set gpu_memory_utilization to 0.9 (the default), or run vLLM v0.21 or
#     later, which reserves CUDA-graph memory inside the budget; win
#     KV-cache room with max-model-len, an FP8 KV cache or tensor
#     parallelism instead.
#   kinds: [vllm]
#   fix_needs: [gpu]
#   since: 0.1.0
#   fixable: true
#   example: |
#     gpu-memory-utilization: 0.98
package gpulint.rules.vllm004

import data.gpulint.lib

# fix_needs: [gpu]. Lowering gpu-memory-utilization to 0.9 shrinks the
# KV cache; on a GPU that holds the weights and one max-model-len sequence
# only above 0.9 vLLM then refuses to start. With the GPU unknown (the
# verdict assumes 80 GB) that cannot be judged, so no fix is offered.

# Values at or below every default vLLM shipped (0.9, then 0.92) are never
# questioned: the project chose vLLM's own setting.
threshold := lib.param("gpu-memory-utilization-high", "threshold", 0.93)

gib := 1073741824

# The CUDA context the estimate counts, else the tuner's default (0.5 GiB:
# vLLM 0.19's worker-init snapshot, cuda_memory=0.51GiB).
context := input.estimate.serve.context_bytes

default context := 536870912

# graphs is the memory model's CUDA-graph pool for this model and its
# captured sizes (input.estimate.serve.cuda_graphs): bytes, low, high.
graphs := input.estimate.serve.cuda_graphs

# span is the pool's range under the stated release's capture rule
# (input.vllm.capture_rule), else over both rules.
span := {"low": r.low, "high": r.high, "graphs": r.graphs, "legacy": ""} if {
	r := graphs[input.vllm.capture_rule]
}

span := {"low": graphs.low, "high": graphs.high, "graphs": graphs.graphs, "legacy": legacy} if {
	graphs.low
	not stated_rule
}

stated_rule if graphs[input.vllm.capture_rule]

# generic_graphs is the top of the pools measured in vLLM 0.19's logs
# (1.85 GiB, rounded up), for a model the estimate does not know.
generic_graphs := 2 * gib

# Graphs are captured when enforce-eager is off and the release does not
# reserve them inside the budget.
captures if not input.workload.serve.enforce_eager == true

outside if {
	captures
	not input.vllm.cuda_graphs == "budget"
}

# The estimate assumes vLLM's default capture sizes; a file that sets its
# own captures a different number of graphs.
own_sizes if {
	some k in ["cudagraph-capture-sizes", "cudagraph_capture_sizes", "cuda-graph-sizes", "cuda_graph_sizes", "max-cudagraph-capture-size", "max_cudagraph_capture_size", "compilation-config", "compilation_config", "-O"]
	object.get(input.doc, k, null) != null
}

# Certain: the release (or the variable) puts the graphs outside, the
# model is known, and the rest is short of the least the pool measured.
certain if {
	input.vllm.cuda_graphs == "outside"
	span.low
	not own_sizes
}

# top is the most that may need the rest: the CUDA context and the graph
# pool at the top of its range.
top := context + span.high

top := context + generic_graphs if not span.high

# capacity is what one vLLM process sees: the MIG slice or the whole GPU.
capacity := input.target.mig_profile.memory

capacity := input.target.gpu.memory if not input.target.mig_profile.memory

# assumed_capacity is the largest common single GPU the verdict must hold
# for when the file names none: an 80 GB H100/A100.
assumed_capacity := 80 * gib

# pool describes the graph estimate the verdict used.
pool := sprintf("%s-%s GiB for this model, %d layers × %d captured graphs%s", [trim_suffix(lib.gib(span.low), " GiB"), trim_suffix(lib.gib(span.high), " GiB"), graphs.layers, span.graphs, span.legacy]) if span.low

pool := sprintf("up to %s (the top measured; name the model to size them)", [lib.gib(generic_graphs)]) if not span.low

legacy := sprintf(", %d before v0.11", [graphs.legacy_graphs]) if graphs.legacy_graphs != graphs.graphs

default legacy := ""

# settle names what would decide where the graphs live.
settle := sprintf("lower it: vLLM captures them there (%s)", [input.vllm.cuda_graphs_from]) if input.vllm.cuda_graphs == "outside"

settle := "the file states no vLLM release: before v0.21 vLLM captures them there, v0.21 and later reserve them inside the budget; pin the image tag (vllm/vllm-openai:vX.Y.Z) to settle this" if not input.vllm.cuda_graphs

sizes_note := "; the file sets its own capture sizes, so the estimate's graph count may not hold" if own_sizes

default sizes_note := ""

fix(f) := lib.with_fix(f, "set gpu-memory-utilization to 0.9", [lib.set_op(["gpu-memory-utilization"], 0.9)])

high_util(u) if {
	u > threshold
	u <= 1
}

# Known GPU, graphs certainly outside and the rest short of their least:
# capture runs out of memory.
findings contains f if {
	not lib.vllm_off_gpu
	u := input.workload.serve.gpu_memory_utilization
	high_util(u)
	outside
	certain
	cap := capacity
	out := (1 - u) * cap
	out < span.low
	f := fix(lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v leaves %s of %s's %s outside vLLM's budget, where vLLM captures CUDA graphs after the KV cache is allocated (%s): %s, more than is left", [u, lib.gib(out), lib.gpu_name, lib.gib(cap), input.vllm.cuda_graphs_from, pool])))
}

# Known GPU, the rest short of the top of what may need it: said as info
# with what would settle it.
findings contains f if {
	not lib.vllm_off_gpu
	u := input.workload.serve.gpu_memory_utilization
	high_util(u)
	outside
	cap := capacity
	out := (1 - u) * cap
	out < top
	not sure_short(out)
	f := lib.with_level(fix(lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v leaves %s of %s's %s outside vLLM's budget, less than the CUDA context (%s) and CUDA graphs may need there after the KV cache is allocated (graphs: %s); %s%s", [u, lib.gib(out), lib.gpu_name, lib.gib(cap), lib.gib(context), pool, settle, sizes_note]))), "info")
}

sure_short(out) if {
	certain
	out < span.low
}

# Unknown GPU: said only when the rest is short even on an 80 GB GPU, and
# as info, since a larger GPU would have room.
findings contains f if {
	not lib.vllm_off_gpu
	not capacity
	u := input.workload.serve.gpu_memory_utilization
	high_util(u)
	outside
	out := (1 - u) * assumed_capacity
	out < top
	f := lib.with_level(fix(lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v leaves %s outside vLLM's budget (%s) even on an 80 GB GPU, less than the CUDA context (%s) and CUDA graphs may need there (graphs: %s); assumes a GPU of at most 80 GB: name it (node selector or targets.gpu) to settle this", [u, lib.gib(out), lib.pct(1 - u), lib.gib(context), pool]))), "info")
}
