package tuner

import (
	"testing"
)

// Families that store their routed experts as one module of stacked
// parameters gather the whole layer's experts under ZeRO-3 and FSDP: that
// module, not one expert's matrix, is the largest layer.
func TestLargestLayerCountsFusedExperts(t *testing.T) {
	c := testCatalog(t)
	scout := mustModel(t, c, "meta-llama/Llama-4-Scout-17B-16E")
	maverick := mustModel(t, c, "meta-llama/Llama-4-Maverick-17B-128E")
	mixtral := mustModel(t, c, "mistralai/Mixtral-8x7B-v0.1")
	// gpt-oss-20b's config.json (openai/gpt-oss-20b): the experts carry
	// biases on gate_up (2I) and down (h) outputs.
	oss, err := ModelFromHFConfig([]byte(`{"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24,
		"num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
		"num_local_experts": 32, "num_experts_per_tok": 4, "vocab_size": 201088, "hidden_act": "silu",
		"max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "attention_bias": true, "sliding_window": 128}`))
	if err != nil {
		t.Fatalf("gpt_oss config: %v", err)
	}
	tests := []struct {
		name  string
		m     *Model
		fused bool
		want  int64
	}{
		{"Scout: 16 experts × 3 × 5120 × 8192", scout, true, 16 * 3 * 5120 * 8192},
		{"Maverick: 128 experts × 3 × 5120 × 8192", maverick, true, 128 * 3 * 5120 * 8192},
		{"gpt-oss-20b: 32 × (3 × 2880² + 2 × 2880 + 2880)", oss, true, 32 * (3*2880*2880 + 3*2880)},
		// transformers 4.x Mixtral: a ModuleList of one MLP per expert, so
		// the embedding (32000 × 4096) stays the largest module.
		{"Mixtral per-expert modules", mixtral, false, 32000 * 4096},
	}
	for _, tt := range tests {
		if tt.m.MoE == nil || tt.m.MoE.Fused != tt.fused {
			t.Errorf("%s: MoE %+v, want Fused %v", tt.name, tt.m.MoE, tt.fused)
		}
		if got := tt.m.LargestLayerParams(); got != tt.want {
			t.Errorf("%s: largest layer %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Under ZeRO-3 the model states follow DeepSpeed's estimator with the fused
// experts module as the largest layer (memory-model.md §2.2).
func TestZero3GathersFusedExperts(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-4-Scout-17B-16E")
	big := CapacityTarget("huge", 1<<50)
	w := Workload{Kind: Train, Precision: BF16, ZeroStage: 3, DataParallel: 8, SeqLen: 16,
		OffloadOptimizer: CPU, OffloadParam: CPU}
	gpu, _ := DeepSpeedZero3Estimate(m.Params(), 16*3*5120*8192, 8, 1, true, true, true, 1.5)
	e := estimate(t, m, big, w)
	if got := e.PerGPU.Weights + e.PerGPU.Gradients + e.PerGPU.OptimizerStates; got != gpu {
		t.Errorf("zero-3 full offload of Scout: %d, estimator with the fused experts %d", got, gpu)
	}
}

// axolotl's linearized Llama 4 re-pack has one nn.Linear per expert, so a
// name that says so maps to the catalog model with per-expert modules,
// leaving the catalog's own model fused.
func TestLinearizedNameUnfusesExperts(t *testing.T) {
	c := testCatalog(t)
	for _, id := range []string{"axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", "acme/Llama-4-Scout-17B-16E-linearized"} {
		m, _, ok := c.ModelByName(id)
		if !ok {
			t.Fatalf("%s: no model", id)
		}
		if m.MoE.Fused || m.LargestLayerParams() != 202048*5120 {
			t.Errorf("%s: Fused %v, largest layer %d, want per-expert modules and the embedding %d", id, m.MoE.Fused, m.LargestLayerParams(), 202048*5120)
		}
	}
	if scout := mustModel(t, c, "meta-llama/Llama-4-Scout-17B-16E"); !scout.MoE.Fused {
		t.Errorf("the catalog's Scout lost Fused after a linearized lookup")
	}
}
