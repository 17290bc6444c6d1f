# METADATA
# title: Multi-GPU fine-tune that loads data in the training process
# custom:
#   id: FT001
#   slug: dataloader-starved
#   severity: warning
#   rationale: >-
#     The Hugging Face Trainer (and TRL, axolotl and LLaMA-Factory on top of
#     it) loads batches with dataloader_num_workers 0 unless the recipe
#     says otherwise: "0 means that the data will be loaded in the main
#     process" (transformers training_args.py), so between steps each rank
#     reads, collates and pads its next batch while its GPU waits. With
#     dataloader_pin_memory false the host-to-device copy cannot overlap
#     compute either. On a multi-GPU run the slowest rank's loading stalls
#     every all-reduce. axolotl passes both settings through only when set.
#   remediation: >-
#     Set dataloader_num_workers to a few workers per GPU (4 is a common
#     start; fewer than the CPU cores per GPU) and leave
#     dataloader_pin_memory true.
#   kinds: [finetune]
#   since: 0.1.0
#   fixable: true
#   example: |
#     model_name_or_path: meta-llama/Llama-3.1-8B
#     per_device_train_batch_size: 4
#     dataloader_num_workers: 0
#     # with gpus: 8
package gpulint.rules.ft001

import data.gpulint.lib

workers := lib.param("dataloader-starved", "workers", 4)

# The Trainer-based recipes; torchtune and gpt-neox build their loaders
# without a recipe setting for workers.
hf_recipe if input.workload.recipe in {"trainer", "axolotl", "llamafactory"}

gpus := input.target.gpus if input.target.gpus >= 2

gpus := input.workload.parallel.world_size if {
	not input.target.gpus
	input.workload.parallel.world_size >= 2
}

loads_in_workers if input.workload.dataloader.workers > 0

state := sprintf("dataloader_num_workers is %d", [input.workload.dataloader.workers]) if {
	input.workload.dataloader.workers == 0
} else := "dataloader_num_workers is not set (the Trainer's default is 0)"

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	n := gpus
	not loads_in_workers
	path := lib.recipe_path("dataloader.workers")
	f := lib.with_fix(
		lib.with_gpus_related(lib.finding(path, sprintf("%s: each of the %d GPUs waits while its training process loads, collates and pads the next batch", [state, n]))),
		sprintf("set dataloader_num_workers to %d", [workers]),
		[lib.set_op(path, workers)],
	)
}

findings contains f if {
	input.kind == "finetune"
	hf_recipe
	n := gpus
	input.workload.dataloader.pin_memory == false
	path := lib.where("dataloader.pin_memory")
	f := lib.with_fix(
		lib.with_gpus_related(lib.finding(path, sprintf("dataloader_pin_memory is false: on %d GPUs every batch is copied from pageable host memory, which cannot overlap compute", [n]))),
		"set dataloader_pin_memory to true",
		[lib.set_op(path, true)],
	)
}
