package validation

import (
	"fmt"

	"github.com/gpulint/gpulint/tuner"
)

// Published tables of the longest sequence that fits on a GPU. Each
// published maximum gives two rows: the maximum fits, and the next step (what
// the source reports out of memory, or the next entry of the table when the
// source says its figure is the largest) does not. maxLenLimits holds the
// tuner's largest fitting sequence to the same maxima.

const (
	unslothBench = "unslothai/unsloth README.md, context-length table (added in e3162dc5, Jan 2025; last present at 0acd1c7e), also https://docs.unsloth.ai/basics/unsloth-benchmarks: \"Hugging Face + FA2\" column, Llama 3.1 (8B) Instruct, 4-bit QLoRA on q, k, v, o, gate, up, down, rank 32, batch size 1, every sequence padded to the length; Llama 3.3 (70B) Instruct likewise, \"on a 80GB A100\""
	lfPerf       = "hiyouga/LLaMA-Factory wiki, Performance-comparison (revision of 2024-04-15): https://github.com/hiyouga/LLaMA-Factory/wiki/Performance-comparison — \"FlashAttention2\" row, NVIDIA A100 40GB × 1, LLaMA2-7B, batch size 1, gradient accumulation 4, LoRA rank 8 on all modules, quantization bit 4"

	// unslothAssumed names what the Unsloth table does not state.
	unslothAssumed = "the table names only the VRAM: assumed that many GiB usable on an H100 (Unsloth's test GPU). Not stated and assumed: gradient checkpointing (without it a 24 GB card could not hold 5,789 tokens of a 32-layer model), AdamW, transformers' unchunked fp32 loss, and PEFT's prepare_model_for_kbit_training leaving embeddings, lm_head and norms in fp32 (--kbit-fp32), which the table's own slope shows: 2.47 GB per 1,000 tokens between the 12 GB and 80 GB rows, against 2.2 GB with a 16-bit residual stream"
	lfAssumed      = "the wiki does not say which counter \"VRAM\" is; assumed the whole device (nvidia-smi) in GiB, rounded to whole units (±0.5 GiB, so the bound is wide at short lengths). Assumed from LLaMA-Factory's defaults of the time (llmtuner): gradient checkpointing on (disable_gradient_checkpointing false) and its own prepare_model_for_training rather than PEFT's prepare_model_for_kbit_training, so the unquantized parameters stay 16-bit; also assumed AdamW and transformers' unchunked loss (defaults in April 2024). Lengths past Llama 2's 4,096 positions need RoPE scaling (LLaMA-Factory sets it from the cutoff length), which adds no memory"
)

// unslothHF is the Hugging Face + FA2 baseline's setup at seq tokens.
func unslothHF(seq int) tuner.Workload {
	return tuner.Workload{Kind: tuner.QLoRA, LoRARank: 32, LoRATargets: []string{"q", "k", "v", "o", "gate", "up", "down"},
		MicroBatch: 1, SeqLen: seq, Checkpointing: true, KbitFP32: true}
}

// lfQLoRA is LLaMA-Factory's 4-bit row at seq tokens.
func lfQLoRA(seq int) tuner.Workload {
	return tuner.Workload{Kind: tuner.QLoRA, LoRARank: 8, LoRATargets: []string{"q", "k", "v", "o", "gate", "up", "down"},
		MicroBatch: 1, SeqLen: seq, Checkpointing: true}
}

// unslothMax is one VRAM size of Unsloth's Llama 3.1 8B table: the published
// Hugging Face + FA2 maximum, and the step that must not fit (the next
// size's maximum; 0 when the table has no larger entry).
type unslothMax struct {
	vramGB        int
	maxLen, above int
}

var unslothLlama8B = []unslothMax{
	{12, 932, 2551}, {16, 2551, 5789}, {24, 5789, 12264}, {40, 12264, 15502}, {48, 15502, 28454}, {80, 28454, 0},
}

// maxLenCases are the rows from published maximum-length tables.
func maxLenCases() []validationCase {
	var out []validationCase
	const model8B = "meta-llama/Llama-3.1-8B-Instruct"
	// 8 GB: "OOM", no length fits; the table's shortest length stands for it.
	out = append(out, validationCase{id: "unsloth-hf-llama31-8b-8gb-oom", source: unslothBench,
		setup: "Llama-3.1-8B QLoRA r=32 all linear, batch 1, 8 GB VRAM: OOM at any length (932 tokens shown)",
		model: model8B, gpu: "H100-80GB", gpuMemory: "8GiB", metric: metricDevice, reported: "oom",
		workload: unslothHF(932), note: unslothAssumed})
	for _, r := range unslothLlama8B {
		out = append(out, validationCase{id: fmt.Sprintf("unsloth-hf-llama31-8b-%dgb-max", r.vramGB), source: unslothBench,
			setup: fmt.Sprintf("Llama-3.1-8B QLoRA r=32 all linear, batch 1, %d GB VRAM: published maximum %s tokens", r.vramGB, tuner.Thousands(int64(r.maxLen))),
			model: model8B, gpu: "H100-80GB", gpuMemory: fmt.Sprintf("%dGiB", r.vramGB), metric: metricDevice, reported: "fits",
			workload: unslothHF(r.maxLen), note: unslothAssumed})
		if r.above == 0 {
			continue
		}
		out = append(out, validationCase{id: fmt.Sprintf("unsloth-hf-llama31-8b-%dgb-above", r.vramGB), source: unslothBench,
			setup: fmt.Sprintf("Llama-3.1-8B QLoRA r=32 all linear, batch 1, %d GB VRAM, %s tokens (the next size's maximum)", r.vramGB, tuner.Thousands(int64(r.above))),
			model: model8B, gpu: "H100-80GB", gpuMemory: fmt.Sprintf("%dGiB", r.vramGB), metric: metricDevice, reported: "oom",
			workload: unslothHF(r.above), note: unslothAssumed})
	}
	out = append(out, validationCase{id: "unsloth-hf-llama33-70b-48gb-oom", source: unslothBench,
		setup: "Llama-3.3-70B QLoRA r=32 all linear, batch 1, 48 GB VRAM: OOM at any length (6,916 tokens, the 80 GB maximum, shown)",
		model: "meta-llama/Llama-3.3-70B-Instruct", gpu: "A100-80GB", gpuMemory: "48GiB", metric: metricDevice, reported: "oom",
		workload: unslothHF(6916), note: unslothAssumed})

	// LLaMA-Factory: VRAM per length on one A100 40GB, OOM from 65,536.
	for _, r := range []struct {
		seq  int
		vram float64
		err  float64
	}{{1024, 6, 15}, {2048, 7, 15}, {4096, 9, 15}, {8192, 12, 10}, {16384, 19, 10}, {32768, 32, 10}} {
		out = append(out, validationCase{id: fmt.Sprintf("llamafactory-llama2-7b-qlora-%dk", r.seq/1024), source: lfPerf,
			setup: fmt.Sprintf("LLaMA2-7B QLoRA r=8 all modules, FA2, batch 1, %s tokens", tuner.Thousands(int64(r.seq))),
			model: llama2x7b, gpu: "A100-40GB", metric: metricDevice, measured: gibf(r.vram), unit: "GiB", reported: "fits", maxErr: r.err,
			workload: lfQLoRA(r.seq), note: lfAssumed})
	}
	out = append(out, validationCase{id: "llamafactory-llama2-7b-qlora-64k", source: lfPerf,
		setup: "LLaMA2-7B QLoRA r=8 all modules, FA2, batch 1, 65,536 tokens: OOM", model: llama2x7b, gpu: "A100-40GB",
		metric: metricDevice, reported: "oom", workload: lfQLoRA(65536), note: lfAssumed})
	return out
}
