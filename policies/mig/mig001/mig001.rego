# METADATA
# title: MIG resource that the node never advertises
# custom:
#   id: MIG001
#   slug: mig-profile-invalid
#   severity: error
#   levels: [error, warning]
#   rationale: >-
#     Under the device plugin's mixed strategy each MIG profile the GPU has
#     is advertised as nvidia.com/mig-<profile>, with + written as .
#     (kubernetes-gpu.md §2). A profile the target GPU does not have (MIG
#     profile names differ per GPU: 1g.5gb exists on the A100-40GB, not on
#     an H100), a malformed name, or a mig-* resource on nodes running the
#     single strategy (a -MIG- product label: slices are advertised as
#     nvidia.com/gpu there) or none, is never advertised - the pod stays
#     Pending with "Insufficient nvidia.com/mig-..." and nothing fails
#     loudly. With the GPU unknown, a profile that no GPU in gpulint's
#     catalog has is a warning: the name is likely wrong, or the nodes have
#     a GPU the catalog lacks. A single-strategy product label
#     (<product>-MIG-<profile>) naming a slice its GPU does not have
#     matches no node either.
#   remediation: >-
#     Request a profile of the target GPU (gpus.md §2 lists them), written
#     as the device plugin advertises it (nvidia.com/mig-1g.10gb,
#     nvidia.com/mig-1g.10gb.me); on single-strategy nodes request
#     nvidia.com/gpu.
#   kinds: [kubernetes]
#   since: 0.1.0
#   fixable: false
#   example: |
#     nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
#     containers:
#       - resources: {limits: {nvidia.com/mig-1g.5gb: 1}}
package gpulint.rules.mig001

import data.gpulint.lib

requests contains [pod, c, m] if {
	some pod in input.k8s.pods
	some c in pod.containers
	some m in c.mig
}

# The resource-name spelling of a MIG profile (the device plugin turns +
# into ., kubernetes-gpu.md §2); C == G profiles only.
well_formed(p) if regex.match(`^[1-9][0-9]*g\.[1-9][0-9]*gb(\.me|\.me\.all|\.gfx|-me)?$`, p)

findings contains f if {
	some [_, c, m] in requests
	contains(m.profile, "+")
	f := lib.finding(m.path, sprintf("nvidia.com/mig-%s in container %q is not a valid resource name: the device plugin advertises %s as nvidia.com/mig-%s, and Kubernetes rejects + in resource names", [m.profile, c.name, m.profile, replace(m.profile, "+", ".")]))
}

findings contains f if {
	some [_, c, m] in requests
	not contains(m.profile, "+")
	not well_formed(m.profile)
	f := lib.finding(m.path, sprintf("nvidia.com/mig-%s in container %q is not a MIG profile the device plugin advertises (<G>g.<M>gb, optionally .me; compute-instance profiles are not exposed), so the pod stays Pending", [m.profile, c.name]))
}

findings contains f if {
	some [_, c, m] in requests
	well_formed(m.profile)
	m.known == false
	f := lib.finding(m.path, sprintf("%s has no MIG profile %s (%s), so nvidia.com/mig-%s is never advertised and container %q stays Pending", [m.gpu, m.profile, profiles(m), m.profile, c.name]))
}

# No GPU known, and no catalog GPU has the profile: likely a wrong name,
# unless the nodes carry a GPU the catalog lacks.
findings contains f if {
	some [_, c, m] in requests
	well_formed(m.profile)
	not m.gpu
	m.known_profiles
	f := lib.with_level(lib.finding(m.path, sprintf("nvidia.com/mig-%s in container %q names a MIG profile that no GPU in gpulint's catalog has (known profiles: %s), so no node advertises it unless its GPU is one the catalog lacks, and the pod stays Pending", [m.profile, c.name, concat(", ", m.known_profiles)])), "warning")
}

# A single-strategy product label naming a slice its GPU does not have:
# gpu-feature-discovery writes <product>-MIG-<profile> for the slices a
# node has, so no node carries this one (kubernetes-gpu.md §2, §3).
findings contains f if {
	some pod in input.k8s.pods
	miss := pod.product_mig_missing
	f := lib.finding(pod.product_path, sprintf("nodes labelled nvidia.com/gpu.product=%s do not exist: %s has no MIG profile %s (%s), so the pod stays Pending", [pod.product, pod.product_gpu, miss.profile, profiles(miss)]))
}

profiles(m) := sprintf("its profiles: %s", [concat(", ", m.gpu_profiles)]) if {
	count(m.gpu_profiles) > 0
} else := "it does not support MIG"

# Strategy mismatch: single (a -MIG- product label, or the strategy label)
# or none advertise no mig-* resources.
strategy(pod) := sprintf("nodes labelled nvidia.com/gpu.product=%s run the single MIG strategy, which advertises MIG slices as nvidia.com/gpu", [pod.product]) if {
	contains(pod.product, "-MIG-")
} else := sprintf("nodes labelled nvidia.com/mig.strategy=%s advertise %s", [pod.mig_strategy, {"single": "MIG slices as nvidia.com/gpu", "none": "whole GPUs only"}[pod.mig_strategy]]) if {
	pod.mig_strategy in {"single", "none"}
}

findings contains f if {
	some [pod, c, m] in requests
	why := strategy(pod)
	f := lib.with_related(
		lib.finding(m.path, sprintf("container %q asks for nvidia.com/mig-%s but %s; mig-* resources exist only under the mixed strategy, so the pod stays Pending", [c.name, m.profile, why])),
		[object.get(pod, "product_path", object.get(pod, "mig_strategy_path", pod.path))],
	)
}
