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
	vllm7320  = "vllm-project/vllm#7320, \"Add bitsandbytes fp4 support\" (2024-08-09; `LLM(model=\"PrunaAI/Einstein-v6.1-Llama3-8B-bnb-4bit-smashed\", enforce_eager=True, quantization=\"bitsandbytes\", load_format=\"bitsandbytes\", max_model_len=2048)`; log: \"Loading model weights took 5.6168 GB\"): https://github.com/vllm-project/vllm/pull/7320"

	mixtralGPTQ  = "TheBloke/Mixtral-8x7B-v0.1-GPTQ"
	dsV2Lite     = "deepseek-ai/DeepSeek-V2-Lite"
	llama32bnb   = "unsloth/Llama-3.2-1B-Instruct-bnb-4bit"
	einsteinBnB  = "PrunaAI/Einstein-v6.1-Llama3-8B-bnb-4bit-smashed"
	noGPUNote    = "the source does not name the GPU; the row assumes %s, which the weights do not depend on, so only the weights are compared and the verdict is the trivial one of a run that loaded"
	bnbDQNote    = "vLLM dequantizes a double-quantized checkpoint's absmax back to fp32 while loading (vllm/model_executor/model_loader/bitsandbytes_loader.py _dequantize_dq: \"This comes at the cost of increased memory usage\"), so its 4-bit weights cost 4.5 bits each in vLLM whatever bnb_4bit_use_double_quant says, which the estimate's bitsandbytes format counts"
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
			note:     fmt.Sprintf(noGPUNote, "an A100-80GB") + "; " + bnbDQNote + "; the tied 16-bit embedding (0.49 GiB) is half of the total"},
		{id: "vllm-einstein-8b-bnb-fp4-weights", source: vllm7320, setup: "Einstein-v6.1-Llama3-8B bitsandbytes fp4, max_model_len 2048, enforce_eager",
			model: einsteinBnB, gpu: "A100-80GB", metric: metricWeights, measured: gibf(5.6168), unit: "GiB", reported: "fits", maxErr: 5,
			workload: tuner.Workload{Kind: tuner.Serve, MaxModelLen: 2048, EnforceEager: true},
			note:     fmt.Sprintf(noGPUNote, "an A100-80GB") + "; the checkpoint's config.json could not be read: its architecture is Einstein-v6.1-Llama3-8B's (Llama-3-8B, 128,260-token vocabulary) and its quantization the fp4 the PR states; whether it is double-quantized is unknown and does not matter, because " + bnbDQNote + "; the log continues to \"# GPU blocks: 6598\" on an unnamed GPU, not a row"},
	}
}
