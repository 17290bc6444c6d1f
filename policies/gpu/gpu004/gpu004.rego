# METADATA
# title: Estimated GPU memory exceeds the GPU
# custom:
#   id: GPU004
#   slug: vram-overcommit
#   severity: error
#   levels: [error, warning, info]
#   rationale: >-
#     A job whose weights, gradients, optimizer states, activations or KV
#     cache do not fit in GPU memory dies with CUDA out of memory at
#     start-up or at its first step - after it waited for and got its GPUs.
#     Under 10% headroom leaves no room for fragmentation, NCCL buffers and
#     CUDA graphs and fails intermittently. For vLLM this rule reports
#     weights, activations and non-torch memory that leave no room for a
#     single KV-cache block ("No available memory for the cache blocks");
#     a KV cache too small for max-model-len is kv-cache-overflow.
#   remediation: >-
#     Shard more (a higher ZeRO stage or tensor parallelism), offload, lower
#     the micro batch or max-model-len, enable activation checkpointing, or
#     use a larger GPU; `gpulint fix --tune` proposes a plan that fits.
#   kinds: [deepspeed, accelerate, vllm, finetune, tgi]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, max_num_batched_tokens, enforce_eager, kbit_fp32]
#   since: 0.1.0
#   fixable: false
#   example: |
#     {"train_micro_batch_size_per_gpu": 64, "zero_optimization": {"stage": 0}}
package gpulint.rules.gpu004

import data.gpulint.lib

headroom := lib.param("vram-overcommit", "headroom", 0.1)

where := lib.where("model") if input.kind in {"vllm", "finetune", "tgi"}

where := lib.where("zero.stage") if not input.kind in {"vllm", "finetune", "tgi"}

# vLLM: only when not even one KV block fits; a cache that exists but is
# shorter than max-model-len is kv-cache-overflow's.
kv_room if input.estimate.serve.kv_cache_tokens > 0

findings contains f if {
	not input.target.mig_profile
	est := input.estimate
	est.total > est.capacity
	not kv_room
	f := lib.with_inputs(lib.finding(where, sprintf(
		"estimated %s per GPU exceeds %s's %s: %s",
		[lib.gib(est.total), lib.gpu_name, lib.gib(est.capacity), est.summary],
	)), rests_on(est))
}

# rests_on names the inputs an overcommit verdict holds for. When the
# weights and gradients alone exceed the GPU, the optimizer does not
# matter either; when the model states alone (weights, gradients,
# optimizer states) do, no sequence length or micro batch makes it fit:
# the verdict rests on the GPU, the model, the world size and the method
# (and on what sizes those states: LoRA, sharding, a stated GPU memory or
# CUDA context, the optimizer). Otherwise the activations decide, and so
# do the sequence length, micro batch, attention kernel, loss and vLLM's
# batching.
weights_inputs := ["gpu", "gpus", "model", "method", "optimizer_in_backward",
	"lora_rank", "lora_targets", "fsdp", "cuda_context", "gpu_memory", "kbit_fp32"]

states_inputs := array.concat(weights_inputs, ["optimizer"])

rests_on(est) := weights_inputs if {
	b := est.breakdown
	b.weights + b.gradients > est.capacity
} else := states_inputs if {
	b := est.breakdown
	(b.weights + b.gradients) + b.optimizer_states > est.capacity
} else := array.concat(states_inputs, ["seq_len", "micro_batch", "attention", "loss", "max_num_batched_tokens", "enforce_eager"])

findings contains f if {
	not input.target.mig_profile
	est := input.estimate
	est.total <= est.capacity
	free := est.capacity - est.total
	free < headroom * est.capacity
	f := lib.with_level(lib.finding(where, sprintf(
		"estimated %s per GPU leaves %s (%s) of %s's %s, under the %s headroom fragmentation, NCCL and CUDA graphs need: %s",
		[lib.gib(est.total), lib.gib(free), lib.pct(free / est.capacity), lib.gpu_name, lib.gib(est.capacity), lib.pct(headroom), est.summary],
	)), "warning")
}
