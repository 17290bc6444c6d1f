# METADATA
# title: gpu_memory_utilization leaves no room outside vLLM
# custom:
#   id: VLLM004
#   slug: gpu-memory-utilization-high
#   severity: warning
#   rationale: >-
#     gpu_memory_utilization is the share of the whole GPU vLLM's weights,
#     activations and KV cache may take (vllm.md §2). The CUDA context,
#     CUDA graphs (captured after the KV cache is allocated), NCCL buffers
#     and any other process on the GPU must fit in the rest. At 0.95 and
#     above that rest is a few GiB or less: graph capture runs out of
#     memory at start-up, or the server dies later when NCCL or a sidecar
#     allocates (vllm.md §8, memory-model.md §5.2).
#   remediation: >-
#     Set gpu_memory_utilization to 0.9 (the default); win KV-cache room
#     with max-model-len, an FP8 KV cache or tensor parallelism instead.
#   kinds: [vllm]
#   since: 0.1.0
#   fixable: true
#   example: |
#     gpu-memory-utilization: 0.98
package gpulint.rules.vllm004

import data.gpulint.lib

threshold := lib.param("gpu-memory-utilization-high", "threshold", 0.95)

# What the estimate says is left for CUDA graphs and the context.
outside := sprintf("leaves %s of %s's %s outside vLLM's budget, and CUDA graphs and the CUDA context alone need more (%s short)", [lib.gib(out), lib.gpu_name, lib.gib(cap), lib.gib(0 - input.estimate.serve.graph_headroom)]) if {
	input.estimate.serve.graph_headroom < 0
	cap := input.estimate.capacity / input.estimate.serve.gpu_memory_utilization
	out := cap - input.estimate.capacity
} else := sprintf("leaves %s of %s's %s outside vLLM's budget for CUDA graphs, NCCL buffers and the CUDA context (%s spare after them)", [lib.gib(out), lib.gpu_name, lib.gib(cap), lib.gib(input.estimate.serve.graph_headroom)]) if {
	cap := input.estimate.capacity / input.estimate.serve.gpu_memory_utilization
	out := cap - input.estimate.capacity
} else := sprintf("leaves %s of the GPU for CUDA graphs, NCCL buffers, the CUDA context and any other process", [lib.pct(1 - input.workload.serve.gpu_memory_utilization)])

findings contains f if {
	not lib.vllm_off_gpu
	u := input.workload.serve.gpu_memory_utilization
	u >= threshold
	u <= 1
	f := lib.with_fix(
		lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v %s", [u, outside])),
		"set gpu-memory-utilization to 0.9",
		[lib.set_op(["gpu-memory-utilization"], 0.9)],
	)
}
