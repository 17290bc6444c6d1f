# METADATA
# title: Workload does not fit its MIG partitioning
# custom:
#   id: GPU003
#   slug: mig-over-partitioned
#   levels: [error, info]
#   severity: error
#   rationale: >-
#     A MIG slice is a hard memory wall: a workload larger than its slice
#     dies with CUDA out of memory at start-up. Slices cannot be pooled -
#     one process sees one MIG device, and there is no NVLink or P2P
#     between slices, so asking a container for two slices or running
#     tensor parallelism across them does not give it more memory. The
#     profile name states the slice's memory: with no node label naming
#     the parent GPU, a workload larger than the slice on every catalog GPU
#     that has the profile is reported all the same.
#   remediation: >-
#     Request one slice of a larger profile that holds the workload, or a
#     whole GPU (nvidia.com/gpu: 1).
#   kinds: [kubernetes, vllm, tgi]
#   inputs: [gpu, model]
#   since: 0.1.0
#   fixable: false
#   example: |
#     resources:
#       limits:
#         nvidia.com/mig-1g.10gb: 2
package gpulint.rules.gpu003

import data.gpulint.lib

# A container asking for more than one MIG slice (mixed strategy).
findings contains f if {
	input.kind == "kubernetes"
	some pod in input.k8s.pods
	some c in pod.containers
	total := sum([m.count | some m in c.mig])
	total > 1
	some m in c.mig
	m.count == max([x.count | some x in c.mig])
	f := one_slice_fix(lib.finding(m.path, sprintf(
		"container %q asks for %d MIG slices; one process uses one MIG device and slices cannot be pooled, so the extra slices add no memory to it",
		[c.name, total],
	)), c, m)
}

# With one MIG profile requested, asking for one slice of it keeps what
# the process can use and frees the rest; requests, when written, must
# stay equal to limits.
one_slice_fix(f, c, m) := lib.with_fix(f, sprintf("request one %s slice", [m.profile]), array.concat(
	[lib.set_op(m.path, 1)],
	[lib.set_op(rp, 1) | rp := requests_path(c, m)],
)) if {
	count(c.mig) == 1
} else := f

requests_path(c, m) := p if {
	p := array.concat(c.path, ["resources", "requests", concat("", ["nvidia.com/mig-", m.profile])])
	walk(input.doc, [p, _])
}

# Single strategy: nvidia.com/gpu counts MIG devices on a MIG node.
findings contains f if {
	input.kind == "kubernetes"
	some pod in input.k8s.pods
	contains(pod.product, "-MIG-")
	some c in pod.containers
	c.gpu > 1
	f := lib.with_fix(lib.finding(c.gpu_path, sprintf(
		"container %q asks for %d GPUs on nodes labelled %s, which are MIG slices; one process uses one MIG device",
		[c.name, c.gpu, pod.product],
	)), "request one MIG device", array.concat(
		[lib.set_op(c.gpu_path, 1)],
		[lib.set_op(rp, 1) | rp := array.concat(c.path, ["resources", "requests", "nvidia.com/gpu"]); rp != c.gpu_path; walk(input.doc, [rp, _])],
	))
}

# A vLLM or TGI server whose estimate is larger than its MIG slice.
findings contains f if {
	input.kind in {"vllm", "tgi"}
	input.target.mig_profile
	est := input.estimate
	est.total > est.capacity
	f := lib.finding(lib.where("model"), sprintf(
		"%s needs about %s per GPU but MIG slice %s holds %s (%s)",
		[model_name, lib.gib(est.total), input.target.mig_profile.name, lib.gib(est.capacity), est.summary],
	))
}

model_name := input.workload.model

default model_name := "this workload"
