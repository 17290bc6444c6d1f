# METADATA
# title: Batch fixed where it should adapt to the GPU
# custom:
#   id: GPU002
#   slug: fixed-batch-size
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     vLLM's continuous batching packs as many sequences per step as the KV
#     cache holds; a max-num-seqs of 4 or less caps every step at a tiny
#     batch and leaves most of the GPU idle. In training, a micro batch
#     hard-coded for a smaller GPU leaves memory unused while gradient
#     accumulation does the work serially.
#   remediation: >-
#     Raise vLLM's max-num-seqs step by step while watching start-up memory
#     (gpulint offers no edit: the default of 256 or more can run a server
#     sized for a few sequences out of memory at start-up);
#     raise the training micro batch to what the target GPU holds and lower
#     gradient accumulation to keep the global batch (in a fine-tuning
#     recipe: per_device_train_batch_size, micro_batch_size or batch_size).
#   kinds: [deepspeed, vllm, finetune]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, max_num_batched_tokens, enforce_eager, vllm_version, kbit_fp32, activation_offloading]
#   fix_needs: [gpu, model, seq_len, micro_batch]
#   since: 0.1.0
#   fixable: false
#   example: |
#     max-num-seqs: 2
package gpulint.rules.gpu002

import data.gpulint.lib

# fix_needs: the fix sizes memory (a larger micro batch), so it is safe only for the
# GPU, model, sequence length and micro batch it was sized on; an assumed
# sequence length of 2048 or micro batch of 1 is the small end of what runs
# use, so a fix sized on them can run out of memory. The GPU count and the
# method are not needed: their assumed values (1 GPU, full training) are the
# largest per-GPU estimate, which only makes the fix more cautious.

max_small := lib.param("fixed-batch-size", "max_num_seqs_threshold", 4)

findings contains f if {
	input.kind == "vllm"
	n := input.workload.serve.max_num_seqs
	n <= max_small
	# Advice, not a fix: without the flag vLLM defaults to 256 or 1024
	# sequences, and its start-up profiling (the sampler's dummy run over
	# min(max_num_seqs, max_num_batched_tokens) requests) and CUDA-graph
	# capture grow with it, so a server sized for 4 can run out of memory
	# at start-up (vllm-project/vllm vllm/v1/worker/gpu_worker.py @ 0012cf6,
	# compile_or_warm_up_model; vllm.md §3 get_batch_defaults).
	f := lib.with_inputs(lib.finding(lib.where("serve.max_num_seqs"), sprintf("max-num-seqs is %d: continuous batching can run at most %s per step, leaving the GPU mostly idle; raise it step by step while watching start-up memory (dropping it jumps to vLLM's default of 256 or more, which a server sized for %d may not hold)", [n, seqs(n), n])), [])
}

# Training: the target holds at least twice the hard-coded micro batch.
findings contains f if {
	input.kind == "deepspeed"
	micro := input.workload.batch.micro
	is_number(micro)
	fit := input.estimate.max_micro_batch
	fit >= 2 * micro
	f := with_batch_fix(lib.with_gpus_related(lib.finding(lib.where("batch.micro"), sprintf(
		"train_micro_batch_size_per_gpu is %d but %s holds a micro batch of %d for this model (%s); gradient accumulation is doing serially what the GPU could do at once",
		[micro, lib.gpu_name, fit, input.estimate.summary],
	))), fit)
}

# The fix keeps the global batch: accumulation shrinks by the same factor.
with_batch_fix(f, fit) := lib.with_fix(f, sprintf("set train_micro_batch_size_per_gpu to %d and gradient_accumulation_steps to %d%s", [new_micro, acc / (new_micro / micro), kept_note(micro, acc, new_micro, fit)]), [
	lib.set_op(["train_micro_batch_size_per_gpu"], new_micro),
	lib.set_op(["gradient_accumulation_steps"], acc / (new_micro / micro)),
]) if {
	micro := input.workload.batch.micro
	acc := input.workload.batch.accumulation
	is_number(acc)
	new_micro := largest_divisor_step(micro, acc, fit)
	new_micro > micro
} else := lib.with_fix(f, sprintf("set train_micro_batch_size_per_gpu to %d", [fit]), [
	lib.set_op(["train_micro_batch_size_per_gpu"], fit),
]) if {
	not input.workload.batch.global
	not is_number(input.workload.batch.accumulation)
} else := f

# kept_note explains a new micro batch below what fits: only micro × k with
# k dividing the accumulation keeps the global batch.
kept_note(micro, acc, new_micro, fit) := "" if {
	new_micro == fit
} else := sprintf(" (%d, not %d: the largest micro batch that keeps %d samples per GPU per optimizer step)", [new_micro, fit, micro * acc])

# largest_divisor_step is the largest micro × k (k divides accumulation)
# that fits, so the global batch stays the same.
largest_divisor_step(micro, acc, fit) := m if {
	steps := {s | some k in numbers.range(1, acc); acc % k == 0; s := micro * k; s <= fit}
	m := max(steps)
}

seqs(1) := "one sequence"

seqs(n) := sprintf("%d sequences", [n]) if n != 1

# Fine-tuning recipes: the same check, in the recipe's spelling, when
# accumulation gives something to trade (a recipe without accumulation
# would change its global batch), after the advice on the base's
# quantization and on checkpointing (their fixes change what fits).
findings contains f if {
	input.kind == "finetune"
	not lib.finetune_bf16_base_fits
	not lib.finetune_checkpointing_unneeded
	micro := input.workload.batch.micro
	acc := input.workload.batch.accumulation
	is_number(micro)
	is_number(acc)
	acc >= 2
	fit := input.estimate.max_micro_batch
	fit >= 2 * micro
	new_micro := largest_divisor_step(micro, acc, fit)
	new_micro > micro
	mk := lib.recipe_path("batch.micro")
	f := recipe_batch_fix(
		lib.with_gpus_related(lib.finding(mk, sprintf(
			"%s is %d but %s holds a micro batch of %d for this model (%s); gradient accumulation (%d steps) is doing serially what the GPU could do at once",
			[mk[count(mk) - 1], micro, lib.gpu_name, fit, input.estimate.summary, acc],
		))),
		mk, micro, acc, new_micro, fit,
	)
}

# recipe_batch_fix writes the larger micro batch and the accumulation that
# keeps the global batch.
recipe_batch_fix(f, mk, micro, acc, new_micro, fit) := lib.with_fix(
	f,
	sprintf("set %s to %d and %s to %d%s", [mk[count(mk) - 1], new_micro, ak[count(ak) - 1], acc / (new_micro / micro), kept_note(micro, acc, new_micro, fit)]),
	[lib.set_op(mk, new_micro), lib.set_op(ak, acc / (new_micro / micro))],
) if {
	ak := lib.recipe_path("batch.accumulation")
}
