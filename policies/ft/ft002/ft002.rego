# METADATA
# title: Full fine-tune sharded across GPUs where LoRA fits one
# custom:
#   id: FT002
#   slug: full-finetune-where-lora
#   severity: info
#   rationale: >-
#     A full fine-tune keeps gradients and optimizer states for every
#     weight: about 16 bytes per parameter in mixed precision
#     (memory-model.md §1), so a model that does not fit one GPU is run
#     with ZeRO-3 or FSDP full sharding, or with optimizer and parameter
#     offload, across every GPU of the job - paying the all-gathers and
#     host transfers on every step. LoRA trains a few million adapter
#     parameters on a frozen 16-bit base (memory-model.md §6.1): when that
#     fits one GPU with room to spare, the other GPUs are free for other
#     jobs or for data parallelism without any sharding. LoRA is not the
#     same training as a full fine-tune; this is advice on cost, for runs
#     where adapters are good enough.
#   remediation: >-
#     Consider LoRA for this model (axolotl adapter: lora, LLaMA-Factory
#     finetuning_type: lora, TRL use_peft: true, a torchtune lora_ model
#     builder), on one GPU or data-parallel without ZeRO-3 or offload.
#   kinds: [finetune]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, kbit_fp32, activation_offloading]
#   since: 0.1.0
#   fixable: false
#   example: |
#     model_name_or_path: google/gemma-2-27b
#     torch_dtype: bfloat16
#     bf16: true
#     per_device_train_batch_size: 1
#     gradient_checkpointing: true
#     deepspeed: zero3.json  # zero_optimization.stage 3
#     # with gpu: A100-80GB, gpus: 8
package gpulint.rules.ft002

import data.gpulint.lib

# How the full fine-tune is spread: ZeRO-3, FSDP full sharding or
# offload.
zero := object.get(input.workload, "zero", {})

offloads := [k |
	some k in ["optimizer", "param"]
	not object.get(zero, concat("_", ["offload", k]), "none") == "none"
]

spread := sprintf("ZeRO-%d with %s offload", [zero.stage, concat(" and ", offloads)]) if {
	count(offloads) > 0
} else := "ZeRO-3" if {
	zero.stage == 3
} else := sprintf("FSDP %s with CPU offload", [input.workload.fsdp.sharding]) if {
	input.workload.fsdp.cpu_offload == true
} else := sprintf("FSDP %s", [input.workload.fsdp.sharding]) if {
	input.workload.fsdp.sharding in {"full_shard", "hybrid_shard"}
}

gpus := object.get(input.target, "gpus", 1)

gpus_text := "one GPU" if gpus == 1

gpus_text := sprintf("%d GPUs", [gpus]) if gpus > 1

model := input.workload.model

default model := "this model"

findings contains f if {
	input.kind == "finetune"
	input.workload.adapter.type == "none"
	how := spread
	est := input.estimate
	est.fits == true # else vram-overcommit says more
	alt := est.alternatives
	alt.unsharded.fits == false
	alt.lora.fits == true
	f := lib.with_gpus_related(lib.finding(lib.where("model"), sprintf(
		"full fine-tune of %s needs %s across %s (%s per GPU; %s without sharding or offload, over %s's %s); LoRA rank %d of the same model fits one %s at %s: it would free %s and the gradients and optimizer states of every frozen weight, if adapters are good enough for this training",
		[model, how, gpus_text, lib.gib(est.total), lib.gib(alt.unsharded.total), lib.gpu_name, lib.gib(est.capacity), alt.lora.rank, lib.gpu_name, lib.gib(alt.lora.total), freed],
	)))
}

freed := sprintf("%d of the %d GPUs", [gpus - 1, gpus]) if gpus > 1

freed := "the offload's host memory and PCIe traffic" if gpus == 1
