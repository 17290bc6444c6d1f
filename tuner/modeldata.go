package tuner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

type modelFile struct {
	Version int        `yaml:"version" json:"version"`
	Models  []modelDoc `yaml:"models" json:"models"`
}

type modelDoc struct {
	ID            string    `yaml:"id" json:"id"`
	Aliases       []string  `yaml:"aliases" json:"aliases"`
	ModelType     string    `yaml:"model_type" json:"model_type"`
	Hidden        int       `yaml:"hidden_size" json:"hidden_size"`
	Layers        int       `yaml:"num_layers" json:"num_layers"`
	Heads         int       `yaml:"num_heads" json:"num_heads"`
	KVHeads       int       `yaml:"num_kv_heads" json:"num_kv_heads"`
	HeadDim       int       `yaml:"head_dim" json:"head_dim"`
	Intermediate  int       `yaml:"intermediate_size" json:"intermediate_size"`
	Vocab         int       `yaml:"vocab_size" json:"vocab_size"`
	MaxPositions  int       `yaml:"max_positions" json:"max_positions"`
	TieEmbeddings bool      `yaml:"tie_embeddings" json:"tie_embeddings"`
	QKVBias       bool      `yaml:"qkv_bias" json:"qkv_bias"`
	LinearBias    bool      `yaml:"linear_bias" json:"linear_bias"`
	QKNorm        bool      `yaml:"qk_norm" json:"qk_norm"`
	Norm          string    `yaml:"norm" json:"norm"`
	NormsPerLayer int       `yaml:"norms_per_layer" json:"norms_per_layer"`
	MLP           string    `yaml:"mlp" json:"mlp"`
	Positions     string    `yaml:"positions" json:"positions"`
	TypeVocab     int       `yaml:"type_vocab_size" json:"type_vocab_size"`
	Pooler        bool      `yaml:"pooler" json:"pooler"`
	Dropout       bool      `yaml:"dropout" json:"dropout"`
	Encoder       bool      `yaml:"encoder" json:"encoder"`
	SlidingWindow int       `yaml:"sliding_window" json:"sliding_window"`
	CrossAttn     int       `yaml:"cross_attention_layers" json:"cross_attention_layers"`
	ExtraEmbed    int       `yaml:"extra_embed_tokens" json:"extra_embed_tokens"`
	MoE           *moeDoc   `yaml:"moe" json:"moe"`
	MLA           *mlaDoc   `yaml:"mla" json:"mla"`
	Dtype         string    `yaml:"dtype" json:"dtype"`
	Quant         *quantDoc `yaml:"quantization" json:"quantization"`
	Published     string    `yaml:"published_params" json:"published_params"`
	PublishedSrc  string    `yaml:"published_source" json:"published_source"`
	PublishedVis  string    `yaml:"published_vision" json:"published_vision"`
}

type moeDoc struct {
	Experts            int  `yaml:"experts" json:"experts"`
	ActiveExperts      int  `yaml:"active_experts" json:"active_experts"`
	Intermediate       int  `yaml:"intermediate_size" json:"intermediate_size"`
	SharedExperts      int  `yaml:"shared_experts" json:"shared_experts"`
	SharedIntermediate int  `yaml:"shared_intermediate_size" json:"shared_intermediate_size"`
	DenseLayers        int  `yaml:"dense_layers" json:"dense_layers"`
	LayerStep          int  `yaml:"layer_step" json:"layer_step"`
	RouterBias         bool `yaml:"router_bias" json:"router_bias"`
	SharedGate         bool `yaml:"shared_gate" json:"shared_gate"`
}

// quantDoc is the official checkpoint's weight quantization, as its
// config.json quantization_config states it (quant_method and bits).
type quantDoc struct {
	Method string `yaml:"method" json:"method"`
	Bits   int    `yaml:"bits" json:"bits"`
}

type mlaDoc struct {
	QLoRARank  int `yaml:"q_lora_rank" json:"q_lora_rank"`
	KVLoRARank int `yaml:"kv_lora_rank" json:"kv_lora_rank"`
	QKRopeDim  int `yaml:"qk_rope_head_dim" json:"qk_rope_head_dim"`
	QKNopeDim  int `yaml:"qk_nope_head_dim" json:"qk_nope_head_dim"`
	VHeadDim   int `yaml:"v_head_dim" json:"v_head_dim"`
}

var validDtypes = map[string]bool{"bfloat16": true, "float16": true, "float32": true}

func buildModels(f modelFile) ([]*Model, error) {
	if f.Version != 1 {
		return nil, fmt.Errorf("model catalog: unsupported version %d", f.Version)
	}
	var out []*Model
	var errs []error
	for _, d := range f.Models {
		m := &Model{
			ID: d.ID, Aliases: append([]string(nil), d.Aliases...), ModelType: d.ModelType,
			Encoder: d.Encoder, Hidden: d.Hidden, Layers: d.Layers, Heads: d.Heads, KVHeads: d.KVHeads,
			HeadDim: d.HeadDim, Intermediate: d.Intermediate, Vocab: d.Vocab, MaxPositions: d.MaxPositions,
			TiedEmbeddings: d.TieEmbeddings, QKVBias: d.QKVBias, LinearBias: d.LinearBias, QKNorm: d.QKNorm,
			Norm: d.Norm, NormsPerLayer: d.NormsPerLayer, MLP: d.MLP, Positions: d.Positions,
			TypeVocab: d.TypeVocab, Pooler: d.Pooler, Dropout: d.Dropout, SlidingWindow: d.SlidingWindow,
			CrossAttentionLayers: d.CrossAttn, ExtraEmbedTokens: d.ExtraEmbed,
			Dtype: d.Dtype, PublishedParams: d.Published, PublishedSource: d.PublishedSrc,
			PublishedVision: d.PublishedVis,
		}
		if m.NormsPerLayer == 0 {
			m.NormsPerLayer = 2
		}
		// The catalog states sliding_window but not the per-layer pattern:
		// the architecture's default layout applies (the official configs'
		// own values, e.g. Llama 4's attention_chunk_size 8192).
		m.Local = localAttentionLayout(m.ModelType, m.Layers, m.SlidingWindow, nil, 0, 0, nil)
		if m.Positions == "" {
			m.Positions = "rope"
		}
		if d.MoE != nil {
			m.MoE = &MoE{
				Experts: d.MoE.Experts, ActiveExperts: d.MoE.ActiveExperts, Intermediate: d.MoE.Intermediate,
				SharedExperts: d.MoE.SharedExperts, SharedIntermediate: d.MoE.SharedIntermediate,
				DenseLayers: d.MoE.DenseLayers, LayerStep: d.MoE.LayerStep, RouterBias: d.MoE.RouterBias, SharedGate: d.MoE.SharedGate,
				Fused: fusedExperts(d.ModelType),
			}
		}
		if d.MLA != nil {
			m.MLA = &MLA{QLoRARank: d.MLA.QLoRARank, KVLoRARank: d.MLA.KVLoRARank,
				QKRopeDim: d.MLA.QKRopeDim, QKNopeDim: d.MLA.QKNopeDim, VHeadDim: d.MLA.VHeadDim}
		}
		var problems []error
		if q := d.Quant; q != nil {
			m.Quant = &Quantization{Method: q.Method, Bits: q.Bits}
			if _, ok := checkpointFormat(m.Quant); !ok || q.Method == "" {
				problems = append(problems, fmt.Errorf("quantization %s/%d bits is not a known weight format", q.Method, q.Bits))
			}
		}
		if !strings.Contains(m.ID, "/") {
			problems = append(problems, fmt.Errorf("id %q is not org/name", m.ID))
		}
		if m.ModelType == "" {
			problems = append(problems, errors.New("model_type is required"))
		}
		if !validDtypes[m.Dtype] {
			problems = append(problems, fmt.Errorf("unknown dtype %q", m.Dtype))
		}
		if _, _, err := ParsePublishedParams(m.PublishedParams); err != nil || m.PublishedSource == "" {
			problems = append(problems, fmt.Errorf("published_params %q needs a parseable value and a source", m.PublishedParams))
		}
		if _, _, err := ParsePublishedParams(m.PublishedVision); m.PublishedVision != "" && err != nil {
			problems = append(problems, fmt.Errorf("published_vision %q: %w", m.PublishedVision, err))
		}
		if err := m.validate(); err != nil {
			problems = append(problems, err)
		}
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("model catalog: %s: %w", d.ID, errors.Join(problems...)))
			continue
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

// ParsePublishedParams parses a published parameter figure such as "8.03B",
// "124M", "671B" or "335144976". It returns the value and the rounding
// precision the figure carries (half a unit in its last printed digit; 0.5 for
// an exact integer), so tests can tell a rounding difference from an error.
func ParsePublishedParams(s string) (value, halfUnit float64, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, errors.New("empty")
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'B', 'b':
		mult, s = 1e9, s[:len(s)-1]
	case 'M', 'm':
		mult, s = 1e6, s[:len(s)-1]
	case 'K', 'k':
		mult, s = 1e3, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, 0, fmt.Errorf("bad parameter figure %q", s)
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	return v * mult, 0.5 * mult * math.Pow(10, -float64(decimals)), nil
}
