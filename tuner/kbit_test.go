package tuner

import "testing"

// TestKbitFP32Upcast holds Workload.KbitFP32 to what PEFT's
// prepare_model_for_kbit_training does: every unquantized parameter
// (embeddings, lm_head, norms) gains 2 bytes, and the fp32 residual stream
// doubles each checkpointed layer input; the 4-bit matrices, the adapters
// and the logits are unchanged. Other workloads reject the setting.
func TestKbitFP32Upcast(t *testing.T) {
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	tg := mustGPU(t, c, "H100-80GB").Target()
	const seq = 4096
	base := Workload{Kind: QLoRA, LoRARank: 32, MicroBatch: 1, SeqLen: seq, Checkpointing: true}
	up := base
	up.KbitFP32 = true
	e0, e1 := estimate(t, m, tg, base), estimate(t, m, tg, up)

	other := m.Params() - m.quantizableParams()
	if got, want := e1.PerGPU.Weights-e0.PerGPU.Weights, 2*other; got != want {
		t.Errorf("weights grow by %d bytes, want 2 × %d unquantized parameters = %d", got, other, want)
	}
	if e1.PerGPU.Gradients != e0.PerGPU.Gradients || e1.PerGPU.OptimizerStates != e0.PerGPU.OptimizerStates {
		t.Errorf("adapter states changed: %+v vs %+v", e1.PerGPU, e0.PerGPU)
	}
	// Layer inputs: 2 more bytes per hidden element, per layer and token.
	minGrowth := int64(2 * m.Layers * m.Hidden * seq)
	if got := e1.PerGPU.Activations - e0.PerGPU.Activations; got < minGrowth || got > 2*minGrowth {
		t.Errorf("activations grow by %d bytes, want between %d (checkpointed inputs) and twice that", got, minGrowth)
	}

	for _, k := range []WorkloadKind{Train, LoRA, Inference} {
		w := Workload{Kind: k, KbitFP32: true}
		if _, err := EstimateMemory(m, tg, w); err == nil {
			t.Errorf("%s with KbitFP32: no error", k)
		}
	}
}
