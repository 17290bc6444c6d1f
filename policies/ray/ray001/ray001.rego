# METADATA
# title: Ray GPU resources disagree with the GPUs the pods get
# custom:
#   id: RAY001
#   slug: ray-gpu-mismatch
#   severity: warning
#   rationale: >-
#     KubeRay passes each Ray container's nvidia.com/gpu limit to ray start
#     as --num-gpus; a num-gpus in the group's rayStartParams (or a GPU entry
#     in its resources) overrides it, and Ray then places that many GPU
#     tasks and actors on every pod of the group whatever devices the pod
#     got (ray-project/ray doc/source/cluster/kubernetes/user-guides/gpu.rst,
#     "Overriding Ray GPU capacity"). More Ray GPUs than the limit puts GPU
#     actors, such as vLLM workers, on pods without a device for them: they
#     fail to start or crowd onto the devices there are. Fewer leaves GPUs
#     the pod pays for idle. A warning, not an error: Ray's resources are
#     logical, and a cluster may advertise GPUs it lacks on purpose (a
#     sample or test whose tasks never touch CUDA, deliberate sharing). A group whose pods are pinned to GPU nodes (a
#     GPU node selector or affinity) but ask for no GPU gets no device from
#     the device plugin and no GPU in Ray: KubeRay advertises no GPU to Ray
#     there, so GPU work never lands on the GPU node the pod holds (and the
#     container may still see every GPU of the node: without a GPU request
#     NVIDIA_VISIBLE_DEVICES defaults to all, the same page notes).
#     The same holds for an LLM engine whose Ray accelerator_type (Ray
#     Serve LLM's LLMConfig, ray.data.llm's processor config) names another
#     GPU than the GPU worker group's nodes: Ray places the replica only on
#     a node with the accelerator_type resource of that GPU, so it never
#     starts.
#   remediation: >-
#     Make rayStartParams num-gpus equal the container's nvidia.com/gpu
#     limit, or drop it and let KubeRay pass the limit; give a group pinned
#     to GPU nodes an nvidia.com/gpu limit, or drop the GPU node selector;
#     make accelerator_type name the GPU the worker nodes have.
#   kinds: [kubernetes, vllm]
#   since: 0.2.0
#   fixable: false
#   example: |
#     workerGroupSpecs:
#       - rayStartParams: {num-gpus: "4"}
#         template:
#           spec:
#             containers:
#               - resources: {limits: {nvidia.com/gpu: 1}}
package gpulint.rules.ray001

import data.gpulint.lib

ray_pods := [p | some p in input.k8s.pods; p.group == "ray"]

# limit is the pod's nvidia.com/gpu limit over its (non-init) containers,
# and where the first of them states it.
limit(p) := sum([c.gpu | some c in p.containers; not init(c)])

limit_path(p) := [c.gpu_path | some c in p.containers; not init(c); c.gpu > 0][0]

init(c) if c.path[count(c.path) - 2] == "initContainers"

# A count that is a template variable is unknown, not zero.
placeholder(p) if {
	some c in p.containers
	some r in c.resources
	r.placeholder
}

# What the group advertises to Ray, and where: num-gpus wins over a GPU
# entry in resources, as ray start reads it.
advertised(p) := [p.ray.num_gpus, p.ray.num_gpus_path, "rayStartParams num-gpus"] if {
	p.ray.num_gpus_path
} else := [p.ray.resource_gpu, p.ray.resource_gpu_path, "rayStartParams resources GPU"] if {
	p.ray.resource_gpu_path
}

fmt_n(n) := sprintf("%d", [n]) if n == floor(n) else := sprintf("%v", [n])

findings contains f if {
	some p in ray_pods
	not placeholder(p)
	[n, at, what] := advertised(p)
	m := limit(p)
	n > m
	msg := sprintf("%s is %s but the pod's containers get %d nvidia.com/gpu: Ray schedules up to %s GPUs of tasks and actors on each pod of the group, which has %d", [what, fmt_n(n), m, fmt_n(n), m])
	base := lib.finding(at, msg)
	f := with_limit(base, p)
}

findings contains f if {
	some p in ray_pods
	not placeholder(p)
	[n, at, what] := advertised(p)
	m := limit(p)
	n < m
	msg := sprintf("%s is %s but the pod's containers get %d nvidia.com/gpu: Ray schedules GPU work on %s of them and the rest sit idle", [what, fmt_n(n), m, fmt_n(n)])
	f := with_limit(lib.finding(at, msg), p)
}

with_limit(f, p) := lib.with_related(f, [{"path": limit_path(p), "message": "the container's nvidia.com/gpu limit"}]) if {
	limit_path(p)
} else := f

# A GPU node selector or affinity (a product label, or a hint the
# hardware table knows) on a group that asks for no GPU at all.
gpu_nodes(p) := [p.product, p.product_path] if {
	p.product
} else := [h.values[0], h.path] if {
	some h in p.hardware
	count(h.gpus) > 0
}

findings contains f if {
	some p in ray_pods
	not placeholder(p)
	limit(p) == 0
	not advertised(p)
	not gpu_resource(p)
	[label, at] := gpu_nodes(p)
	msg := sprintf("the pod is pinned to GPU nodes (%s) but its containers ask for no nvidia.com/gpu: KubeRay advertises no GPU to Ray there, so GPU work never lands on the GPU node the pod holds", [label])
	f := lib.finding(at, msg)
}

# Any other GPU-count resource (MIG slices, shared GPUs) is a GPU request.
gpu_resource(p) if {
	some c in p.containers
	some r in c.resources
	r.name != "nvidia.com/gpu"
}

# An engine's accelerator_type against the GPU worker group's nodes
# (input.ray, vLLM subjects of a Ray resource).
findings contains f if {
	a := input.ray.accelerator
	a.gpu != a.node_gpu
	msg := sprintf("accelerator_type %s asks Ray for %s nodes but the GPU worker group's nodes have %s: no node offers the accelerator_type resource, so the replica never starts", [a.value, a.gpu, a.node_gpu])
	f := lib.with_related(lib.finding(a.path, msg), [{"path": a.node_path, "message": sprintf("the worker group's nodes (%s)", [a.node_gpu])}])
}
