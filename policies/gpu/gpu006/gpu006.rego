# METADATA
# title: FP16 training on a GPU that has BF16
# custom:
#   id: GPU006
#   slug: fp16-where-bf16
#   severity: info
#   rationale: >-
#     FP16 has a 65504 maximum, so mixed-precision training in FP16 needs
#     loss scaling: steps whose gradients overflow are skipped while the
#     scale backs off, and activations that overflow turn into inf/NaN
#     divergence. BF16 has FP32's range and needs no loss scaling, at the
#     same speed and memory on every GPU since Ampere (compute capability
#     8.0, precision.md §1, §4). FP16 remains the right choice on V100 and
#     T4, which is why this rule only fires when the target GPU has BF16.
#   remediation: >-
#     Train in bf16: DeepSpeed "bf16": {"enabled": true} with fp16 off;
#     Accelerate mixed_precision: bf16; fine-tuning recipes bf16: true with
#     fp16: false (gpt-neox: a bf16 block or precision: bfloat16).
#   kinds: [deepspeed, accelerate, finetune]
#   inputs: [gpu]
#   fix_needs: [gpu]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"train_micro_batch_size_per_gpu": 8, "fp16": {"enabled": true, "loss_scale": 0}}
#     # with gpu: H100-80GB
package gpulint.rules.gpu006

import data.gpulint.lib

# fix_needs: [gpu]. The fix swaps FP16 for BF16 because the named GPU has
# BF16; the rule fires only on a known GPU, and the need keeps it that way
# should a GPU ever be assumed.

has_bf16 if {
	lib.gpu_known
	input.target.gpu.bf16 == true
}

ds_block := "bfloat16" if {
	input.doc.bfloat16
	not input.doc.bf16
} else := "bf16"

scaling := "dynamic loss scaling" if {
	object.get(input.doc.fp16, "loss_scale", 0) == 0
} else := sprintf("a static loss scale of %v", [input.doc.fp16.loss_scale])

findings contains f if {
	input.kind == "deepspeed"
	has_bf16
	input.workload.precision == "fp16"
	lib.where("precision") == ["fp16", "enabled"]
	f := lib.with_fix(
		lib.finding(["fp16", "enabled"], sprintf("fp16.enabled is true on %s, which has BF16: FP16 training needs %s and skips steps whose gradients overflow, BF16 needs neither at the same speed", [lib.gpu_name, scaling])),
		sprintf("set fp16.enabled to false and %s.enabled to true", [ds_block]),
		[lib.set_op(["fp16", "enabled"], false), lib.set_op([ds_block, "enabled"], true)],
	)
}

findings contains f if {
	input.kind == "accelerate"
	input.workload.device == "gpu"
	has_bf16
	input.workload.precision == "fp16"
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("mixed_precision is fp16 on %s, which has BF16: FP16 training needs loss scaling and skips steps whose gradients overflow, BF16 needs neither at the same speed", [lib.gpu_name])),
		"set mixed_precision to bf16",
		[lib.set_op(["mixed_precision"], "bf16")],
	)
}

# Fine-tuning recipes: the Trainer-based tools' fp16 flag, gpt-neox's fp16
# block or precision key (torchtune has no FP16 training).
findings contains f if {
	input.kind == "finetune"
	has_bf16
	input.workload.precision == "fp16"
	fix := recipe_fix
	f := lib.with_fix(
		lib.finding(lib.where("precision"), sprintf("the recipe trains in fp16 on %s, which has BF16: FP16 training needs loss scaling and skips steps whose gradients overflow, BF16 needs neither at the same speed", [lib.gpu_name])),
		fix.msg, fix.ops,
	)
}

recipe_fix := {"msg": "set fp16 to false and bf16 to true", "ops": [lib.set_op(["fp16"], false), lib.set_op(["bf16"], true)]} if {
	input.workload.recipe in {"trainer", "axolotl", "llamafactory"}
	lib.where("precision") == ["fp16"]
} else := {"msg": "set precision to bfloat16", "ops": [lib.set_op(["precision"], "bfloat16")]} if {
	lib.where("precision") == ["precision"]
} else := {"msg": sprintf("set fp16.enabled to false and %s.enabled to true", [ds_block]), "ops": [lib.set_op(["fp16", "enabled"], false), lib.set_op([ds_block, "enabled"], true)]} if {
	input.workload.recipe == "gpt-neox"
	lib.where("precision") == ["fp16", "enabled"]
}
