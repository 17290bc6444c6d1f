package validation

import "github.com/gpulint/gpulint/tuner"

// Published measurements on GPUs the catalog gained with their own sources
// (tuner/profiles/gpus.yaml) and on consumer cards teams still run.
const (
	vllm10517 = "vllm-project/vllm#10517, comment of 2024-12-02 by kaspersiminski (one RTX 3090, meta-llama/Llama-3.1-8B-Instruct, gpu_memory_utilization 0.90; V0 engine logs \"Loading model weights took 14.9888 GB\" (GiB: vllm/worker/model_runner.py divides by 2**30), \"total_gpu_memory=23.58GiB\", at --max-model-len 20000 \"kv_cache_size=3.81GiB\", \"# GPU blocks: 1952\" and \"Maximum concurrency for 20000 tokens per request: 1.56x\"; at 29000 \"# GPU blocks: 1478\" and the error \"The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648)\"): https://github.com/vllm-project/vllm/issues/10517"

	v0ProfileNote = "the log is vLLM's V0 engine of late 2024 (its worker prints \"Memory profiling results\" and \"# GPU blocks\"); below 32K tokens it did not enable chunked prefill, so the profile ran one max_model_len-token prefill (max_num_batched_tokens = max_model_len, max_num_seqs 256), which the row restates. The comment states no vLLM version; its 23.58 GiB total matches the catalog's RTX 3090 usable memory"
)

// gpuCases are published measurements that hold the catalog's consumer and
// workstation cards (their usable memory, vLLM's budget on them).
func gpuCases() []validationCase {
	serve := func(maxLen int) tuner.Workload {
		return tuner.Workload{Kind: tuner.Serve, GPUMemoryUtilization: 0.90, MaxModelLen: maxLen,
			MaxNumBatchedTokens: maxLen, MaxNumSeqs: 256}
	}
	return []validationCase{
		{id: "vllm-llama31-8b-3090-20k-weights", source: vllm10517, setup: "Llama-3.1-8B-Instruct on one RTX 3090, gpu_memory_utilization 0.90, max_model_len 20000",
			model: llama31x8b, gpu: "RTX-3090", metric: metricWeights, measured: gibf(14.9888), unit: "GiB", reported: "fits", maxErr: 5,
			workload: serve(20000), note: v0ProfileNote},
		{id: "vllm-llama31-8b-3090-20k-kv-memory", source: vllm10517, setup: "Llama-3.1-8B-Instruct on one RTX 3090, gpu_memory_utilization 0.90, max_model_len 20000",
			model: llama31x8b, gpu: "RTX-3090", metric: metricKVMemory, measured: gibf(3.81), unit: "GiB", reported: "fits", maxErr: 10,
			workload: serve(20000), note: v0ProfileNote},
		{id: "vllm-llama31-8b-3090-20k", source: vllm10517, setup: "Llama-3.1-8B-Instruct on one RTX 3090, gpu_memory_utilization 0.90, max_model_len 20000",
			model: llama31x8b, gpu: "RTX-3090", metric: metricKVTokens, measured: 1952 * 16, unit: "tokens", reported: "fits", maxErr: 10,
			workload: serve(20000), note: "1952 blocks of 16 tokens; " + v0ProfileNote},
		{id: "vllm-llama31-8b-3090-29k", source: vllm10517, setup: "Llama-3.1-8B-Instruct on one RTX 3090, gpu_memory_utilization 0.90, max_model_len 29000",
			model: llama31x8b, gpu: "RTX-3090", metric: metricKVTokens, measured: 23648, unit: "tokens", reported: "refused", maxErr: 10,
			workload: serve(29000), note: "vLLM refused to start: 1478 blocks hold 23,648 tokens, fewer than one 29000-token request; " + v0ProfileNote},
	}
}
