# METADATA
# title: GPU quantity Kubernetes rejects
# custom:
#   id: K8S001
#   slug: gpu-resource-invalid
#   severity: error
#   rationale: >-
#     GPUs and MIG slices are extended resources: the API server accepts
#     only whole numbers (0.5, "500m" are rejected), and a GPU must be set
#     in limits - requests alone is invalid, and requests that differ from
#     limits are rejected (kubernetes-gpu.md §1). The manifest fails at
#     kubectl apply or, inside a Helm chart or an operator's custom
#     resource, when the controller creates the pod - often noticed only
#     as a workload that never starts. Fractional GPUs come only from MIG
#     or from the device plugin's time-slicing. A quantity that is only a
#     template variable ($GPU_PER_NODE, ${GPUS}, a sed stand-in such as
#     NUM_GPUS) is filled in before apply: it is unknown, not invalid, and
#     not reported.
#   remediation: >-
#     Give nvidia.com/gpu (and nvidia.com/mig-*, amd.com/gpu) a whole
#     number in resources.limits; drop requests or make them equal.
#   kinds: [kubernetes]
#   since: 0.1.0
#   fixable: false
#   example: |
#     resources:
#       limits:
#         nvidia.com/gpu: 0.5
package gpulint.rules.k8s001

import data.gpulint.lib

containers contains c if {
	some pod in input.k8s.pods
	some c in pod.containers
}

findings contains f if {
	some c in containers
	some r in c.resources
	not r.integer
	not r.placeholder # $GPUS in a template: unknown until rendered, not invalid
	f := lib.finding(r.path, sprintf("%s is %s in container %q's %s: extended resources must be whole numbers, so Kubernetes rejects the pod (fractional GPUs come only from MIG or time-slicing)", [r.name, shown(r.value), c.name, r.section]))
}

# A GPU in requests without a limit: the limit is what counts, so the fix
# moves the value there.
findings contains f if {
	some c in containers
	some r in c.resources
	r.section == "requests"
	not limited(c, r.name)
	limits := array.concat(c.path, ["resources", "limits"])
	f := lib.with_fix(
		lib.finding(r.path, sprintf("%s is requested without a limit in container %q: GPUs must be set in limits (requests default to them), and requests alone is rejected", [r.name, c.name])),
		sprintf("set limits %s to %s", [r.name, shown(r.value)]),
		[lib.set_op(array.concat(limits, [r.name]), r.value)],
	)
}

findings contains f if {
	some c in containers
	some q in c.resources
	q.section == "requests"
	some l in c.resources
	l.section == "limits"
	l.name == q.name
	q.integer
	l.integer
	q.count != l.count
	f := lib.with_related(
		lib.finding(q.path, sprintf("%s requests (%d) and limits (%d) differ in container %q: extended resources must request exactly their limit, so Kubernetes rejects the pod", [q.name, q.count, l.count, c.name])),
		[l.path],
	)
}

limited(c, name) if {
	some r in c.resources
	r.section == "limits"
	r.name == name
}

shown(v) := sprintf("%q", [v]) if is_string(v)

shown(v) := sprintf("%v", [v]) if not is_string(v)
