# METADATA
# title: ZeRO-3 where a lower stage fits
# custom:
#   id: DS003
#   slug: zero-stage-oversized
#   severity: info
#   rationale: >-
#     ZeRO stages 0-2 move the same data per step as plain data parallelism;
#     stage 3 also gathers every layer's parameters in the forward and the
#     backward pass, about 1.5× the communication, which costs throughput
#     on every step, most of all across nodes (deepspeed.md §9). When the
#     memory model says a lower stage fits the target GPU with the default
#     10% headroom, stage 3 buys nothing but that traffic. Needs the GPU,
#     the GPU count and the model.
#   remediation: >-
#     Set the ZeRO stage to the lowest stage that fits (the fix does), and
#     keep stage 3 for models that need it.
#   kinds: [deepspeed, accelerate]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, cuda_context, gpu_memory, activation_offloading]
#   fix_needs: [gpu, model, seq_len, micro_batch]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}
#     # with gpu: H100-80GB, gpus: 8, model: Qwen/Qwen2.5-0.5B
package gpulint.rules.ds003

import data.gpulint.lib

# fix_needs: the fix sizes memory (a lower ZeRO stage keeps more states per GPU), so it is safe only for the
# GPU, model, sequence length and micro batch it was sized on; an assumed
# sequence length of 2048 or micro batch of 1 is the small end of what runs
# use, so a fix sized on them can run out of memory. The GPU count and the
# method are not needed: their assumed values (1 GPU, full training) are the
# largest per-GPU estimate, which only makes the fix more cautious.

zero := object.get(input.workload, "zero", {})

# Optimizer offload needs stage 1 or more.
lowest := 1 if object.get(zero, "offload_optimizer", "none") != "none"

default lowest := 0

fitting := [s |
	some s in numbers.range(lowest, 2)
	input.estimate.stages[sprintf("%d", [s])].fits == true
]

findings contains f if {
	zero.stage == 3
	object.get(zero, "offload_param", "none") == "none"
	input.target.gpus >= 2
	count(fitting) > 0
	s := fitting[0]
	est := input.estimate.stages[sprintf("%d", [s])]
	f := lib.with_fix(
		lib.with_gpus_related(lib.finding(lib.where("zero.stage"), sprintf("ZeRO stage 3 gathers every layer's parameters in each forward and backward pass, yet stage %d fits: about %s per GPU on %s with %d GPUs, within the 10%% headroom (stage 3: %s)", [s, lib.gib(est.total), lib.gpu_name, input.target.gpus, lib.gib(input.estimate.stages["3"].total)]))),
		sprintf("set the ZeRO stage to %d", [s]),
		[lib.set_op(stage_path, s)],
	)
}

stage_path := ["deepspeed_config", "zero_stage"] if input.kind == "accelerate"

stage_path := ["zero_optimization", "stage"] if input.kind == "deepspeed"
