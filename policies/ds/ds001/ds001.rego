# METADATA
# title: Batch sizes that break DeepSpeed's batch identity
# custom:
#   id: DS001
#   slug: batch-size-mismatch
#   severity: error
#   rationale: >-
#     DeepSpeed asserts train_batch_size == train_micro_batch_size_per_gpu
#     × gradient_accumulation_steps × world size and stops at start-up,
#     after the job got its GPUs, with "Check batch related parameters.
#     train_batch_size is not equal to micro_batch_per_gpu *
#     gradient_acc_step * world_size". When only some of the three are
#     given it derives the others with integer division, so a
#     train_batch_size that the others do not divide truncates (30 // 4 //
#     8 = 0 accumulation steps) and fails the same assertion
#     (deepspeed.md §2). The world size is the data-parallel size: the
#     GPUs the job gets (--gpus, the project file, or the num_processes of
#     the Accelerate config that launches the file). A fine-tuning recipe
#     run by the Hugging Face Trainer (TRL, axolotl, LLaMA-Factory) fills
#     the DeepSpeed config it names from its own batch settings and stops
#     with "Please correct the following DeepSpeed config values that
#     mismatch TrainingArguments values" when the config holds a different
#     number instead of "auto" (deepspeed.md §8.1).
#   remediation: >-
#     Set train_batch_size to micro batch × accumulation × GPUs, or drop it
#     and let DeepSpeed derive it; in a DeepSpeed config that a fine-tuning
#     recipe names, write "auto" for the batch sizes so the Trainer fills
#     them from the recipe.
#   kinds: [deepspeed, finetune]
#   since: 0.1.0
#   fixable: false
#   example: |
#     {"train_batch_size": 48, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 2}
#     # with gpus: 4
package gpulint.rules.ds001

import data.gpulint.lib

batch := object.get(input.workload, "batch", {}) if not input.kind == "finetune"

num(k) := batch[k] if is_number(batch[k])

world := input.target.gpus if is_number(input.target.gpus)

# A field that is absent (not "auto").
absent(k) if not batch[k]

gpus(1) := "1 GPU"

gpus(n) := sprintf("%d GPUs", [n]) if n != 1

assertion := "DeepSpeed stops with \"Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size\""

# All three given, world size known.
findings contains f if {
	g := num("global")
	m := num("micro")
	a := num("accumulation")
	w := world
	g != (m * a) * w
	f := lib.with_fix(
		lib.with_gpus_related(lib.with_related(
			lib.finding(lib.where("batch.global"), sprintf("train_batch_size is %d but train_micro_batch_size_per_gpu %d × gradient_accumulation_steps %d × %s = %d: %s", [g, m, a, gpus(w), (m * a) * w, assertion])),
			[lib.where("batch.micro"), lib.where("batch.accumulation")],
		)),
		sprintf("set train_batch_size to %d", [(m * a) * w]),
		[lib.set_op(["train_batch_size"], (m * a) * w)],
	)
}

# All three given, world size unknown: no world size fits.
findings contains f if {
	g := num("global")
	m := num("micro")
	a := num("accumulation")
	not world
	g % (m * a) != 0
	f := lib.finding(lib.where("batch.global"), sprintf("train_batch_size %d is not a multiple of train_micro_batch_size_per_gpu %d × gradient_accumulation_steps %d = %d, so no number of GPUs satisfies it: %s", [g, m, a, m * a, assertion]))
}

# Two of three, world size known: DeepSpeed derives the third with integer
# division (train // micro // world, train // world // accumulation).
findings contains f if {
	g := num("global")
	m := num("micro")
	absent("accumulation")
	w := world
	g % (m * w) != 0
	f := lib.with_gpus_related(lib.finding(lib.where("batch.global"), sprintf("train_batch_size %d is not a multiple of train_micro_batch_size_per_gpu %d × %s = %d: DeepSpeed derives gradient_accumulation_steps = %d // %d // %d = %d and its batch assertion fails", [g, m, gpus(w), m * w, g, m, w, floor(floor(g / m) / w)])))
}

findings contains f if {
	g := num("global")
	a := num("accumulation")
	absent("micro")
	w := world
	g % (a * w) != 0
	f := lib.with_gpus_related(lib.finding(lib.where("batch.global"), sprintf("train_batch_size %d is not a multiple of gradient_accumulation_steps %d × %s = %d: DeepSpeed derives train_micro_batch_size_per_gpu = %d // %d // %d = %d and its batch assertion fails", [g, a, gpus(w), a * w, g, w, a, floor(floor(g / w) / a)])))
}

# Two of three, world size unknown: the given two already disagree.
findings contains f if {
	g := num("global")
	some given, missing in {"micro": "accumulation", "accumulation": "micro"}
	x := num(given)
	absent(missing)
	not world
	g % x != 0
	f := lib.finding(lib.where("batch.global"), sprintf("train_batch_size %d is not a multiple of %s %d, so no number of GPUs satisfies DeepSpeed's batch identity: DeepSpeed derives %s with integer division and its batch assertion fails", [g, key[given], x, key[missing]]))
}

key := {"micro": "train_micro_batch_size_per_gpu", "accumulation": "gradient_accumulation_steps"}

# train_batch_size alone: micro = train // world.
findings contains f if {
	g := num("global")
	absent("micro")
	absent("accumulation")
	w := world
	g % w != 0
	f := lib.with_gpus_related(lib.finding(lib.where("batch.global"), sprintf("train_batch_size %d is not a multiple of %s: DeepSpeed derives train_micro_batch_size_per_gpu = %d // %d = %d and its batch assertion fails", [g, gpus(w), g, w, floor(g / w)])))
}

# Fine-tuning recipes: the Trainer fills the DeepSpeed config it names and
# refuses concrete values that disagree (deepspeed.md §8.1).

ds := input.related.deepspeed

hf_recipe if input.workload.recipe in {"trainer", "axolotl", "llamafactory"}

recipe_num(k) := input.workload.batch[k] if is_number(input.workload.batch[k])

mismatch := "the Trainer stops with \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values\""

ds_keys := {"micro": "train_micro_batch_size_per_gpu", "accumulation": "gradient_accumulation_steps"}

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	not input.doc.auto_find_batch_size == true
	some field, dk in ds_keys
	dv := ds.workload.batch[field]
	is_number(dv)
	rv := recipe_num(field)
	dv != rv
	rk := lib.recipe_where(sprintf("batch.%s", [field]))
	f := lib.with_related(
		lib.finding(rk, sprintf("%s is %d but %s is %d in %s: %s", [lib.recipe_label(sprintf("batch.%s", [field])), rv, dk, dv, ds.file, mismatch])),
		[{"ref": "deepspeed", "path": ds.paths[sprintf("batch.%s", [field])], "message": sprintf("%s %d in %s", [dk, dv, ds.file])}],
	)
}

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	not input.doc.auto_find_batch_size == true
	g := ds.workload.batch.global
	is_number(g)
	m := recipe_num("micro")
	a := recipe_num("accumulation")
	w := world
	g != (m * a) * w
	mk := lib.recipe_path("batch.micro")
	f := lib.with_gpus_related(lib.with_related(
		lib.finding(mk, sprintf("train_batch_size is %d in %s but %s %d × %s %d × %s = %d: %s", [g, ds.file, mk[count(mk) - 1], m, lib.recipe_label("batch.accumulation"), a, gpus(w), (m * a) * w, mismatch])),
		[{"ref": "deepspeed", "path": ds.paths["batch.global"], "message": sprintf("train_batch_size %d in %s", [g, ds.file])}],
	))
}
