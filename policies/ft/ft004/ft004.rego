# METADATA
# title: 4-bit base model on a GPU that holds the 16-bit base
# custom:
#   id: FT004
#   slug: quantized-base-on-large-gpu
#   severity: info
#   rationale: >-
#     QLoRA stores the frozen base in 4-bit NF4 to fit a model into memory
#     it would not otherwise fit (memory-model.md §6.1). The saving is paid
#     for on every step: bitsandbytes dequantizes each 4-bit matrix to 16
#     bits for every matmul, so steps run slower than LoRA on a 16-bit base,
#     and the quantized base costs some accuracy. When LoRA on the 16-bit
#     (bf16, or fp16 before Ampere) base fits the target GPU with the
#     headroom left, the 4-bit base trades speed and accuracy for memory
#     the GPU does not need.
#   remediation: >-
#     Load the base in 16 bits and train plain LoRA: load_in_4bit: false
#     (and adapter: lora in axolotl), drop quantization_bit
#     (LLaMA-Factory), or use the lora_ model builder instead of qlora_
#     (torchtune).
#   kinds: [finetune]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, kbit_fp32, activation_offloading]
#   fix_needs: [gpu, model, seq_len, micro_batch]
#   since: 0.1.0
#   fixable: true
#   example: |
#     base_model: meta-llama/Llama-3.1-8B
#     load_in_4bit: true
#     adapter: qlora
#     # with gpu: H100-80GB
package gpulint.rules.ft004

import data.gpulint.lib

# fix_needs: the fix sizes memory (a 16-bit base holds four times the weight memory), so it is safe only for the
# GPU, model, sequence length and micro batch it was sized on; an assumed
# sequence length of 2048 or micro batch of 1 is the small end of what runs
# use, so a fix sized on them can run out of memory. The GPU count and the
# method are not needed: their assumed values (1 GPU, full training) are the
# largest per-GPU estimate, which only makes the fix more cautious.

at := lib.where("quantization.bits")

# The edits that load the base in 16 bits, by where the 4 bits came from.
fix := {"msg": "set load_in_4bit to false and adapter to lora", "ops": [lib.set_op(["load_in_4bit"], false), lib.set_op(["adapter"], "lora")]} if {
	at == ["load_in_4bit"]
	input.doc.adapter == "qlora"
} else := {"msg": sprintf("set %s to false", [at[0]]), "ops": [lib.set_op(at, false)]} if {
	at == ["load_in_4bit"]
} else := {"msg": "set adapter to lora", "ops": [lib.set_op(at, "lora")]} if {
	at == ["adapter"]
} else := {"msg": "remove quantization_bit", "ops": [lib.remove_op(at)]} if {
	at == ["quantization_bit"]
} else := {"msg": sprintf("set model._component_ to %s", [c]), "ops": [lib.set_op(at, c)]} if {
	at == ["model", "_component_"]
	c := replace(input.doc.model._component_, ".qlora_", ".lora_")
}

findings contains f if {
	input.kind == "finetune"
	lib.finetune_bf16_base_fits
	est := input.estimate
	alt := est.alternatives.bf16_base
	msg := sprintf(
		"the base model is loaded in 4 bits (QLoRA, %s per GPU) but LoRA on the 16-bit base fits %s with room to spare (%s of %s): dequantizing the 4-bit weights in every matmul slows each step and quantization costs some accuracy, for memory this GPU does not need",
		[lib.gib(est.total), lib.gpu_name, lib.gib(alt.total), lib.gib(est.capacity)],
	)
	f := lib.with_fix(lib.finding(at, msg), fix.msg, fix.ops)
}
