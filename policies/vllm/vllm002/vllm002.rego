# METADATA
# title: Tensor parallel size does not divide the attention heads
# custom:
#   id: VLLM002
#   slug: tp-not-divisor
#   severity: error
#   rationale: >-
#     vLLM splits attention heads evenly over the tensor-parallel ranks and
#     refuses to start otherwise, with "Total number of attention heads
#     (N) must be divisible by tensor parallel size (T)" (vllm.md §2) -
#     after the pod got its GPUs and loaded the image.
#   remediation: >-
#     Use a tensor-parallel-size that divides the model's attention heads
#     (a power of two for most models), and pipeline parallelism for the
#     rest.
#   kinds: [vllm]
#   since: 0.1.0
#   fixable: false
#   example: |
#     model: Qwen/Qwen2.5-14B-Instruct
#     tensor-parallel-size: 3
package gpulint.rules.vllm002

import data.gpulint.lib

findings contains f if {
	tp := input.workload.parallel.tp
	is_number(tp)
	tp > 1
	heads := input.target.model.heads
	heads > 0
	heads % tp != 0
	f := lib.finding(lib.where("parallel.tp"), sprintf("tensor-parallel-size %d does not divide %s's %d attention heads: vLLM stops with \"Total number of attention heads (%d) must be divisible by tensor parallel size (%d)\"%s", [tp, input.target.model.id, heads, heads, tp, divisors(heads, tp)]))
}

# divisors suggests the nearest tensor-parallel sizes that work.
divisors(heads, tp) := sprintf("; %s divide it", [concat(", ", [sprintf("%d", [d]) | some d in ds])]) if {
	ds := [d | some d in numbers.range(2, min([heads, 2 * tp])); heads % d == 0]
	count(ds) > 0
} else := ""
