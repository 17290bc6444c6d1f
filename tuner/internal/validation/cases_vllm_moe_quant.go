package validation

import "github.com/gpulint/gpulint/tuner"

// Published vLLM start-up logs of MoE and quantized checkpoints. The
// checkpoints outside the catalog are config.json directories under
// testdata (see configDirs and testdata/README.md).
const (
	vllm23278 = "vllm-project/vllm#23278, \"gpt-oss 120b does not work while gpt-oss 20b works on H100\" (vLLM 0.10.1, one H100 80GB, `vllm serve openai/gpt-oss-120b` with no other arguments; log: \"Model loading took 65.9651 GiB\", \"Available KV cache memory: -2.14 GiB\", EngineCore failed to start): https://github.com/vllm-project/vllm/issues/23278"
	vllm27508 = "vllm-project/vllm#27508, \"openai/gpt-oss-120b can't run on H100\" (H100 80GB HBM3; comment of 2025-10-31: `vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024` fails with \"Available KV cache memory: 1.71 GiB\" and the max-model-len error): https://github.com/vllm-project/vllm/issues/27508"
	vllm33155 = "vllm-project/vllm#33155, \"gptoss120B is OOM on one H100 after upgrading from v0.11.2 to v0.14.1\" (on v0.11.2 `vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.97 --max_num_seqs 100 --tensor-parallel-size 1 --max-model-len 87040` runs on one H100): https://github.com/vllm-project/vllm/issues/33155"
	vllm22331 = "vllm-project/vllm#22331, comment of 2025-08-11 (image vllm/vllm-openai:gptoss, `--model openai/gpt-oss-20b` on one RTX 3090 24GB with VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1; log: \"Model loading took 12.8848 GiB\"): https://github.com/vllm-project/vllm/issues/22331"
	vllm17327 = "vllm-project/vllm#17327, \"Qwen3 Usage Guide\", comment of 2025-04-30 (vLLM 0.8.5, Qwen/Qwen3-30B-A3B on 4 × A10, tensor parallel 4, max-model-len 1024, max-num-seqs 1; log: \"Model loading took 14.2474 GiB\" on each rank; the same log is in #17469): https://github.com/vllm-project/vllm/issues/17327"

	myoceane = "myoceane.fr, \"[AI] vLLM 部署地端模型系統訊息記錄 A100\" (2026-04-18; vLLM 0.19.0 on an NVIDIA A100, `vllm serve openai/gpt-oss-20b --max-model-len 131072 --gpu-memory-utilization 0.65`; log: \"Model loading took 13.72 GiB\", \"Available KV cache memory: 36.56 GiB\"): https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/"
	gpustack = "gpustack/gpustack docs/performance-lab, the recommended serving commands that GPUStack benchmarked (gpt-oss-120b on A100: vLLM v0.11.0, `vllm serve openai/gpt-oss-120b --max-model-len 32768 --async-scheduling --max-num-batched-tokens 4096`; on H100: vLLM v0.10.2, `vllm serve openai/gpt-oss-120b --async-scheduling -tp 2`): https://docs.gpustack.ai/2.0/performance-lab/gpt-oss-120b/a100 and https://docs.gpustack.ai/latest/performance-lab/gpt-oss-120b/h100"
	kubesimp = "kubesimplify blog, \"Running a big LLM across multiple GPUs with vLLM\" (2026-08-18; vLLM 0.27.1, Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 on RTX PRO 6000 Blackwell Server Edition cards reporting 95.01 GiB, `--gpu-memory-utilization 0.90 --max-model-len 32768 --max-num-seqs 32`; at -tp 4: \"Model loading took 55.19 GiB\", \"GPU KV cache size: 621,392 tokens\"; at 2 GPUs: \"Failed to load model - not enough GPU memory\"): https://blog.kubesimplify.com/running-a-big-llm-across-multiple-gpus-with-vllm"

	gptOSS120b = "openai/gpt-oss-120b"
	gptOSS20b  = "openai/gpt-oss-20b"
	qwen3x30b  = "Qwen/Qwen3-30B-A3B"
	qwen3x235b = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"
	proBW      = "RTX PRO 6000 Blackwell Server (95.01 GiB)"

	marlinNote = "vLLM runs mxfp4 experts on GPUs below compute capability 10.0 through the Marlin MoE kernel (the log's \"Weight-only FP4 compression will be used leveraging the Marlin kernel\"), which pads each expert to 3072 × 2944 (mxfp4.py create_weights); the estimate includes that padding"
	ossKVNote  = "gpt-oss alternates sliding-window (128) and full-attention layers, which vLLM's hybrid KV cache manager sizes apart, as the estimate does (18 + 18 layers, so the reported token count equals a full-attention one, and a max_model_len request needs the full layers' blocks plus 128 + max_num_batched_tokens on the sliding ones); the source prints no KV cache size, so only the verdict is compared"
)

// vllmMoEQuantCases are vLLM serving logs of MoE checkpoints with quantized
// (mxfp4) or 16-bit experts.
func vllmMoEQuantCases() []validationCase {
	return []validationCase{
		{id: "vllm-gptoss-120b-h100-weights", source: vllm23278, setup: "gpt-oss-120b (mxfp4 experts, 16-bit attention, router, embeddings and lm_head), vLLM 0.10.1 defaults",
			model: gptOSS120b, gpu: "H100-80GB", metric: metricWeights, measured: gibf(65.9651), unit: "GiB", reported: "refused", maxErr: 10,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.10.1"},
			note:     "the same run refused to start with \"Available KV cache memory: -2.14 GiB\"; the estimate leaves none either: vLLM 0.10.1's profile run sorts the vocabulary of 1024 dummy requests in its sampler run, 7.29 GiB (tuner sortSamplerBytesPerLogit); " + marlinNote},
		{id: "vllm-gptoss-120b-h100-util095", source: vllm27508, setup: "gpt-oss-120b, gpu_memory_utilization 0.95, max_num_batched_tokens 1024, default max_model_len 131072, vLLM release unstated (0.11.0 assumed)",
			model: gptOSS120b, gpu: "H100-80GB", metric: metricKVTokens, unit: "tokens", reported: "refused",
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.11.0", GPUMemoryUtilization: 0.95, MaxNumBatchedTokens: 1024},
			note:     "the comment does not state the vLLM release: its log line numbers are those of the v0.11 series, so the row assumes 0.11.0 (every v0.11 release sorts in the profiled sampler run; vllm-project/vllm#26859 took FlashInfer's sampler out of v0.11.1 on). vLLM had 1.71 GiB left for the KV cache, the estimate 1.71 GiB: the dummy sampler run over 1024 requests × 201088 vocabulary entries sorts the logits, 38 bytes each at the sort (7.29 GiB; #23278 shows the same peak at 8192 batched tokens). One 131072-token request needs 4.5 GiB under vLLM's hybrid layout (18 full-attention layers at 131072 tokens, 18 sliding-window layers at 128 + 1024 tokens), so both refuse; " + ossKVNote},
		{id: "vllm-gptoss-120b-h100-87k", source: vllm33155, setup: "gpt-oss-120b, gpu_memory_utilization 0.97, max_model_len 87040, max_num_seqs 100, vLLM 0.11.2",
			model: gptOSS120b, gpu: "H100-80GB", metric: metricKVTokens, unit: "tokens", reported: "fits",
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.11.2", GPUMemoryUtilization: 0.97, MaxModelLen: 87040, MaxNumSeqs: 100},
			note:     "the source states that the server runs, not its KV cache size; " + ossKVNote},
		{id: "vllm-gptoss-20b-3090-weights", source: vllm22331, setup: "gpt-oss-20b (mxfp4 experts), vLLM gptoss preview image, defaults",
			model: gptOSS20b, gpu: "RTX-3090", metric: metricWeights, measured: gibf(12.8848), unit: "GiB", reported: "fits", maxErr: 10,
			workload: tuner.Workload{Kind: tuner.Serve},
			note:     "over-predicts by 6%: the preview image's 12.88 GiB matches the unpadded size (12.82 GiB), so that build did not yet pad the Marlin experts the way later vLLM does and the 120b log shows; " + marlinNote},
		{id: "vllm-gptoss-20b-a100-weights", source: myoceane, setup: "gpt-oss-20b, gpu_memory_utilization 0.65, max_model_len 131072, vLLM 0.19.0",
			model: gptOSS20b, gpu: "A100-80GB", metric: metricWeights, measured: gibf(13.72), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.19.0", GPUMemoryUtilization: 0.65, MaxModelLen: 131072},
			note:     "the post names an NVIDIA A100 without its memory; 80 GB follows from the log, since 0.65 of a 40 GB card is less than the 13.72 GiB of weights plus 36.56 GiB of KV cache; " + marlinNote},
		{id: "vllm-gptoss-20b-a100-kv-memory", source: myoceane, setup: "gpt-oss-20b, gpu_memory_utilization 0.65, max_model_len 131072, vLLM 0.19.0",
			model: gptOSS20b, gpu: "A100-80GB", metric: metricKVMemory, measured: gibf(36.56), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.19.0", GPUMemoryUtilization: 0.65, MaxModelLen: 131072},
			note:     "\"Available KV cache memory\" does not depend on how vLLM lays out the sliding-window layers, so it is compared in bytes; A100 memory as in the weights row"},
		{id: "vllm-gptoss-120b-a100-32k", source: gpustack, setup: "gpt-oss-120b, max_model_len 32768, max_num_batched_tokens 4096, vLLM v0.11.0",
			model: gptOSS120b, gpu: "A100-80GB", metric: metricKVTokens, unit: "tokens", reported: "fits",
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.11.0", MaxModelLen: 32768, MaxNumBatchedTokens: 4096},
			note:     "the page names \"NVIDIA A100 GPUs\"; the command has no --tensor-parallel-size, so one GPU, and only the 80 GB card holds the 66 GiB of weights; the source reports a benchmark run, not its KV cache size; " + ossKVNote},
		{id: "vllm-gptoss-120b-h100-tp2", source: gpustack, setup: "gpt-oss-120b, tensor parallel 2, defaults (max_model_len 131072), vLLM v0.10.2",
			model: gptOSS120b, gpu: "H100-80GB", metric: metricKVTokens, unit: "tokens", reported: "fits",
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.10.2", TensorParallel: 2},
			note:     "the source reports a benchmark run, not its KV cache size; " + ossKVNote},
		{id: "vllm-qwen3-235b-fp8-tp4-weights", source: kubesimp, setup: "Qwen3-235B-A22B-Instruct-2507-FP8 (128×128 block FP8), tensor parallel 4, max_model_len 32768, max_num_seqs 32",
			model: qwen3x235b, gpu: proBW, gpuMemory: "95.01GiB", metric: metricWeights, measured: gibf(55.19), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.27.1", TensorParallel: 4, GPUMemoryUtilization: 0.9, MaxModelLen: 32768, MaxNumSeqs: 32},
			note:     "the GPU is not in the catalog: the row uses the 95.01 GiB the post reports; the per-block fp32 scales (4 B per 16,384 weights) are not counted"},
		{id: "vllm-qwen3-235b-fp8-tp4-kv", source: kubesimp, setup: "Qwen3-235B-A22B-Instruct-2507-FP8, tensor parallel 4, max_model_len 32768, max_num_seqs 32",
			model: qwen3x235b, gpu: proBW, gpuMemory: "95.01GiB", metric: metricKVTokens, measured: 621392, unit: "tokens", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.27.1", TensorParallel: 4, GPUMemoryUtilization: 0.9, MaxModelLen: 32768, MaxNumSeqs: 32},
			note:     "vLLM 0.27 subtracts its CUDA-graph estimate (0.32 GiB in the log) from the budget, as the estimate does for a stated v0.21 or later; the model's TP non-torch memory (2.10 GiB) is larger than the 1.70 GiB the log implies, so it under-predicts by 3%"},
		{id: "vllm-qwen3-235b-fp8-tp2-oom", source: kubesimp, setup: "Qwen3-235B-A22B-Instruct-2507-FP8 on 2 GPUs (tensor parallel 2)",
			model: qwen3x235b, gpu: proBW, gpuMemory: "95.01GiB", metric: metricWeights, unit: "GiB", reported: "oom",
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.27.1", TensorParallel: 2, GPUMemoryUtilization: 0.9, MaxModelLen: 32768, MaxNumSeqs: 32},
			note:     "the post reports the 2-GPU run's flags only as the same command with 2 GPUs; weight loading ran out of memory (\"CUDA out of memory. Tried to allocate 768.00 MiB ... 438.31 MiB is free\")"},
		{id: "vllm-qwen3-30b-a3b-tp4-weights", source: vllm17327, setup: "Qwen3-30B-A3B bf16, tensor parallel 4, max_model_len 1024, max_num_seqs 1, --enforce-eager",
			model: qwen3x30b, gpu: "A10", metric: metricWeights, measured: gibf(14.2474), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, VLLMVersion: "0.8.5", TensorParallel: 4, MaxModelLen: 1024, MaxNumSeqs: 1, EnforceEager: true},
			note:     "the logged weights come from the same command without --enforce-eager (they do not depend on it), which ran out of memory after the KV cache was sized; the source says the --enforce-eager run works, which is the verdict compared. The model misses the failure without --enforce-eager (it leaves 0.7 GiB outside the budget for CUDA graphs), so that run is not a row"},
	}
}
