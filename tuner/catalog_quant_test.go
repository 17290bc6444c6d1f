package tuner

import (
	"strings"
	"testing"
)

// The official DeepSeek-V3 and R1 checkpoints are FP8: serving counts one
// byte per weight, and a catalog entry's quantization must name a known
// weight format.
func TestCatalogQuantization(t *testing.T) {
	c := testCatalog(t)
	for _, id := range []string{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"} {
		m, ok := c.Model(id)
		if !ok {
			t.Fatalf("%s not in the catalog", id)
		}
		if m.Quant == nil || m.Quant.Method != "fp8" || m.Quant.Bits != 8 {
			t.Errorf("%s: quantization %+v, want fp8/8", id, m.Quant)
		}
		f, err := servingWeightFormat(m, resolved{})
		if err != nil || f.name != "fp8" {
			t.Errorf("%s: serving weight format %q, %v; want fp8", id, f.name, err)
		}
	}
	if m, _ := c.Model("meta-llama/Llama-3.1-8B"); m.Quant != nil {
		t.Errorf("Llama-3.1-8B: quantization %+v, want none", m.Quant)
	}

	doc := modelDoc{ID: "org/m", ModelType: "llama", Hidden: 64, Layers: 2, Heads: 4, KVHeads: 4, HeadDim: 16,
		Intermediate: 128, Vocab: 100, MaxPositions: 128, Norm: "rmsnorm", MLP: "swiglu", Dtype: "bfloat16",
		Published: "1", PublishedSrc: "test", Quant: &quantDoc{Method: "nonsense", Bits: 3}}
	if _, err := buildModels(modelFile{Version: 1, Models: []modelDoc{doc}}); err == nil || !strings.Contains(err.Error(), "quantization") {
		t.Errorf("unknown quantization accepted: %v", err)
	}
}
