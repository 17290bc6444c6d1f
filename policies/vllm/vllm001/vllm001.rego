# METADATA
# title: Server parallel sizes need more GPUs than it gets
# custom:
#   id: VLLM001
#   slug: tp-exceeds-gpus
#   severity: error
#   rationale: >-
#     vLLM runs one worker per GPU: tensor × pipeline × data parallel size
#     GPUs (vllm.md §2). A container that gets fewer (its nvidia.com/gpu
#     limit, or --gpus / the project file) cannot start the extra workers
#     and fails at start-up, after the pod was scheduled and the image
#     pulled. A LeaderWorkerSet's server spans its group: size pods, whose
#     GPUs it gets together. Pods that are one member of another multi-node
#     group (Ray, KServe multi-node) are skipped: their ranks span pods the
#     file may not show. Text Generation Inference shards the same way: its
#     launcher starts --num-shard (NUM_SHARD) shards, and each asserts
#     WORLD_SIZE <= torch.cuda.device_count() before it takes its GPU
#     (huggingface/text-generation-inference
#     server/text_generation_server/utils/dist.py @ v1.4.3 e6bb3ff8 and
#     @ db931fcf), so more shards than the container's GPUs fail too.
#   remediation: >-
#     Request as many GPUs as tensor-parallel-size × pipeline-parallel-size
#     × data-parallel-size (TGI: num-shard), or lower the parallel sizes to
#     the GPUs the container gets.
#   kinds: [vllm, tgi]
#   since: 0.1.0
#   fixable: false
#   example: |
#     args: ["meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
#     resources: {limits: {nvidia.com/gpu: 2}}
package gpulint.rules.vllm001

import data.gpulint.lib

size(f) := n if {
	n := input.workload.parallel[f]
	is_number(n)
	n > 0
} else := 1

# Multi-node data parallel runs only --data-parallel-size-local ranks in
# this container.
dp_local := n if {
	n := to_number(input.doc["data-parallel-size-local"])
	n > 0
}

dp := dp_local

dp := size("dp") if not dp_local

need := (size("tp") * size("pp")) * dp

gets := input.target.gpus if {
	input.target.gpus_from in {"flag", "project"}
}

gets := input.target.gpus if {
	input.target.gpus_from == "manifest"
	object.get(input, ["k8s", "pod", "group"], "") == ""
}

# A LeaderWorkerSet group: leader and workers together.
gets := input.k8s.pod.group_gpus if {
	input.target.gpus_from == "manifest"
	input.k8s.pod.group == "leader-worker-set"
	input.k8s.pod.group_gpus > 0
}

from := {"flag": "--gpus", "project": "the project file", "manifest": "its nvidia.com/gpu limit"}

gets_from := sprintf("the LeaderWorkerSet group's %d pods together", [input.k8s.pod.group_pods]) if {
	input.target.gpus_from == "manifest"
	input.k8s.pod.group == "leader-worker-set"
} else := from[input.target.gpus_from]

where := lib.where("parallel.tp") if size("tp") > 1

where := lib.where("parallel.pp") if {
	size("tp") == 1
	size("pp") > 1
}

where := lib.where("parallel.dp") if {
	size("tp") == 1
	size("pp") == 1
}

# The sizes that multiply, as written: "tensor-parallel-size 8 ×
# pipeline-parallel-size 2"; the tensor size always shows. TGI states
# only its shards, as num-shard.
sizes := sprintf("num-shard %d", [size("tp")]) if input.kind == "tgi"

else := concat(" × ", [sprintf("%s %d", [name, n]) |
	some i, [name, n] in [["tensor-parallel-size", size("tp")], ["pipeline-parallel-size", size("pp")], ["data-parallel-size", dp]]
	shown(i, n)
])

shown(0, _)

shown(_, n) if n > 1

fails := "TGI starts one shard per GPU, each asserting it has a GPU of its own, and fails at start-up" if input.kind == "tgi"

else := "vLLM starts one worker per GPU and fails at start-up"

findings contains f if {
	g := gets
	need > g
	f := lib.finding(where, sprintf("%s needs %d GPUs but the server gets %d (%s): %s", [sizes, need, g, gets_from, fails]))
}
