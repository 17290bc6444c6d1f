# METADATA
# title: A flag or project target disagrees with what the file states
# description: Reported by the pipeline when it resolves a file's target, not by a Rego body.
# custom:
#   id: TARGET001
#   slug: target-stated-in-file
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     --gpu, --gpus, --model and the project file's targets are defaults for
#     what a file does not state. A Kubernetes manifest that selects its
#     nodes' GPU by label, requests its GPU count, or names the model its
#     container serves states what the workload really gets, so gpulint
#     checks and tunes that file against its own values; a default that
#     disagrees was meant for other files, or one of the two is stale.
#     Sizing a 70B server that requests 2 GPUs for another model or 1 GPU
#     would write a configuration that cannot start. A recipe's leading
#     comment that states its hardware ("Config for 1 node of 8 H100s with
#     DeepSpeed ZeRO-3") is weaker still: the launch, the DeepSpeed or FSDP
#     settings, a flag or the project file win over it, and a disagreement
#     is reported at the comment as info, since the comment may be stale.
#     A pod label that names the model by a short name (GKE's
#     ai.gke.io/model) is weaker than the model the container states: a
#     label whose name maps to another catalog model is reported at the
#     label as info, and the stated model is used. A pod's
#     nvidia.com/gpu.memory selector whose total is not the memory of the
#     GPU its nvidia.com/gpu.product label (or another node label) names
#     matches no node: it is reported at the memory label as info, and the
#     product is used.
#   remediation: >-
#     Make the flag or the project target agree with the file, narrow the
#     target's paths so it does not cover this file, or change the file if
#     it is the one that is wrong; correct a recipe comment that no longer
#     says how the recipe is launched, a model label that no longer names
#     the model served, or the node selector (memory or product) that is
#     stale.
#   kinds: ["*"]
#   since: 0.1.0
#   fixable: false
package gpulint.rules.target001
