package tuner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// hfConfig wraps a decoded config.json with typed getters.
type hfConfig map[string]any

func (c hfConfig) has(key string) bool {
	v, ok := c[key]
	return ok && v != nil
}

// int returns the first present integer key; ok is false when none is set.
func (c hfConfig) int(keys ...string) (int, bool, error) {
	for _, k := range keys {
		v, ok := c[k]
		if !ok || v == nil {
			continue
		}
		n, isNum := v.(json.Number)
		if !isNum {
			return 0, false, fmt.Errorf("%s is not a number", k)
		}
		i, err := n.Int64()
		if err != nil {
			return 0, false, fmt.Errorf("%s is not an integer: %w", k, err)
		}
		return int(i), true, nil
	}
	return 0, false, nil
}

func (c hfConfig) float(key string) float64 {
	if n, ok := c[key].(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return 0
}

func (c hfConfig) bool(key string, def bool) bool {
	if b, ok := c[key].(bool); ok {
		return b
	}
	return def
}

// strings returns a list of strings; nil when the key is absent or not one.
func (c hfConfig) strings(key string) []string {
	l, ok := c[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// ints returns a list of integers; nil when the key is absent or not one.
func (c hfConfig) ints(key string) []int {
	l, ok := c[key].([]any)
	if !ok {
		return nil
	}
	out := make([]int, 0, len(l))
	for _, v := range l {
		n, ok := v.(json.Number)
		if !ok {
			return nil
		}
		i, err := n.Int64()
		if err != nil {
			return nil
		}
		out = append(out, int(i))
	}
	return out
}

func (c hfConfig) str(keys ...string) string {
	for _, k := range keys {
		if s, ok := c[k].(string); ok {
			return s
		}
	}
	return ""
}

// hfFamily is what we know about a supported model_type.
type hfFamily struct {
	tiedDefault bool   // PretrainedConfig subclass default for tie_word_embeddings
	qkvBias     bool   // q/k/v biases are part of the architecture
	mlp         string // swiglu, geglu or gelu
	norms       int    // norms per layer
	qkNorm      bool
	classic     bool // GPT-2/BERT style: LayerNorm, biases everywhere, learned positions, dropout
	encoder     bool
	encDec      bool // T5 style encoder-decoder (t5FromConfig)
}

var hfFamilies = map[string]hfFamily{
	"llama": {mlp: "swiglu", norms: 2},
	// Llama 3.2 Vision's text_config (transformers
	// models/mllama/configuration_mllama.py MllamaTextConfig, model_type
	// mllama_text_model): num_hidden_layers counts the cross-attention
	// layers listed in cross_attention_layers (see Model.CrossAttentionLayers).
	"mllama_text_model": {mlp: "swiglu", norms: 2},
	"mistral":           {mlp: "swiglu", norms: 2},
	"mixtral":           {mlp: "swiglu", norms: 2},
	"qwen2":             {qkvBias: true, mlp: "swiglu", norms: 2},
	"qwen2_moe":         {qkvBias: true, mlp: "swiglu", norms: 2},
	// Qwen2.5-VL's language model is Qwen2's (transformers
	// models/qwen2_5_vl: Qwen2_5_VLTextModel, q/k/v with biases); older
	// config.json files keep its keys at the top level beside
	// vision_config.
	"qwen2_5_vl":  {qkvBias: true, mlp: "swiglu", norms: 2},
	"qwen3":       {mlp: "swiglu", norms: 2, qkNorm: true},
	"qwen3_moe":   {mlp: "swiglu", norms: 2, qkNorm: true},
	"phi3":        {mlp: "swiglu", norms: 2},
	"llama4_text": {mlp: "swiglu", norms: 2},
	"granite":     {mlp: "swiglu", norms: 2},
	"gemma":       {tiedDefault: true, mlp: "geglu", norms: 2},
	"gemma2":      {tiedDefault: true, mlp: "geglu", norms: 4},
	"gemma3_text": {tiedDefault: true, mlp: "geglu", norms: 4, qkNorm: true},
	"deepseek_v2": {mlp: "swiglu", norms: 2},
	"deepseek_v3": {mlp: "swiglu", norms: 2},
	"gpt_oss":     {mlp: "swiglu", norms: 2},
	"gpt2":        {tiedDefault: true, qkvBias: true, mlp: "gelu", norms: 2, classic: true},
	"bert":        {tiedDefault: true, qkvBias: true, mlp: "gelu", norms: 2, classic: true, encoder: true},
	"roberta":     {tiedDefault: true, qkvBias: true, mlp: "gelu", norms: 2, classic: true, encoder: true},
	// Olmo2 puts its two norms after attention and MLP and normalizes q
	// and k over the whole projection (transformers models/olmo2); those
	// (hidden + kv_heads × head_dim weights a layer, under 0.01% of the
	// total) are left out.
	"olmo2": {mlp: "swiglu", norms: 2},
	// Falcon (transformers models/falcon): its shapes come from flags
	// rather than sizes (falconShapes).
	"falcon": {tiedDefault: true, mlp: "gelu", norms: 2},
	// T5, mT5 and UMT5 (transformers models/t5, mt5, umt5
	// configuration_*.py): T5Config leaves tie_word_embeddings to
	// PretrainedConfig (true); MT5Config's __init__ defaulted it to false
	// through v4.x (mt5/mt0 checkpoints state false); UMT5Config defaults
	// true. The MLP comes from feed_forward_proj.
	"t5":   {tiedDefault: true, norms: 2, encDec: true},
	"mt5":  {norms: 2, encDec: true},
	"umt5": {tiedDefault: true, norms: 2, encDec: true},
}

// SupportedModelTypes lists the config.json model_type values
// ModelFromHFConfig understands.
func SupportedModelTypes() []string { return sortedKeys(hfFamilies) }

// ModelFromHFConfig builds a Model from a Hugging Face config.json. It
// understands decoder-only llama, mistral, mixtral, qwen2, qwen2_moe, qwen3,
// qwen3_moe, phi3, granite, gemma, gemma2, gemma3_text, deepseek_v2,
// deepseek_v3, gpt_oss and gpt2 configs and encoder-only bert and roberta configs.
// Multimodal configs whose language model sits under "text_config" are read
// from there. The model id is the config's _name_or_path when present.
func ModelFromHFConfig(data []byte) (*Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var c hfConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse config.json: %w", err)
	}
	outer := c
	vision, _ := c["vision_config"].(map[string]any)
	if tc, ok := c["text_config"].(map[string]any); ok && !c.has("hidden_size") {
		inner := hfConfig(tc)
		if !inner.has("_name_or_path") && c.has("_name_or_path") {
			inner["_name_or_path"] = c["_name_or_path"]
		}
		c = inner
	}
	mt := c.str("model_type")
	fam, ok := hfFamilies[mt]
	if !ok {
		return nil, fmt.Errorf("config.json: unsupported model_type %q (supported: %s)",
			mt, strings.Join(SupportedModelTypes(), ", "))
	}
	build := modelFromFamily
	if fam.encDec {
		build = t5FromConfig
	}
	m, err := build(c, mt, fam)
	if err != nil {
		return nil, fmt.Errorf("config.json (%s): %w", mt, err)
	}
	if vision != nil {
		v, err := visionFromConfig(outer, hfConfig(vision), m.Hidden)
		if err != nil {
			return nil, fmt.Errorf("config.json: %w", err)
		}
		m.Vision = v
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return m, nil
}

func modelFromFamily(c hfConfig, mt string, fam hfFamily) (*Model, error) {
	var errs []error
	need := func(keys ...string) int {
		v, ok, err := c.int(keys...)
		if err != nil {
			errs = append(errs, err)
		} else if !ok {
			errs = append(errs, fmt.Errorf("missing %s", strings.Join(keys, " or ")))
		}
		return v
	}
	opt := func(def int, keys ...string) int {
		v, ok, err := c.int(keys...)
		if err != nil {
			errs = append(errs, err)
		}
		if !ok {
			return def
		}
		return v
	}
	m := &Model{
		ID: c.str("_name_or_path"), ModelType: mt, Encoder: fam.encoder,
		Hidden: need("hidden_size", "n_embd", "d_model"),
		Layers: need("num_hidden_layers", "n_layer", "num_layers"),
		Heads:  need("num_attention_heads", "n_head"),
		Vocab:  need("vocab_size"),
		Norm:   "rmsnorm", MLP: fam.mlp, NormsPerLayer: fam.norms, Positions: "rope",
		QKVBias: fam.qkvBias || c.bool("attention_bias", false), QKNorm: fam.qkNorm,
		TiedEmbeddings: c.bool("tie_word_embeddings", fam.tiedDefault),
		Dtype:          normalizeDtype(c.str("torch_dtype", "dtype")),
	}
	m.KVHeads = opt(m.Heads, "num_key_value_heads", "num_kv_heads")
	if c.bool("multi_query", false) {
		m.KVHeads = 1
	}
	if m.Heads > 0 {
		m.HeadDim = opt(m.Hidden/m.Heads, "head_dim")
	}
	if mt == "falcon" {
		falconShapes(c, m, opt)
	} else {
		m.MaxPositions = need("max_position_embeddings", "n_positions", "max_sequence_length")
	}
	switch {
	case mt == "falcon": // falconShapes
	case fam.classic:
		m.Norm, m.Positions, m.LinearBias = "layernorm", "learned", true
		m.Dropout = c.float("hidden_dropout_prob") > 0 || c.float("resid_pdrop") > 0 || c.float("attn_pdrop") > 0
		m.Intermediate = opt(4*m.Hidden, "intermediate_size", "n_inner")
	default:
		m.Intermediate = need("intermediate_size")
	}
	if fam.encoder {
		m.TypeVocab = opt(0, "type_vocab_size")
		m.Pooler = true
		m.TiedEmbeddings = true // no lm_head in the base encoder
	}
	if c.bool("use_sliding_window", true) {
		m.SlidingWindow = opt(0, "sliding_window")
	}
	m.Local = localAttentionLayout(mt, m.Layers, m.SlidingWindow, c.strings("layer_types"),
		opt(0, "sliding_window_pattern"), opt(0, "attention_chunk_size"), c.ints("no_rope_layers"))
	switch mt {
	case "mllama_text_model":
		// modeling_mllama.py MllamaTextModel: embed_tokens has vocab_size + 8 rows.
		m.CrossAttentionLayers = len(c.ints("cross_attention_layers"))
		m.ExtraEmbedTokens = 8
	case "mixtral":
		m.MoE = &MoE{Experts: need("num_local_experts"), ActiveExperts: need("num_experts_per_tok"),
			Intermediate: m.Intermediate}
	case "llama4_text":
		// transformers Llama4TextConfig (models/llama4/configuration_llama4.py):
		// intermediate_size is one routed expert's (and the shared expert's),
		// intermediate_size_mlp the dense layers'; interleave_moe_layer_step
		// makes every step-th layer MoE (Scout 1, Maverick 2). use_qk_norm is
		// an L2 norm without weights.
		expert := m.Intermediate
		m.Intermediate = opt(expert, "intermediate_size_mlp")
		m.MoE = &MoE{Experts: need("num_local_experts"), ActiveExperts: need("num_experts_per_tok"),
			Intermediate: expert, SharedExperts: 1, LayerStep: opt(1, "interleave_moe_layer_step")}
	case "qwen2_moe", "qwen3_moe":
		m.MoE = &MoE{Experts: need("num_experts"), ActiveExperts: need("num_experts_per_tok"),
			Intermediate: need("moe_intermediate_size"), SharedIntermediate: opt(0, "shared_expert_intermediate_size")}
		m.MoE.SharedGate = m.MoE.SharedIntermediate > 0
	case "gpt_oss":
		// transformers models/gpt_oss/modeling_gpt_oss.py: GptOssExperts
		// holds gate_up_proj (E × h × 2I) and down_proj (E × I × h) with
		// biases, GptOssTopKRouter a Linear(h, E) with bias; attention
		// projections carry biases (attention_bias).
		m.MoE = &MoE{Experts: need("num_local_experts"), ActiveExperts: need("num_experts_per_tok", "experts_per_token"),
			Intermediate: m.Intermediate, RouterBias: true, ExpertBias: true}
	case "deepseek_v2", "deepseek_v3":
		a := &MLA{QLoRARank: opt(0, "q_lora_rank"), KVLoRARank: need("kv_lora_rank"),
			QKRopeDim: need("qk_rope_head_dim"), QKNopeDim: need("qk_nope_head_dim"), VHeadDim: need("v_head_dim")}
		m.MLA = a
		m.HeadDim = a.QKNopeDim + a.QKRopeDim
		if n := opt(0, "n_routed_experts"); n > 0 {
			m.MoE = &MoE{Experts: n, ActiveExperts: need("num_experts_per_tok"),
				Intermediate: need("moe_intermediate_size"), SharedExperts: opt(0, "n_shared_experts"),
				DenseLayers: opt(0, "first_k_dense_replace"), RouterBias: c.str("topk_method") == "noaux_tc"}
		}
	}
	if m.MoE != nil {
		m.MoE.Fused = fusedExperts(mt)
	}
	if q, ok := c["quantization_config"].(map[string]any); ok {
		m.Quant = quantFromConfig(hfConfig(q), m.Layers)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// falconShapes reads what a Falcon config.json states by flags, with
// transformers' FalconConfig defaults for the keys falcon-7b's omits
// (models/falcon/configuration_falcon.py: max_position_embeddings 2048,
// ffn_hidden_size 4 × hidden, multi_query and parallel_attn true, bias
// false) and modeling_falcon.py's layout (huggingface/transformers
// 00dcc6dda6f6d8e69541a6b51f97986a80242367):
//   - KV heads: num_kv_heads under new_decoder_architecture (Falcon-40B,
//     180B), else one under multi_query (Falcon-7B), else every head;
//   - norms: a parallel-attention layer has one input_layernorm, or
//     ln_attn and ln_mlp when new_decoder_architecture with
//     num_ln_in_parallel_attn 2 (its default there); a sequential layer
//     two;
//   - LayerNorm with bias; bias puts biases on every linear (LinearBias);
//     FalconMLP is dense_h_to_4h and dense_4h_to_h, no gate.
func falconShapes(c hfConfig, m *Model, opt func(int, ...string) int) {
	m.Norm, m.LinearBias = "layernorm", c.bool("bias", false)
	m.MaxPositions = opt(2048, "max_position_embeddings")
	m.Intermediate = opt(4*m.Hidden, "ffn_hidden_size")
	newArch := c.bool("new_decoder_architecture", false)
	switch {
	case newArch:
		m.KVHeads = opt(m.Heads, "num_kv_heads", "n_head_kv")
	case c.bool("multi_query", true):
		m.KVHeads = 1
	default:
		m.KVHeads = m.Heads
	}
	m.NormsPerLayer = 2
	if c.bool("parallel_attn", true) && (!newArch || opt(2, "num_ln_in_parallel_attn") == 1) {
		m.NormsPerLayer = 1
	}
}

// t5FromConfig reads a T5-family config (transformers
// src/transformers/models/t5/configuration_t5.py and modeling_t5.py, v4.46;
// mt5 and umt5 share the layout):
//   - d_model, d_kv (per-head size, not d_model/num_heads in T5 v1.1 and
//     T0), num_heads, d_ff, num_layers and num_decoder_layers (default
//     num_layers), vocab_size;
//   - T5Attention's q, k, v, o are Linear(bias=False); T5LayerNorm is a
//     weight-only RMS norm that takes the variance in fp32; T5DenseActDense
//     (wi, wo) or, for feed_forward_proj "gated-…", T5DenseGatedActDense
//     (wi_0, wi_1, wo), none with biases;
//   - T5Block has a self-attention layer, a cross-attention layer in the
//     decoder, and the feed-forward layer, each with its own norm; each
//     T5Stack ends with final_layer_norm;
//   - the relative position bias is an Embedding(num_buckets, n_heads) in
//     the first block of each stack (has_relative_attention_bias=bool(i ==
//     0)); UMT5Attention has one in every block;
//   - dropout_rate (default 0.1) drops after every sub-layer, on the
//     attention weights and inside the MLP.
//
// T5 has no position limit; n_positions (512 in the original t5 configs, a
// legacy attribute) or else 512, the pre-training input length, stands in
// for MaxPositions.
func t5FromConfig(c hfConfig, mt string, fam hfFamily) (*Model, error) {
	var errs []error
	get := func(def int, required bool, keys ...string) int {
		v, ok, err := c.int(keys...)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !ok && required:
			errs = append(errs, fmt.Errorf("missing %s", strings.Join(keys, " or ")))
		case !ok:
			return def
		}
		return v
	}
	m := &Model{
		ID: c.str("_name_or_path"), ModelType: mt,
		Hidden: get(0, true, "d_model"), HeadDim: get(0, true, "d_kv"),
		Heads: get(0, true, "num_heads"), Intermediate: get(0, true, "d_ff"),
		Layers: get(0, true, "num_layers"), Vocab: get(0, true, "vocab_size"),
		Norm: "rmsnorm", NormsPerLayer: fam.norms, Positions: "relative",
		TiedEmbeddings:         c.bool("tie_word_embeddings", fam.tiedDefault),
		RelativeBuckets:        get(32, false, "relative_attention_num_buckets"),
		RelativeBiasEveryLayer: mt == "umt5",
		Dtype:                  normalizeDtype(c.str("torch_dtype", "dtype")),
	}
	m.KVHeads = m.Heads
	m.DecoderLayers = get(m.Layers, false, "num_decoder_layers")
	m.MaxPositions = get(512, false, "n_positions")
	rate := 0.1
	if c.has("dropout_rate") {
		rate = c.float("dropout_rate")
	}
	m.Dropout = rate > 0
	switch proj := c.str("feed_forward_proj"); {
	case proj == "" && mt == "t5", proj == "relu", proj == "gelu":
		m.MLP = "gelu" // plain two-matrix MLP; the activation does not change its size
	case strings.HasPrefix(proj, "gated-"), proj == "" && mt != "t5":
		m.MLP = "geglu" // MT5Config and UMT5Config default to gated-gelu
	default:
		errs = append(errs, fmt.Errorf("unknown feed_forward_proj %q", proj))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

func quantFromConfig(q hfConfig, layers int) *Quantization {
	out := &Quantization{Method: strings.ToLower(q.str("quant_method"))}
	if b, ok, _ := q.int("bits", "w_bit", "weight_bits"); ok {
		out.Bits = b
	}
	if g, ok, _ := q.int("group_size", "q_group_size"); ok {
		out.GroupSize = g
	}
	// compressed-tensors keeps the weight scheme under
	// config_groups.<name>.weights (num_bits, group_size, strategy).
	if groups, ok := q["config_groups"].(map[string]any); ok {
		for _, k := range sortedKeys(groups) {
			g, _ := groups[k].(map[string]any)
			w, _ := g["weights"].(map[string]any)
			if w == nil {
				continue
			}
			wc := hfConfig(w)
			if b, ok, _ := wc.int("num_bits"); ok && out.Bits == 0 {
				out.Bits = b
			}
			if gs, ok, _ := wc.int("group_size"); ok && out.GroupSize == 0 {
				out.GroupSize = gs
			}
			break
		}
	}
	var skip []string
	for _, key := range []string{"modules_to_not_convert", "ignore", "llm_int8_skip_modules"} {
		if l, ok := q[key].([]any); ok {
			for _, v := range l {
				if s, ok := v.(string); ok {
					skip = append(skip, s)
				}
			}
		}
	}
	out.Skip = parseQuantSkip(skip, layers)
	switch {
	case out.Method == "bitsandbytes" && q.bool("load_in_4bit", false):
		out.Bits = 4
	case out.Method == "bitsandbytes" && q.bool("load_in_8bit", false):
		out.Bits = 8
	case out.Method == "fp8" && out.Bits == 0:
		out.Bits = 8
	case out.Method == "mxfp4" && out.Bits == 0:
		out.Bits = 4
	}
	return out
}

// normalizeDtype maps torch dtype spellings to bfloat16, float16 or float32;
// an absent torch_dtype means float32 (transformers' default).
func normalizeDtype(s string) string {
	switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
	case "bfloat16", "bf16":
		return "bfloat16"
	case "float16", "fp16", "half":
		return "float16"
	default:
		return "float32"
	}
}

// parseQuantSkip reads a quantization_config's list of unquantized modules
// (transformers' modules_to_not_convert, compressed-tensors' ignore,
// bitsandbytes' llm_int8_skip_modules) into per-kind layer counts. A name
// with a layer index ("model.layers.0.mlp") counts that layer, a wildcard or
// bare name ("model.layers.*.self_attn", "gate") every layer; lm_head and
// embeddings are 16-bit anyway. Kinds: attention (self_attn, attn),
// router (router, a bare or trailing "gate"), experts (experts,
// shared_expert), and the whole MLP (mlp, feed_forward, block_sparse_moe).
// compressed-tensors may prefix a regular expression with "re:"; its
// pattern is read the same way.
func parseQuantSkip(names []string, layers int) quantSkip {
	type key struct {
		kind  string
		layer int
	}
	seen := map[key]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimPrefix(n, "re:"))
		var kind string
		switch {
		case strings.Contains(n, "router"), n == "gate", strings.HasSuffix(n, ".gate"), strings.HasSuffix(n, "mlp.gate$"):
			kind = "router"
		case strings.Contains(n, "experts") || strings.Contains(n, "shared_expert"):
			kind = "experts"
		case strings.Contains(n, "attn") || strings.Contains(n, "attention"):
			kind = "attention"
		case strings.Contains(n, "mlp") || strings.Contains(n, "feed_forward") || strings.Contains(n, "block_sparse_moe"):
			kind = "mlp"
		default:
			continue
		}
		if i, ok := layerOf(n); ok {
			if i < layers {
				seen[key{kind, i}] = true
			}
			continue
		}
		for i := range layers {
			seen[key{kind, i}] = true
		}
	}
	var s quantSkip
	for k := range seen {
		switch k.kind {
		case "attention":
			s.Attention++
		case "mlp":
			s.MLP++
		case "experts":
			s.Experts++
		case "router":
			s.Router++
		}
	}
	return s
}

// layerOf finds the index in "layers.<n>." of a module name.
func layerOf(name string) (int, bool) {
	_, rest, ok := strings.Cut(name, "layers.")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	return i, err == nil
}
