# METADATA
# title: Precision settings that contradict each other
# custom:
#   id: GPU007
#   slug: precision-conflict
#   severity: error
#   rationale: >-
#     DeepSpeed refuses a config with both fp16 and bf16 enabled
#     (AssertionError "bfloat16 and fp16 modes cannot be simultaneously
#     enabled") and one that enables Apex amp next to either
#     (NotImplementedError), at start-up after the job got its GPUs
#     (deepspeed.md §7). accelerate launch refuses a config that points to
#     a deepspeed_config_file and also sets mixed_precision - any non-null
#     value, even 'no' - with "When using `deepspeed_config_file`, the
#     following accelerate config variables will be ignored:
#     ['mixed_precision']"; the precision belongs in the DeepSpeed JSON
#     (accelerate.md §7).
#   remediation: >-
#     Enable exactly one of fp16 and bf16 (and drop amp) in the DeepSpeed
#     config; with deepspeed_config_file, remove mixed_precision from the
#     Accelerate config and set fp16/bf16 in the JSON.
#   kinds: [deepspeed, accelerate]
#   since: 0.1.0
#   fixable: false
#   example: |
#     {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
package gpulint.rules.gpu007

import data.gpulint.lib

on(block) if input.doc[block].enabled == true

bf_block := "bf16" if on("bf16")

bf_block := "bfloat16" if {
	not on("bf16")
	on("bfloat16")
}

findings contains f if {
	input.kind == "deepspeed"
	on("fp16")
	b := bf_block
	f := lib.with_related(
		lib.finding([b, "enabled"], sprintf("fp16.enabled and %s.enabled are both true: DeepSpeed stops with \"bfloat16 and fp16 modes cannot be simultaneously enabled\"", [b])),
		[["fp16", "enabled"]],
	)
}

findings contains f if {
	input.kind == "deepspeed"
	on("amp")
	some b in ["fp16", "bf16", "bfloat16"]
	on(b)
	f := lib.with_related(
		lib.finding(["amp", "enabled"], sprintf("amp.enabled and %s.enabled are both true: DeepSpeed cannot combine Apex amp with its own %s mode and stops with NotImplementedError", [b, b])),
		[[b, "enabled"]],
	)
}

findings contains f if {
	input.kind == "accelerate"
	input.workload.deepspeed_config_file
	"mixed_precision" in object.keys(input.doc)
	input.doc.mixed_precision != null
	f := lib.with_fix(
		lib.finding(["mixed_precision"], sprintf("mixed_precision is %s next to deepspeed_config_file %s: accelerate launch stops with \"When using `deepspeed_config_file`, the following accelerate config variables will be ignored: ['mixed_precision']\"", [written(input.doc.mixed_precision), input.workload.deepspeed_config_file])),
		"remove mixed_precision (set fp16 or bf16 in the DeepSpeed config instead)",
		[lib.remove_op(["mixed_precision"])],
	)
}

written(false) := "false (an unquoted NO)"

written(v) := sprintf("'%v'", [v]) if v != false
