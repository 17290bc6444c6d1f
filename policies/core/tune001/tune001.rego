# METADATA
# title: Settings the tuner would size differently for the target
# description: Reported by the tuner (tuner.MakePlan), not by a Rego body.
# custom:
#   id: TUNE001
#   slug: tuned-settings
#   severity: info
#   rationale: >-
#     Hand-set batch sizes, ZeRO stages, tensor-parallel degrees and vLLM
#     memory settings are usually copied from another GPU. The tuner sizes
#     them to the target from the memory model - the lowest ZeRO stage that
#     fits, the largest micro batch under the headroom with the global batch
#     kept, the smallest tensor-parallel degree that fits - and shows the
#     arithmetic behind each choice.
#   remediation: >-
#     Review the proposed settings and apply them with `gpulint fix --tune`
#     (plain `gpulint fix` never applies them).
#   kinds: [deepspeed, accelerate, vllm, finetune]
#   inputs: [gpu, gpus, model, seq_len, micro_batch, method, optimizer, optimizer_in_backward, attention, loss, lora_rank, lora_targets, fsdp, cuda_context, gpu_memory, max_num_batched_tokens, enforce_eager, vllm_version, kbit_fp32, activation_offloading]
#   fix_needs: [gpu, model, seq_len, micro_batch]
#   since: 0.1.0
#   fixable: true
package gpulint.rules.tune001

# The findings come from the tuner (internal/lint/tune.go); this package
# holds only the metadata.
#
# fix_needs: the tuned settings size memory (the tuner's plan), so they are
# safe only for the GPU, model, sequence length and micro batch they were
# sized on; an assumed sequence length of 2048 or micro batch of 1 is the
# small end of what runs use, so a plan sized on them can run out of
# memory. The GPU count and the method are not needed: their assumed values
# (1 GPU, full training) are the largest per-GPU estimate.
