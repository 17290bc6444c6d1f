package tuner

import (
	"fmt"
	"strings"
)

// Attention kinds of local layers.
const (
	// SlidingAttention layers attend to the last Span keys (sliding_window).
	SlidingAttention = "sliding"
	// ChunkedAttention layers attend within chunks of Span tokens
	// (Llama 4's attention_chunk_size).
	ChunkedAttention = "chunked"
)

// LocalAttention describes the layers of a model that attend to a bounded
// span of keys; the model's other layers attend to the whole context.
// Serving engines size those layers' KV cache to the span (vLLM's hybrid
// KV cache manager, see vllmKVLayout).
type LocalAttention struct {
	Kind   string // SlidingAttention or ChunkedAttention
	Span   int    // window or chunk, in tokens
	Layers int    // how many layers are local (1..Layers)
	// Source says where the layout was read: a config.json key, or the
	// architecture's default when the config leaves the key out.
	Source string
}

// localAttentionLayout reads which layers attend locally. It knows the
// architectures whose vLLM model files build local layers:
//
//   - layer_types (transformers' per-layer list, e.g. gpt-oss and newer
//     Gemma configs): "sliding_attention" layers slide over sliding_window.
//   - gemma2: even layers slide (transformers Gemma2Config layer_types
//     default: sliding when (i+1) % 2 != 0; vLLM gemma2.py reads the same
//     layer_types).
//   - gemma3 / gemma3_text: sliding unless (i+1) % sliding_window_pattern
//     == 0, pattern 6 by default (vllm-project/vllm
//     vllm/model_executor/models/gemma3.py @004dc92, Gemma3Attention:
//     is_sliding = bool((layer_idx + 1) % config.sliding_window_pattern)).
//   - gpt_oss: even layers slide (vllm gpt_oss.py: sliding_window =
//     config.sliding_window if layer_idx % 2 == 0 else None).
//   - llama4_text: layers that keep RoPE (no_rope_layers[i] != 0, by
//     default all but every 4th: transformers Llama4TextConfig
//     no_rope_layer_interval 4) use chunked local attention over
//     attention_chunk_size (8192 by default) tokens (vllm llama4.py:
//     use_chunked_local_attn = not self.nope and config.attention_chunk_size).
//
// Other architectures return nil and are sized as full attention on every
// layer, which over-counts when a config sets sliding_window on all layers
// (Mistral-7B-v0.1): the conservative side.
//
// layerTypes, pattern, chunk and noRope are the config.json values (empty
// or 0 when absent); window is sliding_window.
func localAttentionLayout(modelType string, layers, window int, layerTypes []string, pattern, chunk int, noRope []int) *LocalAttention {
	if layers <= 0 {
		return nil
	}
	mk := func(kind string, span, n int, src string) *LocalAttention {
		if span <= 0 || n <= 0 {
			return nil
		}
		return &LocalAttention{Kind: kind, Span: span, Layers: min(n, layers), Source: src}
	}
	if len(layerTypes) == layers && modelType != "llama4_text" {
		n := 0
		for _, t := range layerTypes {
			if t == "sliding_attention" {
				n++
			}
		}
		return mk(SlidingAttention, window, n, fmt.Sprintf("config.json layer_types: %d of %d layers sliding_attention, sliding_window %d", n, layers, window))
	}
	switch modelType {
	case "gemma2":
		n := (layers + 1) / 2
		return mk(SlidingAttention, window, n, fmt.Sprintf("gemma2 alternates: %d of %d layers slide over sliding_window %d", n, layers, window))
	case "gemma3", "gemma3_text":
		src := fmt.Sprintf("sliding_window_pattern %d", pattern)
		if pattern <= 0 {
			pattern, src = 6, "sliding_window_pattern 6 (Gemma3TextConfig default)"
		}
		n := layers - layers/pattern
		return mk(SlidingAttention, window, n, fmt.Sprintf("gemma3 %s: %d of %d layers slide over sliding_window %d", src, n, layers, window))
	case "gpt_oss":
		n := (layers + 1) / 2
		return mk(SlidingAttention, window, n, fmt.Sprintf("gpt_oss alternates: %d of %d layers slide over sliding_window %d", n, layers, window))
	case "llama4_text":
		src := fmt.Sprintf("attention_chunk_size %d", chunk)
		if chunk <= 0 {
			chunk, src = 8192, "attention_chunk_size 8192 (Llama4TextConfig default)"
		}
		n := layers - layers/4
		nsrc := "NoPE every 4th layer (Llama4TextConfig no_rope_layer_interval 4)"
		if len(noRope) == layers {
			n = 0
			for _, v := range noRope {
				if v != 0 {
					n++
				}
			}
			nsrc = "config.json no_rope_layers"
		}
		return mk(ChunkedAttention, chunk, n, fmt.Sprintf("llama4 %s, %s: %d of %d layers chunked, the NoPE layers global", src, nsrc, n, layers))
	}
	return nil
}

// describe is the layout in words for estimate notes.
func (a *LocalAttention) describe(layers int) string {
	kind := "sliding-window"
	if a.Kind == ChunkedAttention {
		kind = "chunked-local"
	}
	return fmt.Sprintf("%d of %d layers %s (%d tokens), %d full", a.Layers, layers, kind, a.Span, layers-a.Layers)
}

// kvGroup is one of vLLM's KV cache groups: layers that share a block
// table and one attention kind.
type kvGroup struct {
	kind string // "full", SlidingAttention or ChunkedAttention
	span int
}

// kvLayout is how vLLM's KV cache manager lays out a model's attention
// layers on one GPU (vllm-project/vllm vllm/v1/core/kv_cache_utils.py
// @001cabc: get_kv_cache_groups, _get_kv_cache_groups_uniform_page_size,
// get_kv_cache_config_from_groups, _report_kv_cache_config,
// get_max_concurrency_for_kv_cache_config).
//
// A model with one attention kind is one group of all its layers. A
// hybrid model is split into groups of groupSize layers each, one attention
// kind per group: groupSize is the smaller of the two kinds' layer counts,
// or the larger when it is under 1.5 times the smaller; the last group of
// a kind is padded. Every group draws blocks from one pool of groupSize
// tensors, so a block costs groupSize layers' pages, and vLLM reports
// "GPU KV cache size" as num_blocks // len(groups) × block_size tokens.
type kvLayout struct {
	groups    []kvGroup
	groupSize int // layers per group on this GPU
	padding   int // padding layers (hybrid models whose counts do not divide)
}

// vllmKVLayout builds m's layout for pipeline stage size pp. With pipeline
// parallelism vLLM assigns every group's layers round-robin to stages, so
// a stage holds about groupSize / pp layers of each group. With the hybrid
// manager disabled every layer is one full-attention group.
//
// It counts all of m.Layers, Llama 3.2 Vision's cross-attention layers
// (Model.CrossAttentionLayers) included, unlike kvLayers: vLLM served
// mllama only on its V0 engine (0.9.2 logs "MllamaForConditionalGeneration
// is not supported by the V1 Engine. Falling back to V0",
// vllm-project/vllm-ascend#1963; vllm-project/vllm#24907, merged
// 2025-09-15, removed V0 encoder-decoder support and left Whisper the only
// one), and V0's CacheEngine gives every one of
// ModelConfig.get_num_layers() layers, hf_text_config.num_hidden_layers
// (40 for 11B, the 8 cross-attention layers among them), a cache tensor of
// num_gpu_blocks blocks, and get_cache_block_size multiplies a block by
// that layer count (vllm-project/vllm vllm/worker/cache_engine.py
// @017e7a4c, vllm/config.py get_num_layers). So a text token's block
// holds a page in each cross-attention layer too, and the image tokens'
// cross blocks one in each self-attention layer.
func vllmKVLayout(m *Model, pp int, disableHybrid bool) kvLayout {
	pp = max(pp, 1)
	a := m.Local
	if disableHybrid && a != nil && a.Layers < m.Layers {
		a = nil
	}
	if a == nil || a.Layers >= m.Layers || m.MLA != nil {
		kind, span := "full", 0
		if a != nil && a.Layers >= m.Layers {
			kind, span = a.Kind, a.Span
		}
		return kvLayout{groups: []kvGroup{{kind: kind, span: span}}, groupSize: ceilDiv(m.Layers, pp)}
	}
	full, local := m.Layers-a.Layers, a.Layers
	lo, hi := min(full, local), max(full, local)
	size := lo
	if float64(hi) < 1.5*float64(lo) {
		size = hi
	}
	var l kvLayout
	for _, k := range []struct {
		g kvGroup
		n int
	}{{kvGroup{kind: "full"}, full}, {kvGroup{kind: a.Kind, span: a.Span}, local}} {
		n := ceilDiv(k.n, size)
		for range n {
			l.groups = append(l.groups, k.g)
		}
		l.padding += n*size - k.n
	}
	l.groupSize = ceilDiv(size, pp)
	return l
}

// blocksFor is the number of blocks one request of maxLen tokens needs in
// group g (vllm/v1/kv_cache_interface.py @001cabc, max_memory_usage_bytes):
// full attention holds every token; a sliding window the last window − 1
// computed tokens plus one step's max_num_batched_tokens, plus one block
// because the window need not start at a block boundary; a chunked layer
// one chunk plus the step's tokens. Neither holds more than maxLen.
func (g kvGroup) blocksFor(maxLen, mnbt, bs int) int64 {
	switch g.kind {
	case SlidingAttention:
		return int64(ceilDiv(min(g.span-1+mnbt, maxLen), bs)) + 1
	case ChunkedAttention:
		return int64(ceilDiv(min(g.span+mnbt, maxLen), bs))
	}
	return int64(ceilDiv(maxLen, bs))
}

// requestBlocks is the number of pool blocks one maxLen request needs over
// all groups: vLLM's fit check compares groupSize × page × this sum with
// the memory available for the KV cache.
func (l kvLayout) requestBlocks(maxLen, mnbt, bs int) int64 {
	var n int64
	for _, g := range l.groups {
		n += g.blocksFor(maxLen, mnbt, bs)
	}
	return n
}

// hybrid reports whether the layout has more than one group.
func (l kvLayout) hybrid() bool { return len(l.groups) > 1 }

// describe is the layout in words for estimate notes.
func (l kvLayout) describe() string {
	count := map[string]int{}
	var order []string
	for _, g := range l.groups {
		name := "full-attention"
		switch g.kind {
		case SlidingAttention:
			name = fmt.Sprintf("sliding-window (%d)", g.span)
		case ChunkedAttention:
			name = fmt.Sprintf("chunked-local (%d)", g.span)
		}
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%d %s", count[n], n)
	}
	s := fmt.Sprintf("vLLM's hybrid KV cache manager: %s groups of %d layers per GPU", strings.Join(parts, " + "), l.groupSize)
	if l.padding > 0 {
		s += fmt.Sprintf(" (%d padding layers)", l.padding)
	}
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
