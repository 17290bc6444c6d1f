package tuner

import (
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQuantSkipFromConfig reads the spellings checkpoints use for the
// modules they leave unquantized.
func TestQuantSkipFromConfig(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  quantSkip
	}{
		// openai/gpt-oss-* quantization_config (transformers
		// convert_gpt_oss_weights_to_hf.py writes this list).
		{"gpt-oss", []string{"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"},
			quantSkip{Attention: 4, Router: 4}},
		{"one layer's MLP", []string{"model.layers.0.mlp"}, quantSkip{MLP: 1}},
		{"per projection, counted once per layer", []string{"model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.k_proj", "model.layers.2.self_attn.o_proj"},
			quantSkip{Attention: 2}},
		{"compressed-tensors lm_head only", []string{"lm_head"}, quantSkip{}},
		{"compressed-tensors regex router", []string{"lm_head", "re:.*mlp.gate$"}, quantSkip{Router: 4}},
		{"Mixtral AWQ bare gate", []string{"gate"}, quantSkip{Router: 4}},
		{"experts and a layer past the end", []string{"model.layers.*.mlp.experts", "model.layers.9.mlp"}, quantSkip{Experts: 4}},
		{"dense gate_proj is not a router", []string{"model.layers.0.mlp.gate_proj"}, quantSkip{MLP: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseQuantSkip(tt.names, 4)); diff != "" {
				t.Errorf("parseQuantSkip(%q) (-want +got):\n%s", tt.names, diff)
			}
		})
	}
}

const tinyDense = `{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
	"num_hidden_layers": 2, "vocab_size": 100, "max_position_embeddings": 256, "torch_dtype": "bfloat16"`

// TestSkippedModulesStay16Bit: a module named in modules_to_not_convert
// costs 2 bytes per parameter instead of the scheme's.
func TestSkippedModulesStay16Bit(t *testing.T) {
	plain := mustHF(t, tinyDense+`, "quantization_config": {"quant_method": "fp8"}}`)
	skipped := mustHF(t, tinyDense+`, "quantization_config": {"quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.mlp"]}}`)
	fp, _ := checkpointFormat(plain.Quant)
	fs, _ := checkpointFormat(skipped.Quant)
	got := weightBytes(skipped, fs) - weightBytes(plain, fp)
	want := plain.DenseMLPParams() * (2 - 1) // one layer's MLP at 2 B instead of 1 B
	if got != want {
		t.Errorf("skipping layer 0's MLP adds %d bytes, want %d", got, want)
	}
}

// TestInt4GroupSize: AWQ/GPTQ weights carry one fp16 scale and one 4-bit
// zero per group; the checkpoint's group_size sets how many.
func TestInt4GroupSize(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		want float64
	}{
		{`{"quant_method": "gptq", "bits": 4, "group_size": 32}`, 0.5 + 2.0/32 + 0.5/32},
		{`{"quant_method": "awq", "bits": 4, "group_size": 128}`, 0.5 + 2.0/128 + 0.5/128},
		{`{"quant_method": "gptq", "bits": 4, "group_size": -1}`, 0.5},
		{`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "group_size": 64}}}}`, 0.5 + 2.0/64 + 0.5/64},
	} {
		m := mustHF(t, tinyDense+`, "quantization_config": `+tt.cfg+`}`)
		f, ok := checkpointFormat(m.Quant)
		if !ok || math.Abs(f.linearBytes-tt.want) > 1e-12 {
			t.Errorf("%s: %s at %v bytes per weight (ok %v), want %v", tt.cfg, f.name, f.linearBytes, ok, tt.want)
		}
	}
}

// TestGptOssFromConfig: the gpt-oss configs give the published totals,
// 116.83B and 20.91B parameters (OpenAI, gpt-oss-120b & gpt-oss-20b model
// card, arXiv:2508.10925, Table 1), and only the experts are 4-bit.
func TestGptOssFromConfig(t *testing.T) {
	for _, tt := range []struct {
		dir  string
		want float64
	}{{"gpt-oss-120b", 116.83e9}, {"gpt-oss-20b", 20.91e9}} {
		b, err := os.ReadFile("internal/validation/testdata/" + tt.dir + "/config.json")
		if err != nil {
			t.Fatal(err)
		}
		m := mustHF(t, string(b))
		if got := float64(m.Params()); math.Abs(got-tt.want)/tt.want > 0.001 {
			t.Errorf("%s: %.4gB parameters, want %.4gB", tt.dir, got/1e9, tt.want/1e9)
		}
		f, _ := checkpointFormat(m.Quant)
		e := m.MoE
		experts := int64(m.Layers) * int64(e.Experts) * 3 * int64(m.Hidden) * int64(e.Intermediate)
		if got := m.quantizedParams(f.skip); got != experts {
			t.Errorf("%s: %d quantized parameters, want the experts' %d", tt.dir, got, experts)
		}
	}
}

// TestMarlinMXFP4Padding: below compute capability 10.0 vLLM pads mxfp4
// experts to the Marlin kernel's tile (hidden to 256, intermediate to 128);
// a GPU with native FP4 keeps them as stored.
func TestMarlinMXFP4Padding(t *testing.T) {
	b, err := os.ReadFile("internal/validation/testdata/gpt-oss-120b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	m := mustHF(t, string(b))
	f, _ := checkpointFormat(m.Quant)
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := c.GPU("H100-80GB")
	b200, _ := c.GPU("B200")
	want := int64(float64(36*128*3*(3072*2944-2880*2880)) * 0.53125)
	if got := marlinMXFP4Padding(m, f, h100.Target(), 1); got != want {
		t.Errorf("H100 padding %d bytes, want %d", got, want)
	}
	if got := marlinMXFP4Padding(m, f, b200.Target(), 1); got != 0 {
		t.Errorf("B200 padding %d bytes, want 0 (native FP4)", got)
	}
	bf16 := weightFormats["bf16"]
	if got := marlinMXFP4Padding(m, bf16, h100.Target(), 1); got != 0 {
		t.Errorf("bf16 experts padded by %d bytes, want 0", got)
	}
}

func mustHF(t *testing.T, cfg string) *Model {
	t.Helper()
	m, err := ModelFromHFConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
