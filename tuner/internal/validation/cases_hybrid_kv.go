package validation

import "github.com/gpulint/gpulint/tuner"

// Published vLLM logs of models with chunked-local or sliding-window
// layers, whose KV cache vLLM's hybrid KV cache manager sizes per layer
// kind (tuner's vLLM KV layout).
const (
	scoutH200 = "fuhengwu2021/coderepo extra/README.md @eba6695 (vLLM v0.12.0, image vllm/vllm-openai:v0.12.0 with the OpenAI api_server entrypoint; meta-llama/Llama-4-Scout-17B-16E-Instruct on 8× H200, --tensor-parallel-size 8, gpu_memory_utilization 0.9; the hybrid KV cache manager enabled with VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 where the page says so; the 10M run adds --kv-cache-dtype fp8_e4m3 --calculate-kv-scales and printed \"GPU KV cache size: 7,838,976 tokens\", \"Available KV cache memory: 89.71 GiB\", \"Max concurrency: 3.12x\"): https://github.com/fuhengwu2021/coderepo/blob/eba66958577f6ec037fc696281edf20ce58f7823/extra/README.md"

	scout = "meta-llama/Llama-4-Scout-17B-16E-Instruct"

	// scoutGap is why every Scout row over-predicts by about 3.7%.
	scoutGap = "over-predicts by 3.7%: vLLM left 89.71 GiB per GPU for the KV cache, the estimate 93.05 GiB, so 3.3 GiB of weights, profiled peak or non-torch memory are not in the estimate (it sizes the text stack; vLLM also loads and profiles the vision encoder of this multimodal checkpoint). The layout itself is exact: from the printed 7,838,976 tokens, 4 KV cache groups of 12 layers (1 full attention, 3 chunked-local) give 1,959,744 pool blocks, and one 10,000,000-token request needs 625,000 + 3 × (8192 + 8192) / 16 = 628,072 of them: 3.12x, as printed (tuner TestHybridLayoutReproducesPublishedConcurrency)"
	// scout5M is the reading of the page's "5M max_model_len".
	scout5M = "the page says \"5M max_model_len\"; taken as 5,242,880 (5 × 2^20), the only reading under which its two printed concurrencies agree with its 3.9M-token cache (0.75x and 2.96x; 5,000,000 would give 0.78x and 3.10x)"
)

// hybridKVCases are vLLM logs that print the KV cache of a hybrid model.
func hybridKVCases() []validationCase {
	fp8 := tuner.Workload{Kind: tuner.Serve, TensorParallel: 8, GPUMemoryUtilization: 0.9, MaxModelLen: 10000000, KVCacheDtype: "fp8_e4m3"}
	bf16 := tuner.Workload{Kind: tuner.Serve, TensorParallel: 8, GPUMemoryUtilization: 0.9, MaxModelLen: 5242880}
	return []validationCase{
		{id: "vllm-scout-h200-tp8-fp8kv-10m-tokens", source: scoutH200, setup: "Llama-4-Scout-17B-16E-Instruct, tensor parallel 8, --kv-cache-dtype fp8_e4m3, max_model_len 10,000,000, hybrid KV cache manager on",
			model: scout, gpu: "H200", metric: metricKVTokens, measured: 7838976, unit: "tokens", reported: "fits", maxErr: 5,
			workload: fp8, note: scoutGap},
		{id: "vllm-scout-h200-tp8-fp8kv-10m-kv-memory", source: scoutH200, setup: "as above",
			model: scout, gpu: "H200", metric: metricKVMemory, measured: gibf(89.71), unit: "GiB", reported: "fits", maxErr: 5,
			workload: fp8, note: scoutGap},
		{id: "vllm-scout-h200-tp8-fp8kv-10m-concurrency", source: scoutH200, setup: "as above; \"Max concurrency: 3.12x\" for 10,000,000-token requests",
			model: scout, gpu: "H200", metric: metricConcurrency, measured: 3.12, unit: "x", reported: "fits", maxErr: 5,
			workload: fp8, note: scoutGap + "; a full-attention count of all 48 layers would give 0.78x"},
		{id: "vllm-scout-h200-tp8-5m-hybrid-concurrency", source: scoutH200, setup: "Llama-4-Scout-17B-16E-Instruct, tensor parallel 8, bf16 KV cache, max_model_len 5M, hybrid KV cache manager on (2.96x)",
			model: scout, gpu: "H200", metric: metricConcurrency, measured: 2.96, unit: "x", reported: "fits", maxErr: 5,
			workload: bf16, note: scout5M + "; " + scoutGap},
	}
}
