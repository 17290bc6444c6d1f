# METADATA
# title: DeepSpeed config in hjson syntax that json.load refuses
# custom:
#   id: DS005
#   slug: deepspeed-config-not-json
#   severity: warning
#   rationale: >-
#     DeepSpeed reads a config path with hjson, so comments and trailing
#     commas pass under its own launcher (deepspeedai/DeepSpeed
#     deepspeed/runtime/config.py, DeepSpeedConfig.__init__; deepspeed.md
#     §1). The Hugging Face Trainer and Accelerate read the same path first,
#     with Python's json.load (huggingface/accelerate
#     src/accelerate/utils/deepspeed.py HfDeepSpeedConfig @ 0a65ca46, which
#     transformers' HfTrainerDeepSpeedConfig and Accelerate's
#     DeepSpeedPlugin build on), and stop with a JSONDecodeError before
#     training starts. Reported on the recipe's deepspeed key or the
#     Accelerate config's deepspeed_config_file, where the file is named; a
#     DeepSpeed config linted alone may be meant for DeepSpeed's launcher
#     and is not flagged.
#   remediation: >-
#     Remove the comments and trailing commas from the DeepSpeed config so
#     it is strict JSON.
#   kinds: [finetune, accelerate]
#   since: 0.1.0
#   fixable: false
#   example: |
#     # recipe.yaml
#     deepspeed: ds_zero2.json
#     # ds_zero2.json
#     {
#       // ZeRO-2
#       "zero_optimization": {"stage": 2},
#     }
package gpulint.rules.ds005

import data.gpulint.lib

ds := input.related.deepspeed

# Who reads the file with json.load: the Trainer behind the recipe, or
# Accelerate when it launches DeepSpeed.
reader := "the Hugging Face Trainer" if {
	input.kind == "finetune"
	input.workload.recipe in {"trainer", "axolotl", "llamafactory"}
} else := "Accelerate" if {
	input.kind == "accelerate"
	input.workload.distributed_type == "DEEPSPEED"
}

more(n) := "" if n == 1

more(n) := sprintf(" (%d hjson-only places in all)", [n]) if n > 1

findings contains f if {
	r := reader
	first := ds.lenient[0]
	n := count(ds.lenient)
	f := lib.with_related(
		lib.finding(lib.where("deepspeed_config_file"), sprintf("%s has a %s at line %d%s, which only DeepSpeed's own hjson reader accepts: %s loads it with json.load and stops with a JSONDecodeError before training starts", [ds.file, first.what, first.line, more(n), r])),
		[{"ref": "deepspeed.lenient", "path": [0], "message": sprintf("first %s in %s", [first.what, ds.file])}],
	)
}
