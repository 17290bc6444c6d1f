package tuner

import "testing"

// smallMllama is a 4-layer text stack whose layer 3 is cross-attention.
func smallMllama() *Model {
	return &Model{Hidden: 8, Layers: 4, CrossAttentionLayers: 1, ExtraEmbedTokens: 2, Heads: 2, KVHeads: 1, HeadDim: 4,
		Intermediate: 16, Vocab: 10, MaxPositions: 16, Norm: "rmsnorm", NormsPerLayer: 2, MLP: "swiglu", Positions: "rope"}
}

func TestCrossAttentionLayers(t *testing.T) {
	m := smallMllama()
	if err := m.validate(); err != nil {
		t.Fatal(err)
	}
	// embed (10+2)×8 = 96; lm_head 10×8 = 80; 4 layers × (attention
	// 8×8 + 2×8×4 + 8×8 = 192, MLP 3×8×16 = 384, norms 16) = 2368; final
	// norm 8; the cross layer's q_norm and k_norm (2×4) and 2 gates = 10.
	if got, want := m.Params(), int64(96+80+2368+8+10); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	// KV for the 3 self-attention layers only: 2 × 1 kv head × 4 × 2 B × 3.
	if got, want := m.KVBytesPerToken(1, 2), int64(2*1*4*2*3); got != want {
		t.Errorf("KV bytes/token = %d, want %d", got, want)
	}
	m.CrossAttentionLayers = m.Layers
	if err := m.validate(); err == nil {
		t.Error("every layer cross-attention: want a validation error")
	}
}
