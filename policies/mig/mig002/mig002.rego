# METADATA
# title: MIG layout that cannot be placed on the GPU
# custom:
#   id: MIG002
#   slug: mig-layout-invalid
#   severity: error
#   levels: [error, warning, info]
#   rationale: >-
#     mig-parted parses a layout without checking that it fits; the MIG
#     manager finds out on the node, sets nvidia.com/mig.config.state to
#     failed and leaves the GPUs unpartitioned (kubernetes-gpu.md §5).
#     Placement is constrained: 7 compute and 8 memory slices, a 4g
#     instance only at slot 0 (so 4g+4g never fits), one +me instance per
#     GPU, a 3g instance taking 4 memory slices, 1g.10gb meaning a
#     2-slice profile on the A100-40GB (max 4) but a 1-slice one on 80 GB
#     parts (max 7) (gpus.md §2). Each entry is checked against the GPUs
#     of its device-filter, else the target GPU, else every GPU that has
#     its profiles. An entry naming a profile that no GPU in gpulint's
#     catalog has is reported too (warning; info when its device-filter
#     names only GPUs the catalog lacks), not skipped.
#   remediation: >-
#     Use a layout the GPU can hold (the GPU Operator's default configs,
#     e.g. all-balanced, are valid per GPU), or add a device-filter so the
#     entry applies only to GPUs it fits.
#   kinds: [mig, kubernetes]
#   since: 0.1.0
#   fixable: false
#   example: |
#     version: v1
#     mig-configs:
#       two-halves:
#         - devices: all
#           mig-enabled: true
#           mig-devices: {"4g.40gb": 2}
package gpulint.rules.mig002

import data.gpulint.lib

findings contains f if {
	some l in input.mig.layouts
	l.valid == false
	f := lib.finding(l.path, sprintf("MIG config %q entry %d cannot be applied %s: %s%s", [l.config, l.entry, on(l), l.reason, hint(l)]))
}

# Profile names repeat across GPUs with different geometry (gpus.md §2.4).
hint(l) := "; if the entry is meant for other GPUs, add a device-filter for them" if {
	l.gpu_from in {"flag", "project", "manifest"}
} else := ""

on(l) := sprintf("on %s (its device-filter)", [l.gpu]) if l.gpu_from == "device-filter"

on(l) := sprintf("on %s (the target GPU)", [l.gpu]) if l.gpu_from in {"flag", "project", "manifest"}

on(l) := sprintf("on any GPU that has its profiles (%s)", [concat(", ", l.gpus)]) if l.gpu_from == "profiles"

# A profile no catalog GPU has: a wrong name, or a GPU gpulint lacks. The
# entry's device-filter naming only unknown GPUs makes the latter likely.
findings contains f if {
	some l in input.mig.layouts
	count(l.unknown) > 0
	level := {true: "info", false: "warning"}[l.filter_unknown]
	f := lib.with_level(lib.finding(l.path, sprintf(
		"MIG config %q entry %d names %s, which no GPU in gpulint's catalog has (known profiles: %s); the MIG manager cannot apply it on any of them%s",
		[l.config, l.entry, concat(", ", l.unknown), concat(", ", l.known_profiles), unknown_hint(l)],
	)), level)
}

unknown_hint(l) := "; its device-filter names only GPUs the catalog lacks, whose profiles may differ" if {
	l.filter_unknown
} else := ""
