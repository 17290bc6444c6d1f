# METADATA
# title: max-model-len does not fit the KV cache
# custom:
#   id: VLLM003
#   slug: kv-cache-overflow
#   severity: error
#   rationale: >-
#     vLLM allocates the KV cache from what gpu_memory_utilization × GPU
#     memory leaves after weights, activations and non-torch memory, and
#     refuses to start when one request of max_model_len tokens does not
#     fit: "The model's max seq len (N) is larger than the maximum number
#     of tokens that can be stored in KV cache (M)" (newer versions add
#     "the estimated maximum model length is M") (vllm.md §2, §7). Without
#     max-model-len vLLM uses the model's full context (131072 tokens for
#     Llama 3.1), which a single 24 GB GPU cannot hold. When the weights
#     themselves do not fit, vram-overcommit reports it instead.
#   remediation: >-
#     Set max-model-len to what the KV cache holds (the fix picks the
#     largest multiple of 1024), raise gpu_memory_utilization, use an FP8
#     KV cache, or add tensor parallelism.
#   kinds: [vllm]
#   since: 0.1.0
#   fixable: true
#   example: |
#     model: meta-llama/Llama-3.1-8B-Instruct
#     # no max-model-len: the model's 131072 tokens; with gpu: L4
package gpulint.rules.vllm003

import data.gpulint.lib

serve := input.estimate.serve

# Rounded up to whole KV blocks, as vLLM allocates them.
needed := ceil(serve.max_model_len / serve.block_size) * serve.block_size

# The largest max-model-len that fits: a multiple of 1024, or of the block
# size when less than 1024 tokens fit.
fit := n if {
	n := floor(serve.kv_cache_tokens / 1024) * 1024
	n > 0
} else := floor(serve.kv_cache_tokens / serve.block_size) * serve.block_size

len_source := sprintf("max-model-len %d", [serve.max_model_len]) if {
	input.workload.serve.max_model_len
} else := sprintf("the model's default max_model_len %d (max-model-len is not set)", [serve.max_model_len])

findings contains f if {
	not lib.vllm_off_gpu
	not input.target.mig_profile # mig-over-partitioned covers MIG slices
	serve.kv_cache_tokens > 0 # no KV block at all: vram-overcommit
	needed > serve.kv_cache_tokens
	f := lib.with_fix(
		lib.finding(lib.where("serve.max_model_len"), sprintf("%s does not fit the KV cache on %s: vLLM stops with \"The model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d)\"; the estimated maximum model length is %d (%s)", [len_source, lib.gpu_name, serve.max_model_len, serve.kv_cache_tokens, serve.kv_cache_tokens, input.estimate.summary])),
		sprintf("set max-model-len to %d", [fit]),
		[lib.set_op(["max-model-len"], fit)],
	)
}
