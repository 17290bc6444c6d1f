# METADATA
# title: Activation checkpointing on where the run fits without it
# custom:
#   id: FT003
#   slug: checkpointing-unneeded
#   severity: info
#   rationale: >-
#     Full activation checkpointing keeps only each layer's input and runs
#     the forward pass a second time during backward: about a third more
#     compute per step (backward costs about twice the forward), and 39%
#     measured for GPT-3-size models (Korthikanti et al., Table 4;
#     memory-model.md §3.1). It is the price of memory the run does not
#     have - when the estimate without checkpointing still leaves the
#     headroom on the target GPU, the recomputation buys nothing.
#     LLaMA-Factory turns it on unless disable_gradient_checkpointing is
#     set. Reported after quantized-base-on-large-gpu and before
#     fixed-batch-size, so their fixes apply one at a time.
#   remediation: >-
#     Turn activation checkpointing off: gradient_checkpointing: false
#     (TRL, axolotl), disable_gradient_checkpointing: true (LLaMA-Factory),
#     enable_activation_checkpointing: False (torchtune),
#     checkpoint_activations: false (gpt-neox).
#   kinds: [finetune]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, kbit_fp32, activation_offloading]
#   fix_needs: [gpu, model, seq_len, micro_batch]
#   since: 0.1.0
#   fixable: true
#   example: |
#     model_name_or_path: Qwen/Qwen2.5-0.5B
#     per_device_train_batch_size: 2
#     gradient_checkpointing: true
#     # with gpu: H100-80GB
package gpulint.rules.ft003

import data.gpulint.lib

# fix_needs: the fix sizes memory (turning checkpointing off keeps every activation), so it is safe only for the
# GPU, model, sequence length and micro batch it was sized on; an assumed
# sequence length of 2048 or micro batch of 1 is the small end of what runs
# use, so a fix sized on them can run out of memory. The GPU count and the
# method are not needed: their assumed values (1 GPU, full training) are the
# largest per-GPU estimate, which only makes the fix more cautious.

# The key that turns checkpointing off in the recipe's spelling.
off := {"path": ["disable_gradient_checkpointing"], "value": true} if {
	input.workload.recipe == "llamafactory"
} else := {"path": lib.recipe_path("checkpointing"), "value": false}

findings contains f if {
	input.kind == "finetune"
	lib.finetune_checkpointing_unneeded
	not lib.finetune_bf16_base_fits # that advice comes first
	est := input.estimate
	alt := est.alternatives.no_checkpointing
	k := off.path[count(off.path) - 1]
	f := lib.with_fix(
		lib.finding(lib.where("checkpointing"), sprintf(
			"activation checkpointing is on but the run fits %s without it: %s per GPU of %s (%s with it); recomputing every layer's forward costs about a third more compute per step",
			[lib.gpu_name, lib.gib(alt.total), lib.gib(est.capacity), lib.gib(est.total)],
		)),
		sprintf("set %s to %v", [k, off.value]),
		[lib.set_op(off.path, off.value)],
	)
}
