package tuner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layerTypes writes a config.json layer_types list: sliding when
// slide(i), else full.
func layerTypes(n int, slide func(i int) bool) string {
	var l []string
	for i := range n {
		t := "full_attention"
		if slide(i) {
			t = "sliding_attention"
		}
		l = append(l, `"`+t+`"`)
	}
	return "[" + strings.Join(l, ",") + "]"
}

// Which layers attend locally is read from config.json, per architecture;
// architectures whose layout is not known stay full attention.
func TestLocalAttentionFromConfig(t *testing.T) {
	base := `"hidden_size": 2880, "num_hidden_layers": %d, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
		"intermediate_size": 2880, "vocab_size": 201088, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"`
	cfg := func(modelType string, layers int, extra string) string {
		s := fmt.Sprintf(`{"model_type": %q, `+base, modelType, layers)
		switch modelType {
		case "gpt_oss", "llama4_text":
			s += `, "num_local_experts": 32, "num_experts_per_tok": 4`
		}
		if extra != "" {
			s += ", " + extra
		}
		return s + "}"
	}
	tests := []struct {
		name string
		json string
		want *LocalAttention // Source is not compared
	}{
		{"gpt_oss layer_types", cfg("gpt_oss", 36, `"sliding_window": 128, "layer_types": `+layerTypes(36, func(i int) bool { return i%2 == 0 })),
			&LocalAttention{Kind: SlidingAttention, Span: 128, Layers: 18}},
		{"gpt_oss without layer_types alternates", cfg("gpt_oss", 24, `"sliding_window": 128`),
			&LocalAttention{Kind: SlidingAttention, Span: 128, Layers: 12}},
		{"gemma2 alternates, even layers slide", cfg("gemma2", 42, `"sliding_window": 4096`),
			&LocalAttention{Kind: SlidingAttention, Span: 4096, Layers: 21}},
		{"gemma3 default pattern 6", cfg("gemma3_text", 62, `"sliding_window": 1024`),
			&LocalAttention{Kind: SlidingAttention, Span: 1024, Layers: 52}},
		{"gemma3 stated pattern", cfg("gemma3_text", 26, `"sliding_window": 512, "sliding_window_pattern": 2`),
			&LocalAttention{Kind: SlidingAttention, Span: 512, Layers: 13}},
		{"llama4 no_rope_layers", cfg("llama4_text", 8, `"attention_chunk_size": 4096, "no_rope_layers": [1, 1, 0, 1, 1, 1, 1, 0]`),
			&LocalAttention{Kind: ChunkedAttention, Span: 4096, Layers: 6}},
		{"llama4 defaults: chunk 8192, NoPE every 4th", cfg("llama4_text", 48, ""),
			&LocalAttention{Kind: ChunkedAttention, Span: 8192, Layers: 36}},
		{"all layers full by layer_types", cfg("qwen3", 4, `"sliding_window": null, "layer_types": `+layerTypes(4, func(int) bool { return false })),
			nil},
		{"qwen2 with use_sliding_window false", cfg("qwen2", 4, `"sliding_window": 4096, "use_sliding_window": false`), nil},
		{"mistral: layout not known, full attention", cfg("mistral", 4, `"sliding_window": 4096`), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ModelFromHFConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			got := m.Local
			if got != nil {
				if got.Source == "" {
					t.Error("layout without a source")
				}
				c := *got
				c.Source = ""
				got = &c
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Local (-want +got):\n%s", diff)
			}
		})
	}
}

// vLLM's grouping (kv_cache_utils.py _get_kv_cache_groups_uniform_page_size):
// group size is the smaller layer count, or the larger one when it is under
// 1.5 times the smaller; each kind's last group is padded.
func TestVLLMKVLayout(t *testing.T) {
	type group struct{ full, local int }
	tests := []struct {
		name           string
		layers, local  int
		pp             int
		wantSize       int
		want           group
		wantPadding    int
		wantReqBlocks  int64 // one 32768-token request, max_num_batched_tokens 2048, block 16
		localKind      string
		localSpan      int
		wantUniformAll bool
	}{
		// Gemma 3 27B: 52 sliding, 10 full -> (10 full) + 6 × (10 sliding), 8 padding layers.
		{name: "gemma3-27b", layers: 62, local: 52, pp: 1, wantSize: 10, want: group{1, 6}, wantPadding: 8,
			localKind: SlidingAttention, localSpan: 1024, wantReqBlocks: 2048 + 6*(int64(ceilDiv(1023+2048, 16))+1)},
		// gpt-oss-20b: 12 and 12.
		{name: "gpt-oss-20b", layers: 24, local: 12, pp: 1, wantSize: 12, want: group{1, 1},
			localKind: SlidingAttention, localSpan: 128, wantReqBlocks: 2048 + int64(ceilDiv(127+2048, 16)) + 1},
		// vLLM's own example: gpt-oss-20b + eagle, 12 sliding + 13 full, padded to 13 and 13.
		{name: "12 sliding + 13 full", layers: 25, local: 12, pp: 1, wantSize: 13, want: group{1, 1}, wantPadding: 1,
			localKind: SlidingAttention, localSpan: 128, wantReqBlocks: 2048 + int64(ceilDiv(127+2048, 16)) + 1},
		// Llama 4: 36 chunked, 12 full -> 4 groups of 12 (PR #21761's description).
		{name: "llama4", layers: 48, local: 36, pp: 1, wantSize: 12, want: group{1, 3},
			localKind: ChunkedAttention, localSpan: 8192, wantReqBlocks: 2048 + 3*int64(ceilDiv(8192+2048, 16))},
		// Pipeline stages hold every group's layers round-robin.
		{name: "gemma2-9b pp2", layers: 42, local: 21, pp: 2, wantSize: 11, want: group{1, 1},
			localKind: SlidingAttention, localSpan: 4096, wantReqBlocks: 2048 + int64(ceilDiv(4095+2048, 16)) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Model{Layers: tc.layers, Local: &LocalAttention{Kind: tc.localKind, Span: tc.localSpan, Layers: tc.local}}
			l := vllmKVLayout(m, tc.pp, false)
			var got group
			for _, g := range l.groups {
				if g.kind == "full" {
					got.full++
				} else {
					got.local++
				}
			}
			if got != tc.want || l.groupSize != tc.wantSize || l.padding != tc.wantPadding {
				t.Errorf("groups %+v of %d layers, %d padding; want %+v of %d, %d padding", got, l.groupSize, l.padding, tc.want, tc.wantSize, tc.wantPadding)
			}
			if n := l.requestBlocks(32768, 2048, 16); n != tc.wantReqBlocks {
				t.Errorf("request blocks %d, want %d", n, tc.wantReqBlocks)
			}
		})
	}
	// A model with one attention kind is one group of all its layers.
	l := vllmKVLayout(&Model{Layers: 32}, 1, false)
	if len(l.groups) != 1 || l.groupSize != 32 || l.hybrid() {
		t.Errorf("full attention: %+v, want one group of 32", l)
	}
}

// The serving estimate follows vLLM for hybrid models: the pool's blocks
// cost groupSize layers each, the reported tokens are blocks per group ×
// block size, and a long request needs full-length blocks only in the
// full-attention groups. Gemma 3 27B serves 131072 tokens on one H100,
// which a full-attention count of its 62 layers (62 GiB of KV) refuses.
func TestServeEstimateHybridKV(t *testing.T) {
	c := testCatalog(t)
	h100 := mustGPU(t, c, "H100-80GB").Target()
	m := mustModel(t, c, "google/gemma-3-27b-it")
	w := Workload{Kind: Serve, MaxModelLen: 131072}
	e := estimate(t, m, h100, w)
	s := e.Serve
	perLayer := int64(2 * m.KVHeads * m.HeadDim * 2)
	block := int64(16) * perLayer * 10 // groups of 10 layers
	if want := s.KVCacheBytes / block; s.NumBlocks != want {
		t.Errorf("blocks %d, want %d", s.NumBlocks, want)
	}
	if want := s.NumBlocks / 7 * 16; s.KVCacheTokens != want { // 1 full + 6 sliding groups
		t.Errorf("KV cache tokens %d, want %d", s.KVCacheTokens, want)
	}
	wantReq := int64(131072/16 + 6*(ceilDiv(1023+s.MaxNumBatchedTokens, 16)+1))
	if s.RequestBlocks != wantReq || s.OneRequestKVBytes != wantReq*block {
		t.Errorf("request %d blocks / %d bytes, want %d / %d", s.RequestBlocks, s.OneRequestKVBytes, wantReq, wantReq*block)
	}
	if !e.Fits {
		t.Errorf("gemma-3-27b at 131072 tokens on one H100 does not fit: %v", e.Notes)
	}
	full := *m
	full.Local = nil
	if ef := estimate(t, &full, h100, w); ef.Fits {
		t.Errorf("full-attention count fits too; the case shows nothing")
	}
	if !strings.Contains(strings.Join(e.Notes, "\n"), "52 of 62 layers sliding-window (1024 tokens)") {
		t.Errorf("notes do not describe the layout: %q", e.Notes)
	}
}

// vLLM splits KV heads across tensor-parallel ranks or replicates them, so
// a degree must divide the KV heads or be a multiple of them, not only
// divide the attention heads: Llama 4 Scout (40 heads, 8 KV heads) cannot
// run at TP 5.
func TestServeTPCandidatesSplitKVHeads(t *testing.T) {
	for _, tc := range []struct {
		heads, kv, gpus int
		want            []int
		skipped         []string
	}{
		{40, 8, 8, []int{1, 2, 4, 8}, []string{"3", "5", "6", "7"}},
		{32, 8, 8, []int{1, 2, 4, 8}, []string{"3", "5", "6", "7"}},
		{64, 4, 16, []int{1, 2, 4, 8, 16}, []string{"3", "5", "6", "7", "9", "10", "11", "12", "13", "14", "15"}},
	} {
		req := PlanRequest{Model: &Model{Heads: tc.heads, KVHeads: tc.kv}, GPUs: tc.gpus}
		got, skipped := serveTPCandidates(req, 1)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("heads %d kv %d: candidates (-want +got):\n%s", tc.heads, tc.kv, diff)
		}
		if diff := cmp.Diff(tc.skipped, skipped); diff != "" {
			t.Errorf("heads %d kv %d: skipped (-want +got):\n%s", tc.heads, tc.kv, diff)
		}
	}
}

// vLLM v0.12.0 printed, for Llama-4-Scout at tensor parallel 8 with an
// fp8 KV cache and max_model_len 10,000,000, "GPU KV cache size: 7,838,976
// tokens" and "Max concurrency: 3.12x" (fuhengwu2021/coderepo
// extra/README.md @eba6695). The layout turns the one into the other
// without the rest of the memory model: 4 groups of 12 layers share the
// pool, and a request needs full length in one group and a chunk plus a
// step's tokens in three. A full-attention count would print 0.78x.
func TestHybridLayoutReproducesPublishedConcurrency(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-4-Scout-17B-16E-Instruct")
	const tokens, maxLen, mnbt, bs = 7838976, 10000000, 8192, 16
	for _, tc := range []struct {
		disabled bool
		want     string
	}{{false, "3.12"}, {true, "0.78"}} {
		l := vllmKVLayout(m, 1, tc.disabled)
		blocks := int64(tokens/bs) * int64(len(l.groups)) // tokens = blocks // groups × block size
		got := fmt.Sprintf("%.2f", float64(blocks)/float64(l.requestBlocks(maxLen, mnbt, bs)))
		if got != tc.want {
			t.Errorf("disabled=%v: concurrency %s, want %s (%s)", tc.disabled, got, tc.want, l.describe())
		}
	}
}
