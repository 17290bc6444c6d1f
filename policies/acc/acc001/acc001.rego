# METADATA
# title: num_processes disagrees with the GPUs the job gets
# custom:
#   id: ACC001
#   slug: num-processes-mismatch
#   severity: warning
#   rationale: >-
#     Accelerate's num_processes is the total number of processes across
#     all machines (per node: num_processes // num_machines, accelerate.md
#     §2), one per GPU. Fewer processes than GPUs leave GPUs idle for the
#     whole run; more put two processes on one GPU or fail with "invalid
#     device ordinal". Writing the per-node count in a multi-node config is
#     the usual mistake. Checked only when the GPU count comes from --gpus
#     (the job's total), the project file or a manifest (per node), not
#     from the config itself.
#   remediation: >-
#     Set num_processes to the total number of GPUs across all machines.
#   kinds: [accelerate]
#   since: 0.1.0
#   fixable: true
#   example: |
#     distributed_type: MULTI_GPU
#     num_machines: 2
#     num_processes: 8
#     # with gpus: 8 per node
package gpulint.rules.acc001

import data.gpulint.lib

machines := n if {
	n := input.workload.parallel.num_machines
	is_number(n)
} else := 1

# --gpus is the job's total; the project file and manifests count per node.
expected := input.target.gpus if {
	input.target.gpus_from == "flag"
} else := input.target.gpus * machines if {
	input.target.gpus_from in {"project", "manifest"}
}

source := sprintf("%d GPUs from --gpus", [input.target.gpus]) if {
	input.target.gpus_from == "flag"
} else := sprintf("%d GPUs per node × %s", [input.target.gpus, nodes(machines)])

nodes(1) := "1 machine"

nodes(n) := sprintf("%d machines", [n]) if n != 1

findings contains f if {
	input.workload.device == "gpu"
	n := input.workload.parallel.world_size
	is_number(n)
	want := expected
	n != want
	f := lib.with_fix(
		lib.with_gpus_related(lib.finding(lib.where("parallel.world_size"), sprintf("num_processes is %d, the total across %s, but the job gets %d (%s): %s", [n, nodes(machines), want, source, effect(n, want)]))),
		sprintf("set num_processes to %d", [want]),
		[lib.set_op(["num_processes"], want)],
	)
}

effect(n, want) := sprintf("%d GPUs stay idle for the whole run", [want - n]) if n < want

effect(n, want) := "processes outnumber GPUs and share them or fail with \"invalid device ordinal\"" if n > want
