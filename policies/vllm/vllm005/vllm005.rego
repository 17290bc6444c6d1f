# METADATA
# title: enforce-eager turns off CUDA graphs
# custom:
#   id: VLLM005
#   slug: vllm-enforce-eager
#   severity: info
#   rationale: >-
#     enforce_eager runs every decode step in eager PyTorch instead of
#     replaying captured CUDA graphs (vllm.md §2). It saves the memory the
#     graphs take but makes decoding, which is launch-bound at small
#     batches, markedly slower for the whole life of the server. It is a
#     debugging switch and a workaround for old GPUs and versions, often
#     left in configs copied from one.
#   remediation: >-
#     Remove enforce-eager; if graph capture ran out of memory, lower
#     gpu-memory-utilization a little instead.
#   kinds: [vllm]
#   since: 0.1.0
#   fixable: true
#   example: |
#     enforce-eager: true
package gpulint.rules.vllm005

import data.gpulint.lib

findings contains f if {
	not lib.vllm_off_gpu # CPU and other backends have no CUDA graphs
	input.workload.serve.enforce_eager == true
	f := lib.with_fix(
		lib.finding(lib.where("serve.enforce_eager"), "enforce-eager disables CUDA graphs: every decode step runs eagerly and decoding is slower for the life of the server"),
		"remove enforce-eager",
		[lib.remove_op(["enforce-eager"])],
	)
}
