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
#     (accelerate.md §7). TrainingArguments refuses bf16 and fp16 both true
#     ("At most one of fp16 and bf16 can be True, but not both"), and the
#     Trainer refuses a DeepSpeed config whose fp16.enabled or bf16.enabled
#     is a concrete value other than the recipe's flag ("Please correct the
#     following DeepSpeed config values that mismatch TrainingArguments
#     values", deepspeed.md §8.1).
#   remediation: >-
#     Enable exactly one of fp16 and bf16 (and drop amp) in the DeepSpeed
#     config; with deepspeed_config_file, remove mixed_precision from the
#     Accelerate config and set fp16/bf16 in the JSON; in a fine-tuning
#     recipe set one of bf16 and fp16, and write "auto" for fp16.enabled and
#     bf16.enabled in the DeepSpeed config it names.
#   kinds: [deepspeed, accelerate, finetune]
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

# Fine-tuning recipes run by the Hugging Face Trainer.
hf_recipe if input.workload.recipe in {"trainer", "axolotl", "llamafactory"}

flag(k) := b if {
	b := input.doc[k]
	is_boolean(b)
} else := false

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	flag("bf16")
	flag("fp16")
	f := lib.with_related(
		lib.finding(["fp16"], "bf16 and fp16 are both true: TrainingArguments stops with \"At most one of fp16 and bf16 can be True, but not both\""),
		[["bf16"]],
	)
}

# The recipe's flags against the concrete values of the DeepSpeed config
# it names. axolotl's bf16: auto is settled only on the GPU.
ds := input.related.deepspeed

ds_block(name) := "bfloat16" if {
	name == "bf16"
	not "bf16" in object.keys(ds.doc)
	"bfloat16" in object.keys(ds.doc)
} else := name

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	not input.workload.precision == "auto"
	not input.doc.pure_bf16 == true
	some name in ["bf16", "fp16"]
	block := ds_block(name)
	dv := ds.doc[block].enabled
	is_boolean(dv)
	dv != flag(name)
	at := recipe_flag_path(name)
	f := lib.with_related(
		lib.finding(at, sprintf("%s is %v in the recipe but %s.enabled is %v in %s: the Trainer stops with \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values\"", [name, flag(name), block, dv, ds.file])),
		[{"ref": "deepspeed", "path": [block, "enabled"], "message": sprintf("%s.enabled %v in %s", [block, dv, ds.file])}],
	)
}

recipe_flag_path(name) := [name] if {
	name in object.keys(input.doc)
} else := lib.where("deepspeed_config_file")
