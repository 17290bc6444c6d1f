# METADATA
# title: ZeRO sharding over a single GPU
# custom:
#   id: DS002
#   slug: zero3-single-gpu
#   severity: warning
#   rationale: >-
#     ZeRO saves memory by partitioning optimizer states (stage 1),
#     gradients (2) and parameters (3) over the data-parallel ranks: per
#     GPU, stage 1 keeps 4Ψ + 12Ψ/N bytes, stage 3 16Ψ/N (deepspeed.md §9).
#     With one GPU, N = 1 and nothing is saved, while the ZeRO machinery
#     still runs - bucketing and flattening at stages 1 and 2, a gather of
#     every layer's parameters in each forward and backward pass at stage
#     3. Offloading is the exception: ZeRO-Offload and ZeRO-Infinity need
#     stage 1+ or 3 and are the usual way to fit a large model on one GPU,
#     so configs that offload are left alone.
#   remediation: >-
#     Set the ZeRO stage to 0 for single-GPU runs, or configure
#     offload_optimizer / offload_param if the model does not fit.
#   kinds: [deepspeed, accelerate]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}}
#     # with gpus: 1
package gpulint.rules.ds002

import data.gpulint.lib

zero := object.get(input.workload, "zero", {})

single if {
	input.target.gpus == 1
	input.target.gpus_from in {"flag", "project", "manifest", "accelerate", "launcher"}
}

# Accelerate's num_processes is the job's process count.
single if {
	input.kind == "accelerate"
	input.target.gpus == 1
	input.target.gpus_from == "config"
}

# Accelerate on CPU or other accelerators; DeepSpeed configs name no device.
off_gpu if input.workload.device in {"cpu", "xpu", "other"}

no_offload if {
	object.get(zero, "offload_optimizer", "none") == "none"
	object.get(zero, "offload_param", "none") == "none"
}

saving := {1: "optimizer states", 2: "optimizer states and gradients", 3: "optimizer states, gradients and parameters"}

cost := {
	1: "while the ZeRO optimizer still flattens and buckets every step",
	2: "while the ZeRO optimizer still flattens and buckets every step",
	3: "while every layer's parameters are still gathered in each forward and backward pass",
}

findings contains f if {
	not off_gpu
	single
	no_offload
	stage := zero.stage
	stage >= 1
	stage <= 3
	f := lib.with_fix(
		lib.with_gpus_related(lib.finding(lib.where("zero.stage"), sprintf("ZeRO stage %d partitions %s over the data-parallel ranks, but the job runs on 1 GPU: nothing is partitioned and no memory is saved, %s", [stage, saving[stage], cost[stage]]))),
		"set the ZeRO stage to 0",
		stage_patch,
	)
}

stage_patch := [lib.set_op(["deepspeed_config", "zero_stage"], 0)] if input.kind == "accelerate"

stage_patch := [lib.set_op(["zero_optimization", "stage"], 0)] if {
	input.kind == "deepspeed"
	is_object(input.doc.zero_optimization)
}

# Legacy bool form: zero_optimization: true is stage 1.
stage_patch := [lib.set_op(["zero_optimization"], false)] if {
	input.kind == "deepspeed"
	input.doc.zero_optimization == true
}
