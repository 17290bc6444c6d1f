package tuner

import "testing"

func TestModelByName(t *testing.T) {
	c := testCatalog(t)
	tests := []struct{ in, want, via string }{
		// A family and a size the catalog holds, in a fine-tune's name.
		{"acme/llama-3.1-8b-sft-v2", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"my-org/Qwen2.5-7B-Instruct-ft", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{"team/Meta-Llama-3.1-70B-Instruct-lora-merged", "meta-llama/Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B-Instruct"},
		{"acme/gemma-2-9b-it-dpo", "google/gemma-2-9b", "google/gemma-2-9b-it"},
		{"lab/SmolLM2-135M-math", "HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-135M"},
		{"acme/Qwen3-30B-A3B-sft", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B"},
		{"acme/mistral-7b-v0.3-chat", "mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3"},
		{"lab/DeepSeek-R1-Distill-Qwen-1.5B-GRPO", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
		// A name written where dots cannot go (a Kubernetes object name, a
		// storage path named after one), and a weights directory.
		{"pvc://s3-data/llama-31-8b-instruct", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"},
		{"gs://bucket/models/qwen25-7b-instruct/", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{"/data/gemma-3-27b-it", "google/gemma-3-27b-it", "google/gemma-3-27b-it"},
		// A size token keeps its dot: 05b is not 0.5b.
		{"acme/qwen25-05b", "", ""},
		// No catalog name in a row: no family, no size, or a size the
		// family does not have.
		{"acme/llama-8b-sft", "", ""},
		{"acme/llama-3.1-13b-sft", "", ""},
		{"acme/qwen-7b-chat", "", ""},
		{"acme/my-model", "", ""},
		// Two models, or two sizes: ambiguous.
		{"acme/llama-3.1-8b-vs-qwen2.5-7b", "", ""},
		{"acme/llama-3.1-8b-pruned-to-1b", "", ""},
		{"acme/mistral-7b-sft", "", ""}, // v0.1 or v0.3
		// A weight format the catalog name does not carry, whose bytes
		// the name states (fp8, awq): the catalog model with those weights
		// (TestModelByNameWeightFormat checks them).
		{"meta-llama/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct"},
		{"acme/llama-3.1-8b-sft-awq", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"acme/Qwen2.5-7B-Instruct-FP8-ft", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		// bitsandbytes re-packs: unsloth's -bnb-4bit and axolotl-quants'
		// -bnb-nf4. "Linearized" (axolotl's Llama 4 with each expert an
		// nn.Linear, the same shapes: src/axolotl/monkeypatch/models/llama4/
		// modeling.py @ 102fdac) and "bf16" are words beside the name.
		{"unsloth/llama-3.1-8b-bnb-4bit-sft", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"unsloth/Meta-Llama-3.1-8B-Instruct-unsloth-bnb-4bit", "meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B-Instruct"},
		{"axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", "meta-llama/Llama-4-Scout-17B-16E", "meta-llama/Llama-4-Scout-17B-16E"},
		// Whose bytes it does not state, or two formats: other weights.
		{"mlx-community/Llama-3.1-8B-Instruct-4bit", "", ""},
		{"acme/llama-3.1-8b-bnb", "", ""},
		{"acme/llama-3.1-8b-bnb-4bit-awq", "", ""},
		{"acme/llama-3.1-8b-nf4", "", ""},
		{"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "", ""},
		{"acme/llama-3.1-8b-gptq", "", ""},
		{"acme/llama-3.1-8b-int4", "", ""},
		{"acme/llama-3.1-8b-awq-fp8", "", ""},
		{"acme/llama-3.1-8b-fp8-w8a8", "", ""},
		{"acme/Llama-4-Maverick-17B-128E-Instruct-FP8-eval", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"},
		// Names without a size token are never mapped by name.
		{"acme/gpt2-finetuned", "", ""},
		{"acme/bert-base-uncased-ner", "", ""},
		{"acme/phi-4-sft", "", ""},
	}
	for _, tc := range tests {
		m, via, ok := c.ModelByName(tc.in)
		got := ""
		if ok {
			got = m.ID
		}
		if got != tc.want || via != tc.via {
			t.Errorf("ModelByName(%q) = %q via %q, want %q via %q", tc.in, got, via, tc.want, tc.via)
		}
	}
}

// TestModelByNameWeightFormat checks the weights a format token of the
// name gives the mapped model, and that the catalog's model is left as
// it was.
func TestModelByNameWeightFormat(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		in   string
		want *Quantization
	}{
		{"meta-llama/Llama-3.1-405B-Instruct-FP8", &Quantization{Method: "fp8", Bits: 8}},
		{"acme/llama-3.1-8b-sft-awq", &Quantization{Method: "awq", Bits: 4, GroupSize: 128}},
		{"acme/llama-3.1-8b-sft", nil},
		{"unsloth/llama-3.1-8b-bnb-4bit", &Quantization{Method: "bitsandbytes", Bits: 4}},
		{"axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", &Quantization{Method: "bitsandbytes", Bits: 4}},
		{"acme/llama-3.1-8b-bnb-8bit", &Quantization{Method: "bitsandbytes", Bits: 8}},
		// A catalog model quantized already keeps its own format.
		{"acme/Llama-4-Maverick-17B-128E-Instruct-FP8-eval", &Quantization{Method: "fbgemm_fp8", Bits: 8}},
	}
	for _, tc := range tests {
		m, _, ok := c.ModelByName(tc.in)
		if !ok {
			t.Errorf("ModelByName(%q) mapped to none", tc.in)
			continue
		}
		if (m.Quant == nil) != (tc.want == nil) || m.Quant != nil && (m.Quant.Method != tc.want.Method || m.Quant.Bits != tc.want.Bits || m.Quant.GroupSize != tc.want.GroupSize) {
			t.Errorf("ModelByName(%q).Quant = %+v, want %+v", tc.in, m.Quant, tc.want)
		}
	}
	if base, ok := c.Model("meta-llama/Llama-3.1-405B-Instruct"); !ok || base.Quant != nil {
		t.Errorf("catalog Llama-3.1-405B-Instruct after mapping an FP8 name: %+v, %v; want unquantized", base, ok)
	}
	// The bytes: an fp8 405B holds half the bf16 weights.
	fp8, _, _ := c.ModelByName("meta-llama/Llama-3.1-405B-Instruct-FP8")
	bf16, _, _ := c.ModelByName("acme/Llama-3.1-405B-Instruct-sft")
	f, ok := checkpointFormat(fp8.Quant)
	if !ok || f.linearBytes != 1 || bf16.Quant != nil {
		t.Errorf("fp8 name: format %+v (%v), bf16 name Quant %+v", f, ok, bf16.Quant)
	}
	// A bnb 4-bit name is NF4, 8-bit is int8; the Linearized Scout keeps
	// the catalog Scout's parameter count (same expert shapes).
	for name, bytes := range map[string]float64{"unsloth/llama-3.1-8b-bnb-4bit": 0.5625, "acme/llama-3.1-8b-bnb-8bit": 1} {
		m, _, _ := c.ModelByName(name)
		if f, ok := checkpointFormat(m.Quant); !ok || f.linearBytes != bytes {
			t.Errorf("%s: format %+v (%v), want %v bytes per weight", name, f, ok, bytes)
		}
	}
	lin, _, _ := c.ModelByName("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16")
	scout, _ := c.Model("meta-llama/Llama-4-Scout-17B-16E")
	if lin.Params() != scout.Params() {
		t.Errorf("linearized Scout params %d, catalog Scout %d", lin.Params(), scout.Params())
	}
}
