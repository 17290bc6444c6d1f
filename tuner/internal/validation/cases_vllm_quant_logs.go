package validation

import (
	"fmt"

	"github.com/gpulint/gpulint/tuner"
)

// Published vLLM start-up logs of GPTQ (Marlin), bitsandbytes 4-bit and
// 16-bit MoE checkpoints, from sources not used elsewhere in this package.
// Each row compares the weights one GPU holds with the log's "Loading
// model weights took X GB" (V0: GiB despite the unit) or "Model loading
// took X GiB" (V1). The checkpoints outside the catalog are config.json
// directories under testdata (see configDirs and testdata/README.md).
const (
	vllm23066 = "vllm-project/vllm#23066, \"fix: gptq marlin weight loading failure\" (vLLM 0.10.1.dev680+g79899b63f; TheBloke/Mixtral-8x7B-v0.1-GPTQ, quantization=gptq_marlin, tensor_parallel_size=2, max_seq_len=1024, dtype bfloat16; log: \"Using MacheteLinearKernel for GPTQMarlinLinearMethod\", \"Model loading took 11.0802 GiB\" on both ranks): https://github.com/vllm-project/vllm/pull/23066"
	vllm4650  = "vllm-project/vllm#4650, \"Support Deepseek-V2\", comment of 2024-06-28 (vLLM v0.5.0.post1, `LLM(model=\"deepseek-ai/DeepSeek-V2-Lite\", trust_remote_code=True, max_model_len=32000)`, tensor_parallel_size 1, bfloat16; log: \"Loading model weights took 29.3010 GB\"): https://github.com/vllm-project/vllm/pull/4650"
	oumi1223  = "oumi-ai/oumi#1223, \"[VLLM Engine] Enabling BitsAndBytes quantization\" (2025-01-24; vLLM V0 engine: meta-llama/Llama-3.2-1B-Instruct \"original model weights ... 2.3185 GB\"; unsloth/Llama-3.2-1B-Instruct-bnb-4bit with quantization and load_format bitsandbytes: \"Loading model weights took 0.9786 GB\"): https://github.com/oumi-ai/oumi/pull/1223"
	vllm13882 = "vllm-project/vllm#13882, \"I want to be able to Qwen2.5-7B & RTX4060\" (vLLM V0 engine v0.7.3.dev233+gad5a35c2; model directory Qwen2.5-7B-Instruct-bnb-4bit, quantization and load_format bitsandbytes, dtype bfloat16, max_seq_len 4096; log: \"Loading model weights took 5.2032 GB\", \"total_gpu_memory (8.00GiB) x gpu_memory_utilization (0.70) = 5.60GiB\", \"the rest of the memory reserved for KV Cache is -1.05GiB\", # cuda blocks: 0): https://github.com/vllm-project/vllm/issues/13882"
	vllm13109 = "vllm-project/vllm#13109, \"Support AWQMarlin with MLA\", description of 2025-02-11 (vLLM main after v0.7.2, V0 engine, Triton MLA backend; `lm_eval --model vllm --model_args pretrained=TechxGenus/DeepSeek-Coder-V2-Lite-Instruct-AWQ` with vLLM's defaults; log: \"model weights take 10.45GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak memory takes 0.94GiB; the rest of the memory reserved for KV Cache is 59.75GiB\", \"# CUDA blocks: 116023\", \"Maximum concurrency for 163840 tokens per request: 11.33x\"): https://github.com/vllm-project/vllm/pull/13109"
	vllm3285  = "vllm-project/vllm#3285, \"Mixtral 4x 4090 OOM\" (2024-03-08, vLLM version not stated: \"TP 4, model len 1000, enforce eager, multiple gpu utilizations; Nothing helps. I am testing on a 4x 4090 rig and I always get an OOM error\"; then \"Same for the TheBlokes AWQ quantized model... Although, there with enforce-eager it works with a model len of 1000\"): https://github.com/vllm-project/vllm/issues/3285"
	vllm7320  = "vllm-project/vllm#7320, \"Add bitsandbytes fp4 support\" (2024-08-09; `LLM(model=\"PrunaAI/Einstein-v6.1-Llama3-8B-bnb-4bit-smashed\", enforce_eager=True, quantization=\"bitsandbytes\", load_format=\"bitsandbytes\", max_model_len=2048)`; log: \"Loading model weights took 5.6168 GB\"): https://github.com/vllm-project/vllm/pull/7320"

	llmdBench = "llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (commit 4f4d449): vLLM start-up logs on H100 80GB GPUs (79.18 GiB as torch reports), image vllm/vllm-openai:latest, `vllm serve <model> --tensor-parallel-size=<1|2> --gpu-memory-utilization=0.90 --max-model-len=16000 --block-size=128 --enable-prefix-caching`, \"Model loading took\" per rank: https://github.com/llm-d/llm-d-benchmark/blob/4f4d44943c39b76b28e30dfa1fb0dfaf1ee894b5/config_explorer/empirical-vllm-memory-results.md"

	mixtralGPTQ  = "TheBloke/Mixtral-8x7B-v0.1-GPTQ"
	dsV2Lite     = "deepseek-ai/DeepSeek-V2-Lite"
	llama32bnb   = "unsloth/Llama-3.2-1B-Instruct-bnb-4bit"
	qwen25bnb    = "unsloth/Qwen2.5-7B-Instruct-bnb-4bit"
	dsCoderAWQ   = "TechxGenus/DeepSeek-Coder-V2-Lite-Instruct-AWQ"
	mixtralAWQ   = "TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ"
	einsteinBnB  = "PrunaAI/Einstein-v6.1-Llama3-8B-bnb-4bit-smashed"
	noGPUNote    = "the source does not name the GPU; the row assumes %s, which the weights do not depend on, so only the weights are compared and the verdict is the trivial one of a run that loaded"
	bnbDQNote    = "the estimate counts bitsandbytes 4-bit weights at 4.5 bits (fp32 absmax per 64), which is what current vLLM holds: since vllm-project/vllm#19742 (June 2025) it dequantizes a double-quantized checkpoint's absmax to fp32 while loading (vllm/model_executor/model_loader/bitsandbytes_loader.py _dequantize_dq, \"This comes at the cost of increased memory usage\"); the vLLM of this log predates that change and kept the double-quantized absmax (about 4.13 bits, --weights nf4-dq)"
	llama33FP8   = "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic stores the linear layers as per-channel fp8 (compressed-tensors) with a 16-bit embedding and lm_head, which is --weights fp8 on Llama-3.3-70B's architecture (the catalog's Llama-3.1-70B shape)"
	llmdKVNote   = "the same log's \"Available KV cache memory\" is not a row: that vLLM build's profile peak (\"torch peak memory increase\" 4.84 GiB here, 4.76 GiB for Llama-3.1-8B) is about 2.8 GiB above the v0.19 peak the model follows (llm-d-planner logs), so the model would credit it with more KV cache than it allocated"
	marlinGPTQNt = "GPTQ checkpoints run through gptq_marlin in vLLM; Marlin repacks qweight in place (same bytes) and keeps the per-channel scales (group_size -1) and the act-order g_idx with its sort indices (one int32 per input row), which are a negligible share"
)

// vllmQuantLogCases are vLLM logs of quantized (GPTQ, bitsandbytes) and
// 16-bit MoE checkpoints.
func vllmQuantLogCases() []validationCase {
	return []validationCase{
		{id: "vllm-mixtral-gptq-tp2-weights", source: vllm23066, setup: "Mixtral-8x7B-v0.1-GPTQ (4-bit, per-channel, act order) via gptq_marlin, tensor parallel 2, max_model_len 1024",
			model: mixtralGPTQ, gpu: "H100-80GB", metric: metricWeights, measured: gibf(11.0802), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, TensorParallel: 2, MaxModelLen: 1024},
			note:     "the PR does not name the GPU; the log's MacheteLinearKernel runs only on Hopper (compute capability 9.0), so an H100 is assumed; the log does not say the server then ran, only that loading finished, which is the verdict compared; " + marlinGPTQNt},
		{id: "vllm-deepseek-v2-lite-weights", source: vllm4650, setup: "DeepSeek-V2-Lite bf16 (MLA, 64 routed + 2 shared experts), max_model_len 32000, vLLM v0.5.0.post1",
			model: dsV2Lite, gpu: "H100-80GB", metric: metricWeights, measured: gibf(29.3010), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, MaxModelLen: 32000},
			note:     fmt.Sprintf(noGPUNote, "an H100-80GB") + "; the log continues to \"# GPU blocks: 5549\", whose size in tokens depends on that GPU and on v0.5's non-MLA KV layout for DeepSeek-V2, so it is not a row"},
		{id: "vllm-llama32-1b-bf16-weights", source: oumi1223, setup: "Llama-3.2-1B-Instruct bf16 (tied embeddings), vLLM V0 defaults",
			model: "meta-llama/Llama-3.2-1B-Instruct", gpu: "A100-80GB", metric: metricWeights, measured: gibf(2.3185), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve},
			note:     fmt.Sprintf(noGPUNote, "an A100-80GB") + "; the PR quotes the 16-bit figure as the baseline of its bitsandbytes test, the vLLM version is not stated beyond the V0 log format"},
		{id: "vllm-llama32-1b-bnb4-weights", source: oumi1223, setup: "Llama-3.2-1B-Instruct-bnb-4bit (nf4, double quantization), quantization and load_format bitsandbytes",
			model: llama32bnb, gpu: "A100-80GB", metric: metricWeights, measured: gibf(0.9786), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve},
			note:     fmt.Sprintf(noGPUNote, "an A100-80GB") + "; the tied 16-bit embedding (0.49 GiB) is half of the total; the estimate is 3.7% high at 4.5 bits and 0.6% low with --weights nf4-dq (0.97 GiB): " + bnbDQNote},
		{id: "vllm-einstein-8b-bnb-fp4-weights", source: vllm7320, setup: "Einstein-v6.1-Llama3-8B bitsandbytes fp4, max_model_len 2048, enforce_eager",
			model: einsteinBnB, gpu: "A100-80GB", metric: metricWeights, measured: gibf(5.6168), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, MaxModelLen: 2048, EnforceEager: true},
			note:     fmt.Sprintf(noGPUNote, "an A100-80GB") + "; the checkpoint's config.json could not be read: its architecture is Einstein-v6.1-Llama3-8B's (Llama-3-8B, 128,260-token vocabulary) and its quantization the fp4 the PR states; whether it is double-quantized is unknown: the logged figure matches 4.5 bits, i.e. a checkpoint without double quantization, because " + bnbDQNote + "; the log continues to \"# GPU blocks: 6598\" on an unnamed GPU, not a row"},

		{id: "vllm-llama33-70b-fp8-tp2-weights", source: llmdBench, setup: "Llama-3.3-70B-Instruct-FP8-dynamic, tensor parallel 2, max_model_len 16000",
			model: "meta-llama/Llama-3.3-70B-Instruct", gpu: "H100-80GB", metric: metricWeights, measured: gibf(33.88), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, TensorParallel: 2, WeightQuant: "fp8", MaxModelLen: 16000},
			note:     llama33FP8 + "; the per-channel fp32 scales (4 B per output row) are not counted; " + llmdKVNote},
		{id: "vllm-llama33-70b-fp8-tp1-refused", source: llmdBench, setup: "Llama-3.3-70B-Instruct-FP8-dynamic on one H100, max_model_len 16000",
			model: "meta-llama/Llama-3.3-70B-Instruct", gpu: "H100-80GB", metric: metricWeights, measured: gibf(67.72), unit: "GiB", reported: "refused", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, WeightQuant: "fp8", MaxModelLen: 16000},
			note:     llama33FP8 + "; vLLM stopped with \"Available KV cache memory: -1.44 GiB\" (No available memory for the cache blocks); the estimate leaves 1.29 GiB, less than one 16000-token request needs, so both refuse"},
		{id: "vllm-deepseek-r1-fp8-tp1-oom", source: llmdBench, setup: "DeepSeek-R1 (FP8 block-quantized MoE) on one H100, max_model_len 16000",
			model: "deepseek-ai/DeepSeek-R1", gpu: "H100-80GB", metric: metricWeights, unit: "GiB", reported: "oom",
			workload: tuner.Workload{Kind: tuner.Serve, WeightQuant: "fp8", MaxModelLen: 16000},
			note:     "weight loading ran out of memory (\"Tried to allocate 3.50 GiB but only 3.33 GiB was free\" in the DeepseekV2MoE layers); the checkpoint is fp8 with 128×128 block scales, --weights fp8 on DeepSeek-V3's architecture (R1 shares it); a verdict row only, since 671B parameters cannot fit one GPU"},
		{id: "vllm-gptoss-20b-h100-weights", source: llmdBench, setup: "gpt-oss-20b (mxfp4 experts), max_model_len 16000",
			model: gptOSS20b, gpu: "H100-80GB", metric: metricWeights, measured: gibf(13.47), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, MaxModelLen: 16000},
			note:     "over-predicts by 1.6%: the log lies between the unpadded (12.82 GiB) and the Marlin-padded size the estimate uses, which suggests that build ran these experts through another mxfp4 kernel on Hopper; " + marlinNote + "; " + ossKVNote},
		{id: "vllm-gptoss-120b-h100-weights-llmd", source: llmdBench, setup: "gpt-oss-120b (mxfp4 experts), max_model_len 16000",
			model: gptOSS120b, gpu: "H100-80GB", metric: metricWeights, measured: gibf(64.38), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, MaxModelLen: 16000},
			note:     "over-predicts by 2.4% for the reason the 20b row gives (vllm-project/vllm#23278 logged 65.97 GiB for the same checkpoint on v0.10.1, which the padded estimate matches); the server started with 3.33 GiB of KV cache, the estimate leaves 1.97 GiB, enough for one 16000-token request, so the verdicts agree"},
		{id: "vllm-qwen25-7b-bnb4-4060-refused", source: vllm13882, setup: "Qwen2.5-7B-Instruct-bnb-4bit (nf4, double quantization) on an 8 GiB RTX 4060, gpu_memory_utilization 0.70, max_model_len 4096, vLLM 0.7.3 (V0)",
			model: qwen25bnb, gpu: "RTX 4060 (8.00 GiB)", gpuMemory: "8.00GiB", metric: metricWeights, measured: gibf(5.2032), unit: "GiB", reported: "refused", maxErr: 6,
			workload: tuner.Workload{Kind: tuner.Serve, GPUMemoryUtilization: 0.7, MaxModelLen: 4096, MaxNumBatchedTokens: 4096},
			note:     "the GPU is not in the catalog: the row uses the 8.00 GiB the log reports; the checkpoint is assumed to be unsloth's (the log names only the directory Qwen2.5-7B-Instruct-bnb-4bit), and max_num_batched_tokens 4096 is V0's default without chunked prefill (max(max_model_len, 2048)), not stated; over-predicts by 4.9% (5.46 GiB; 5.17 GiB, 0.6% low, with --weights nf4-dq): " + bnbDQNote + "; vLLM had -1.05 GiB left for the KV cache, the estimate none, so both refuse"},
		{id: "vllm-dscoder-v2-lite-awq-weights", source: vllm13109, setup: "DeepSeek-Coder-V2-Lite-Instruct-AWQ (4-bit, group 64, MLA, 64+2 experts) via awq_marlin, vLLM defaults (max_model_len 163840)",
			model: dsCoderAWQ, gpu: "H100-80GB", metric: metricWeights, measured: gibf(10.45), unit: "GiB", reported: "fits", maxErr: 20,
			workload: tuner.Workload{Kind: tuner.Serve},
			note:     "the GPU is not named: the log's four components add up to 71.30 GiB, 0.9 of a 79.2 GiB card, so an 80 GB H100 is assumed. Known gap, under-predicts by 19%: that vLLM's V0 MLA backend absorbed the up-projections into two extra bf16 matrices per layer after loading (vllm/attention/backends/mla/utils.py, VLLM_MLA_PERFORM_MATRIX_ABSORPTION, default on in early 2025: W_UQ_UK of hidden × heads × kv_lora_rank and W_UV_O of heads × kv_lora_rank × hidden, 2 × 16.8M parameters × 27 layers = 1.69 GiB here), which the V1 MLA path the model follows does not hold; the absorbed matrices explain 1.69 of the 1.99 GiB gap. The log's KV size is not a row: 59.75 GiB in 116,023 blocks of 16 is 34,560 bytes per token, 640 16-bit elements per layer where the latent and rope parts are 576 (that backend's padding, not identified here), so the model's 31,104 bytes per token would predict more tokens than vLLM had"},
		{id: "vllm-mixtral-bf16-4x4090-oom", source: vllm3285, setup: "Mixtral-8x7B-Instruct 16-bit on four RTX 4090s, tensor parallel 4, max_model_len 1000, enforce_eager",
			model: "mistralai/Mixtral-8x7B-Instruct-v0.1", gpu: "RTX-4090", metric: metricWeights, unit: "GiB", reported: "oom",
			workload: tuner.Workload{Kind: tuner.Serve, TensorParallel: 4, MaxModelLen: 1000, EnforceEager: true},
			note:     "the issue names the model only as Mixtral beside TheBloke's Mixtral-8x7B-Instruct AWQ, so the 16-bit Instruct checkpoint is assumed; it tried several gpu_memory_utilization values without stating them, and the row uses the default 0.9: the estimate's 21.76 GiB of weights per GPU leave nothing for the KV cache"},
		{id: "vllm-mixtral-awq-4x4090-fits", source: vllm3285, setup: "Mixtral-8x7B-Instruct-v0.1-AWQ (4-bit, group 128, router 16-bit) on four RTX 4090s, tensor parallel 4, max_model_len 1000, enforce_eager",
			model: mixtralAWQ, gpu: "RTX-4090", metric: metricWeights, unit: "GiB", reported: "fits",
			workload: tuner.Workload{Kind: tuner.Serve, TensorParallel: 4, MaxModelLen: 1000, EnforceEager: true},
			note:     "the working run's gpu_memory_utilization is not stated: the default 0.9 is assumed; the source also implies that the AWQ run failed without enforce_eager, which it does not state plainly enough to be a row"},
	}
}
