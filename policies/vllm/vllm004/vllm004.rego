# METADATA
# title: gpu_memory_utilization leaves no room outside vLLM
# custom:
#   id: VLLM004
#   slug: gpu-memory-utilization-high
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     gpu_memory_utilization is the share of the whole GPU vLLM's weights,
#     activations and KV cache may take (vllm.md §2). vLLM's V1 worker
#     measures everything allocated before the KV cache - the CUDA context,
#     NCCL communicators, non-torch memory - and counts it inside that share
#     (vllm-project/vllm vllm/v1/worker/gpu_worker.py @ 0012cf6,
#     determine_available_memory: non_torch_allocations join peak_memory,
#     and available = total × gpu_memory_utilization − peak). What must fit
#     in the rest is what is allocated after the KV cache: the CUDA-graph
#     pool of capture_model (0.5-1.9 GiB in vLLM v0.19 logs; none with
#     enforce-eager) and, at tensor parallelism above 1, the NCCL and custom
#     all-reduce buffers the graphs capture. The verdict is in GiB against
#     the known GPU, not a share: 0.95 of an 80 GB GPU leaves 4 GiB, ample;
#     of a 24 GB GPU 1.2 GiB, too little.
#   remediation: >-
#     Set gpu_memory_utilization to 0.9 (the default); win KV-cache room
#     with max-model-len, an FP8 KV cache or tensor parallelism instead.
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

# need is what is allocated after the KV cache, outside the budget: the
# CUDA-graph pool at the top of its observed range (2 GiB) unless
# enforce-eager, plus 0.5 GiB of NCCL and custom all-reduce buffers at
# tensor parallelism above 1 (tuner/estimate.go ncclBytes).
need := graphs + comm

graphs := 0 if input.workload.serve.enforce_eager == true

default graphs := 2147483648

comm := 536870912 if input.workload.parallel.tp > 1

default comm := 0

# capacity is what one vLLM process sees: the MIG slice or the whole GPU.
capacity := input.target.mig_profile.memory

capacity := input.target.gpu.memory if not input.target.mig_profile.memory

# assumed_capacity is the largest common single GPU the verdict must hold
# for when the file names none: an 80 GB H100/A100.
assumed_capacity := 80 * gib

what := "CUDA graphs (about 2 GiB at most)" if {
	graphs > 0
	comm == 0
}

what := "CUDA graphs (about 2 GiB at most) and tensor-parallel NCCL buffers (0.5 GiB)" if {
	graphs > 0
	comm > 0
}

what := "tensor-parallel NCCL buffers (0.5 GiB)" if {
	graphs == 0
	comm > 0
}

fix(f) := lib.with_fix(f, "set gpu-memory-utilization to 0.9", [lib.set_op(["gpu-memory-utilization"], 0.9)])

# Known GPU: the rest is measured in GiB.
findings contains f if {
	not lib.vllm_off_gpu
	u := input.workload.serve.gpu_memory_utilization
	u > threshold
	u <= 1
	need > 0
	cap := capacity
	out := (1 - u) * cap
	out < need
	f := fix(lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v leaves %s of %s's %s outside vLLM's budget, less than %s need there after the KV cache is allocated", [u, lib.gib(out), lib.gpu_name, lib.gib(cap), what])))
}

# Unknown GPU: said only when the rest is short even on an 80 GB GPU, and
# as info, since a larger GPU would have room.
findings contains f if {
	not lib.vllm_off_gpu
	not capacity
	u := input.workload.serve.gpu_memory_utilization
	u > threshold
	u <= 1
	need > 0
	out := (1 - u) * assumed_capacity
	out < need
	f := lib.with_level(fix(lib.finding(lib.where("serve.gpu_memory_utilization"), sprintf("gpu-memory-utilization %v leaves %s outside vLLM's budget (%s) even on an 80 GB GPU, less than %s need there; assumes a GPU of at most 80 GB: name it (node selector or targets.gpu) to settle this", [u, lib.gib(out), lib.pct(1 - u), what]))), "info")
}

