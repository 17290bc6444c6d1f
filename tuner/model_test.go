package tuner

import (
	"math"
	"testing"
)

// Every catalog model's architecture-derived parameter count must match its
// published total within 0.5%, or within the rounding of the published figure
// when that is coarser (e.g. "0.49B" only says 0.485-0.495B).
func TestCatalogParamsMatchPublished(t *testing.T) {
	for _, m := range testCatalog(t).Models() {
		t.Run(m.ID, func(t *testing.T) {
			pub, halfUnit, err := ParsePublishedParams(m.PublishedParams)
			if err != nil {
				t.Fatal(err)
			}
			got := float64(m.Params())
			tol := math.Max(0.005*pub, halfUnit)
			if m.PublishedVision != "" {
				// The published total also counts a vision encoder of at
				// most this size, which the text stack leaves out.
				vis, _, err := ParsePublishedParams(m.PublishedVision)
				if err != nil {
					t.Fatal(err)
				}
				if got <= pub+tol && got >= pub-vis-tol {
					return
				}
			}
			if math.Abs(got-pub) > tol {
				t.Errorf("params = %.0f, published %s (%s): off by %.3f%% (tolerance %.3f%%)",
					got, m.PublishedParams, m.PublishedSource, (got-pub)/pub*100, tol/pub*100)
			}
		})
	}
}

// Exact totals from memory-model.md §8.1 (computed there with the same formula
// and checked against the published figures).
func TestParamsExactTotals(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		id           string
		total, activ int64
	}{
		{"meta-llama/Llama-2-7b-hf", 6_738_415_616, 6_738_415_616},
		{"meta-llama/Llama-2-13b-hf", 13_015_864_320, 13_015_864_320},
		{"meta-llama/Llama-2-70b-hf", 68_976_648_192, 68_976_648_192},
		{"meta-llama/Llama-3.1-8B", 8_030_261_248, 8_030_261_248},
		{"meta-llama/Llama-3.1-70B", 70_553_706_496, 70_553_706_496},
		{"meta-llama/Llama-3.1-405B", 405_853_388_800, 405_853_388_800},
		{"mistralai/Mistral-7B-v0.1", 7_241_732_096, 7_241_732_096},
		{"mistralai/Mistral-7B-Instruct-v0.2", 7_241_732_096, 7_241_732_096}, // v0.1's shapes
		{"mistralai/Mixtral-8x7B-v0.1", 46_702_792_704, 12_879_925_248},
		// Llama 4 text stacks: Scout MoE in every layer, Maverick in every
		// second (layer_step 2), each with one shared expert (Meta: 17B active).
		{"meta-llama/Llama-4-Scout-17B-16E", 107_769_861_120, 17_172_894_720},
		{"meta-llama/Llama-4-Maverick-17B-128E", 400_711_848_960, 17_184_691_200},
		// Qwen3-30B-A3B: 30.5B total, 3.3B activated (model card).
		{"Qwen/Qwen3-30B-A3B", 30_532_122_624, 3_353_032_704},
		{"Qwen/Qwen2.5-7B", 7_615_616_512, 7_615_616_512},
		{"Qwen/Qwen2.5-14B", 14_770_033_664, 14_770_033_664},
		{"Qwen/Qwen2.5-32B", 32_763_876_352, 32_763_876_352},
		{"Qwen/Qwen2.5-72B", 72_706_203_648, 72_706_203_648},
		{"google/gemma-2-9b", 9_241_705_984, 9_241_705_984},
		{"google/gemma-2-27b", 27_227_128_320, 27_227_128_320},
		{"microsoft/Phi-3-mini-4k-instruct", 3_821_079_552, 3_821_079_552},
		{"openai-community/gpt2", 124_439_808, 124_439_808},
		{"google-bert/bert-base-uncased", 109_482_240, 109_482_240},
		{"deepseek-ai/DeepSeek-V3", 671_026_419_200, 37_552_282_624},
		// Falcon-7B: multi-query attention (query_key_value 4544 → 4544 +
		// 2 × 64), one LayerNorm per parallel-attention layer, tied head:
		// 65024·4544 + 32 × (4544·4672 + 4544² + 2·4544·18176 + 2·4544) + 2·4544.
		{"tiiuae/falcon-7b", 6_921_720_704, 6_921_720_704},
		// XGen-7B: Llama-2-7B with a 51200 vocabulary, embedding and
		// untied head each 19200 × 4096 larger.
		{"Salesforce/xgen-7b-8k-base", 6_895_702_016, 6_895_702_016},
	}
	for _, tc := range tests {
		m, ok := c.Model(tc.id)
		if !ok {
			t.Fatalf("model %s missing", tc.id)
		}
		if got := m.Params(); got != tc.total {
			t.Errorf("%s Params = %d, want %d", tc.id, got, tc.total)
		}
		if got := m.ActiveParams(); got != tc.activ {
			t.Errorf("%s ActiveParams = %d, want %d", tc.id, got, tc.activ)
		}
	}
}

// memory-model.md §5.1 "Per-token KV from our own arithmetic (bf16, TP = 1)".
func TestKVBytesPerToken(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		id   string
		tp   int
		want int64
	}{
		{"meta-llama/Llama-2-7b-hf", 1, 524_288},
		{"meta-llama/Llama-2-13b-hf", 1, 819_200},
		{"meta-llama/Llama-2-70b-hf", 1, 327_680},
		{"meta-llama/Llama-3.1-70B", 1, 327_680},
		{"Qwen/Qwen2.5-72B", 1, 327_680},
		{"meta-llama/Llama-3.1-8B", 1, 131_072},
		{"mistralai/Mistral-7B-v0.1", 1, 131_072},
		{"mistralai/Mixtral-8x7B-v0.1", 1, 131_072},
		{"meta-llama/Llama-3.1-405B", 1, 516_096},
		{"Qwen/Qwen2.5-7B", 1, 57_344},
		{"Qwen/Qwen2.5-14B", 1, 196_608},
		{"Qwen/Qwen2.5-32B", 1, 262_144},
		{"google/gemma-2-9b", 1, 344_064},
		{"google/gemma-2-27b", 1, 376_832},
		{"microsoft/Phi-3-mini-4k-instruct", 1, 393_216},
		{"deepseek-ai/DeepSeek-V3", 1, 70_272},
		// KV heads split over TP until TP exceeds them, then replicate (vllm.md §7).
		{"meta-llama/Llama-3.1-8B", 2, 65_536},
		{"meta-llama/Llama-3.1-8B", 8, 16_384},
		{"meta-llama/Llama-3.1-8B", 16, 16_384},
		{"deepseek-ai/DeepSeek-V3", 8, 70_272},
		{"google-bert/bert-base-uncased", 1, 0},
		// Falcon-7B's one KV head: 2 × 32 layers × 64 × 2 bytes, the same on
		// every TP rank (the head is replicated, not split).
		{"tiiuae/falcon-7b", 1, 8_192},
		{"tiiuae/falcon-7b", 4, 8_192},
		{"Salesforce/xgen-7b-8k-base", 1, 524_288}, // Llama-2-7B's: 32 KV heads
	}
	for _, tc := range tests {
		m, _ := c.Model(tc.id)
		if got := m.KVBytesPerToken(tc.tp, 2); got != tc.want {
			t.Errorf("%s tp=%d KV bytes/token = %d, want %d", tc.id, tc.tp, got, tc.want)
		}
	}
	m, _ := c.Model("meta-llama/Llama-3.1-8B")
	if got := m.KVBytesPerToken(1, 1); got != 65_536 {
		t.Errorf("fp8 KV bytes/token = %d, want 65536", got)
	}
}

func TestModelLookup(t *testing.T) {
	c := testCatalog(t)
	tests := []struct{ in, want string }{
		{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"META-LLAMA/llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B"},
		{"Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"someone/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"},
		{"Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{"Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-0.5B"},
		{"gpt2", "openai-community/gpt2"},
		{"bert-large-uncased", "google-bert/bert-large-uncased"},
		{"google/gemma-2-9b-it", "google/gemma-2-9b"},
		{"meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-70B"},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Scout-17B-16E"},
		{"meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"},
		{"Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B"},
		{"microsoft/Phi-3.5-mini-instruct", "microsoft/Phi-3-mini-128k-instruct"},
		{"mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-Small-24B-Base-2501"},
		{"acme/unknown-model", ""},
	}
	for _, tc := range tests {
		m, ok := c.Model(tc.in)
		got := ""
		if ok {
			got = m.ID
		}
		if got != tc.want {
			t.Errorf("Model(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParsePublishedParams(t *testing.T) {
	tests := []struct {
		in        string
		val, half float64
		wantErr   bool
	}{
		{"8.03B", 8.03e9, 0.005e9, false},
		{"124M", 124e6, 0.5e6, false},
		{"671B", 671e9, 0.5e9, false},
		{"335144976", 335144976, 0.5, false},
		{"", 0, 0, true},
		{"abcB", 0, 0, true},
	}
	for _, tc := range tests {
		v, h, err := ParsePublishedParams(tc.in)
		if (err != nil) != tc.wantErr || math.Abs(v-tc.val) > 1e-3*math.Max(1, tc.val) || math.Abs(h-tc.half) > 1e-6*math.Max(1, tc.half) {
			t.Errorf("ParsePublishedParams(%q) = %v, %v, %v", tc.in, v, h, err)
		}
	}
}
