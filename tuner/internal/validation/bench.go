package validation

import (
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/tuner"
)

// benchSource is the "measured here" source: bench/gpu in this repository.
const benchSource = "measured here: bench/gpu/results (one NVIDIA H200, driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, transformers 5.17.0, peft 0.21.0; random-weight models built from the catalog's dimensions; bench/gpu/README.md)"

// benchRow is one measured setup of bench/gpu/measure_memory.py.
type benchRow struct {
	id, file, model, workload, precision, attn, optimizer, targets string
	microBatch, seqLen                                             int
	checkpointing                                                  bool
	logitsToKeep                                                   int
	allocated                                                      int64 // peak_allocated; 0 when the trial ran out of memory
	status, card                                                   string
}

// benchCases turns the measured rows into validation cases. Each restates
// the script's setup: torch's AdamW with the recorded implementation,
// transformers' own loss (hf-default), the recorded attention, PEFT LoRA
// r=16 on the recorded targets, and for inference a forward over every
// prompt position unless logits_to_keep=1. The metric is
// max_memory_allocated: the allocator's reserve and the CUDA context are
// outside what the script controls (bench/gpu/README.md findings 3 and 7).
func benchCases() []validationCase {
	var out []validationCase
	for _, b := range benchRows {
		w := tuner.Workload{Kind: tuner.WorkloadKind(b.workload), Precision: tuner.Precision(b.precision),
			MicroBatch: b.microBatch, SeqLen: b.seqLen, Checkpointing: b.checkpointing}
		if b.attn == "eager" {
			w.Attention = tuner.EagerAttention
		}
		switch b.optimizer {
		case "foreach":
			w.Optimizer = tuner.AdamWForeach
		case "fused":
			w.Optimizer = tuner.AdamWFused
		}
		if w.Kind == tuner.LoRA {
			w.LoRARank = 16
			w.LoRATargets = strings.Split(b.targets, ",")
		}
		if w.Kind == tuner.Inference {
			w.Optimizer = ""
			w.PrefillLogits = tuner.AllLogits
			if b.logitsToKeep == 1 {
				w.PrefillLogits = tuner.LastLogits
			}
		}
		setup := fmt.Sprintf("%s %s %s, micro-batch %d, seq %d", shortModel(b.model), b.workload, b.precision, b.microBatch, b.seqLen)
		if b.checkpointing {
			setup += ", checkpointing"
		}
		if b.attn == "eager" {
			setup += ", eager attention"
		}
		if w.Kind == tuner.LoRA {
			setup += ", LoRA on " + b.targets
		}
		if b.optimizer == "fused" {
			setup += ", fused AdamW"
		}
		if b.logitsToKeep == 1 {
			setup += ", logits_to_keep=1"
		}
		c := validationCase{id: b.id, source: benchSource, setup: setup, model: b.model, gpu: b.card,
			workload: w, metric: metricAllocated, reported: "fits", maxErr: 25, unit: "GiB",
			measured: float64(b.allocated)}
		if b.card != "H200" {
			c.note = fmt.Sprintf("max-micro-batch trial under torch.cuda.set_per_process_memory_fraction emulating %s (%s)", b.card, b.file)
		} else if b.file != "results" {
			c.note = "run alone in the second call (" + b.file + ".jsonl)"
		}
		if b.status == "oom" {
			c.reported = "oom"
		}
		out = append(out, c)
	}
	return out
}

func shortModel(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}
