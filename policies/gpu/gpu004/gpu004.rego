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
#     a KV cache too small for max-model-len is kv-cache-overflow. An
#     NVIDIA NIM server, whose engine options NIM picks, has no such rule:
#     one whole sequence of its context that does not fit is reported here.
#   remediation: >-
#     Shard more (a higher ZeRO stage or tensor parallelism), offload, lower
#     the micro batch or max-model-len, enable activation checkpointing, or
#     use a larger GPU; `gpulint fix --tune` proposes a plan that fits.
#   kinds: [deepspeed, accelerate, vllm, finetune, tgi, nim]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, max_num_batched_tokens, enforce_eager, vllm_version, kbit_fp32, activation_offloading]
#   since: 0.1.0
#   fixable: false
#   example: |
#     {"train_micro_batch_size_per_gpu": 64, "zero_optimization": {"stage": 0}}
package gpulint.rules.gpu004

import data.gpulint.lib

headroom := lib.param("vram-overcommit", "headroom", 0.1)

where := lib.where("model") if input.kind in {"vllm", "finetune", "tgi", "nim"}

where := lib.where("zero.stage") if not input.kind in {"vllm", "finetune", "tgi", "nim"}

# vLLM: only when not even one KV block fits; a cache that exists but is
# shorter than max-model-len is kv-cache-overflow's. A NIM's server has no
# such rule (its engine options are NIM's, not the file's): one whole
# sequence of its context that does not fit is reported here.
kv_room if {
	input.kind != "nim"
	input.estimate.serve.kv_cache_tokens > 0
}

# paged is the optimizer state a paged optimizer keeps in CUDA unified
# memory (estimate.paged_optimizer; bitsandbytes' paged optimizers), which
# the driver pages to host memory when the GPU fills instead of failing
# ("automatic page-to-page transfers between the CPU and GPU for error-free
# GPU processing in the scenario where the GPU occasionally runs
# out-of-memory", Dettmers et al., QLoRA, arXiv:2305.14314, Paged
# Optimizers). The estimate counts it on the GPU; a run that exceeds the
# GPU only by it does not fail, it slows.
paged := object.get(input.estimate, "paged_optimizer", 0)

paged_note := sprintf(" (%s of it paged optimizer state, which pages to host as the GPU fills; the rest still exceeds)", [lib.gib(paged)]) if paged > 0 else := ""

findings contains f if {
	not input.target.mig_profile
	est := input.estimate
	est.total - paged > est.capacity
	not kv_room
	f := lib.with_inputs(lib.finding(where, sprintf(
		"estimated %s per GPU%s exceeds %s's %s: %s%s",
		[lib.gib(est.total), paged_note, lib.gpu_name, lib.gib(est.capacity), est.summary, method_note],
	)), rests_on(est))
}

# Over the GPU only by a paged optimizer's state: the run fits, at the
# speed of paging that state over PCIe each step.
findings contains f if {
	not input.target.mig_profile
	est := input.estimate
	paged > 0
	est.total > est.capacity
	est.total - paged <= est.capacity
	f := lib.with_inputs(lib.with_level(lib.finding(where, sprintf(
		"estimated %s per GPU exceeds %s's %s only by the paged optimizer's %s of state, which pages to host memory as the GPU fills: the run fits at the cost of paging it each step: %s",
		[lib.gib(est.total), lib.gpu_name, lib.gib(est.capacity), lib.gib(paged), est.summary],
	)), "info"), activation_inputs)
}

# A training config that does not say how its script trains is judged as
# a full fine-tune (the method input, assumed); estimate.open holds the
# same run with LoRA and QLoRA (lint/alternatives.go). When every method
# gives the verdict it does not rest on the method, and the message says
# what the others need either way.
method_open := input.estimate.open if input.estimate.open.input == "method"

method_note := sprintf("; %s", [method_open.note]) if method_open.note else := ""

# all_inputs are what the headroom verdict rests on, less the method when
# every method gives the verdict.
all_inputs := without_method(activation_inputs) if method_open.agree == true
else := activation_inputs

# One input that decides the memory is unstated and its plausible values
# disagree (lint/alternatives.go: the sharding a multi-GPU full fine-tune's
# launcher picks): no verdict holds, so this is advice naming which
# values fit and what to state. When every value agrees, estimate holds
# the verdict of the value that needs least and the clauses above judge it.
findings contains f if {
	not input.target.mig_profile
	o := input.estimate.open
	o.agree == false
	not input.estimate.total # a method left open still has the assumed method's verdict
	f := lib.with_inputs(lib.with_level(lib.finding(where, sprintf(
		"%s; %s",
		[o.note, o.settle],
	)), "info"), ["gpu", "gpus", "model", "seq_len", "micro_batch", "method"])
}

# rests_on names the inputs an overcommit verdict holds for. When the
# weights and gradients alone exceed the GPU, the optimizer does not
# matter either; when the model states alone (weights, gradients,
# optimizer states) do, no sequence length or micro batch makes it fit:
# the verdict rests on the GPU, the model, the world size and the method
# (and on what sizes those states: LoRA, sharding, a stated GPU memory or
# CUDA context, the optimizer). Otherwise the activations decide, and so
# do the sequence length, micro batch, attention kernel, loss and vLLM's
# batching. When every training method gives the verdict (method_open),
# it does not rest on the method.
weights_inputs := ["gpu", "gpus", "model", "method", "optimizer_in_backward",
	"lora_rank", "lora_targets", "fsdp", "cuda_context", "gpu_memory", "kbit_fp32"]

states_inputs := array.concat(weights_inputs, ["optimizer"])

activation_inputs := array.concat(states_inputs, ["seq_len", "micro_batch", "attention", "loss", "max_num_batched_tokens", "enforce_eager", "activation_offloading"])

without_method(xs) := [x | some x in xs; x != "method"]

rests_on(est) := without_method(states_inputs) if {
	method_open.agree == true
	method_open.states_over == true
} else := without_method(activation_inputs) if {
	method_open.agree == true
} else := weights_inputs if {
	b := est.breakdown
	b.weights + b.gradients > est.capacity
} else := states_inputs if {
	b := est.breakdown
	((b.weights + b.gradients) + b.optimizer_states) - paged > est.capacity
} else := activation_inputs

# A paged optimizer's state gives the GPU back as it fills (paged, above),
# so a run over the GPU only by it is info; one under the GPU with it
# counted is no worse: thin headroom that the rest alone would keep is
# info, and says so. Without paged state, or when the rest alone is short
# of the headroom too, it is a warning.
headroom_level := "info" if {
	paged > 0
	input.estimate.capacity - (input.estimate.total - paged) >= headroom * input.estimate.capacity
} else := "warning"

headroom_paged_note := sprintf(" (%s of it paged optimizer state, which pages to host as the GPU fills: the rest alone keeps the headroom)", [lib.gib(paged)]) if headroom_level == "info"
else := sprintf(" (%s of it paged optimizer state; the rest alone is short of the headroom too)", [lib.gib(paged)]) if paged > 0
else := ""

findings contains f if {
	not input.target.mig_profile
	est := input.estimate
	est.total <= est.capacity
	free := est.capacity - est.total
	free < headroom * est.capacity
	f := lib.with_inputs(lib.with_level(lib.finding(where, sprintf(
		"estimated %s per GPU%s leaves %s (%s) of %s's %s, under the %s headroom fragmentation, NCCL and CUDA graphs need: %s%s",
		[lib.gib(est.total), headroom_paged_note, lib.gib(free), lib.pct(free / est.capacity), lib.gpu_name, lib.gib(est.capacity), lib.pct(headroom), est.summary, method_note],
	)), headroom_level), all_inputs)
}
