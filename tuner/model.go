package tuner

import (
	"errors"
	"fmt"
	"strings"
)

// Model holds the architecture facts the memory model needs. Catalog models
// come from profiles/models.yaml; others from ModelFromHFConfig or ModelFromDir.
type Model struct {
	ID        string
	Aliases   []string
	ModelType string // Hugging Face model_type
	Encoder   bool   // encoder-only (BERT, RoBERTa): no lm_head, no KV cache

	// DecoderLayers makes the model an encoder-decoder (T5, mT5, UMT5):
	// Layers encoder blocks (self-attention, MLP, 2 norms) then
	// DecoderLayers decoder blocks (self-attention, cross-attention, MLP,
	// 3 norms), each stack with a final norm (transformers
	// models/t5/modeling_t5.py T5Block, T5Stack). 0 for other models.
	DecoderLayers int
	// RelativeBuckets is T5's relative position bias: a
	// relative_attention_num_buckets × heads embedding in the first block of
	// each stack (T5Attention has_relative_attention_bias), in every block
	// of UMT5 (RelativeBiasEveryLayer).
	RelativeBuckets        int
	RelativeBiasEveryLayer bool
	// CrossAttentionLayers is how many of the Layers are Llama 3.2 Vision
	// (mllama) cross-attention layers: transformers
	// models/mllama/modeling_mllama.py MllamaCrossAttentionDecoderLayer
	// replaces self-attention with attention over the image tokens (q, k, v,
	// o projections plus q_norm and k_norm over head_dim) and adds two
	// one-element tanh gates; its keys and values come from the vision
	// states, so it holds no KV cache for text tokens. 0 for other models.
	CrossAttentionLayers int
	// ExtraEmbedTokens are embedding rows beyond Vocab that the lm_head
	// does not have (mllama: nn.Embedding(vocab_size + 8, hidden) for the
	// image tokens, MllamaTextModel in modeling_mllama.py).
	ExtraEmbedTokens int

	Hidden, Layers, Heads, KVHeads, HeadDim, Intermediate, Vocab int
	MaxPositions                                                 int

	TiedEmbeddings bool
	QKVBias        bool   // bias on q, k, v only (Qwen2)
	LinearBias     bool   // bias on every linear and norm (GPT-2, BERT)
	QKNorm         bool   // per-head q/k RMSNorm (Qwen3, Gemma-3)
	Norm           string // "rmsnorm" or "layernorm"
	NormsPerLayer  int    // 2, Gemma-2/3: 4
	MLP            string // "swiglu", "geglu" (gated) or "gelu" (plain 2-matrix)
	Positions      string // "rope", "learned" or "relative" (T5 bias buckets)
	TypeVocab      int    // BERT token-type embeddings
	Pooler         bool
	Dropout        bool // dropout active in training: masks are stored (Korthikanti §4)
	SlidingWindow  int  // config.json sliding_window (0 when absent)
	// Local is the layers that attend to a bounded span (sliding window or
	// chunked local attention); nil when every layer attends to the whole
	// context or the architecture's layout is not known (localAttentionLayout).
	Local *LocalAttention

	MoE *MoE
	MLA *MLA
	// Vision is a multimodal checkpoint's image encoder and projector, read
	// from config.json's vision_config; nil for text-only models and for
	// catalog entries (whose totals leave it out, see PublishedVision).
	Vision *VisionTower

	Dtype string // checkpoint dtype: "bfloat16", "float16", "float32"
	// Quant is the checkpoint's quantization (from config.json
	// quantization_config); nil for an unquantized checkpoint.
	Quant *Quantization

	// ExactParams is the parameter count read from safetensors headers; when
	// set, Params returns it instead of the architecture formula.
	ExactParams int64
	// Checkpoint summarizes the safetensors headers ModelFromDir read; nil otherwise.
	Checkpoint *Checkpoint

	// PublishedParams and PublishedSource record the published total for
	// catalog entries (tests compare Params against it).
	PublishedParams string
	PublishedSource string
	// PublishedVision bounds the vision encoder that a multimodal
	// checkpoint's published total counts and the text stack sized here
	// leaves out; empty when the published figure is the text stack's.
	PublishedVision string
}

// MoE describes a mixture-of-experts MLP.
type MoE struct {
	Experts            int // routed experts per MoE layer
	ActiveExperts      int // experts per token (top-k)
	Intermediate       int // intermediate size of one routed expert
	SharedExperts      int // always-on experts of Intermediate size (DeepSeek n_shared_experts)
	SharedIntermediate int // one always-on expert of this size (Qwen2-MoE)
	DenseLayers        int // leading layers with a dense MLP (DeepSeek first_k_dense_replace)
	// LayerStep makes every LayerStep-th layer after the dense ones a MoE
	// layer and the others dense (Llama 4 interleave_moe_layer_step: layer
	// i is MoE when (i+1) % step == 0); 0 or 1 means every layer.
	LayerStep  int
	RouterBias bool // one bias per expert on the router (DeepSeek-V3 score correction, gpt-oss router bias)
	ExpertBias bool // biases on every expert projection (gpt-oss gate_up_proj_bias, down_proj_bias)
	SharedGate bool // sigmoid gate on the shared expert (Qwen2-MoE)
	// Fused: the layer's routed experts are one module holding stacked
	// (experts × …) parameters rather than one module per expert, so
	// gathering it under ZeRO-3 or FSDP gathers every expert of the layer
	// at once (fusedExperts lists the families).
	Fused bool
}

// fusedExperts reports whether a model_type stores its routed experts as
// stacked parameters on one module:
//   - llama4_text: Llama4TextExperts holds gate_up_proj (E × h × 2I) and
//     down_proj (E × I × h) as nn.Parameter (huggingface/transformers
//     src/transformers/models/llama4/modeling_llama4.py @ 63210d0e); torchtune's
//     Llama 4 builds GroupedExperts with gate_proj, up_proj, down_proj of
//     (E × …) each (pytorch/torchtune torchtune/modules/moe/experts.py @ 1a15a23c).
//   - gpt_oss: GptOssExperts holds gate_up_proj, gate_up_proj_bias,
//     down_proj, down_proj_bias, each with a leading experts dimension
//     (transformers src/transformers/models/gpt_oss/modeling_gpt_oss.py @ 6edf5b31).
//
// Mixtral, Qwen-MoE and DeepSeek are left per-expert: transformers 4.x
// builds them as an nn.ModuleList of one MLP per expert
// (models/mixtral/modeling_mixtral.py @ 00d4b3d2: MixtralSparseMoeBlock
// experts). transformers 5 stacks those families too (MixtralExperts with
// 3D gate_up_proj / down_proj under use_experts_implementation); which
// release a recipe runs is not known here, so they keep the 4.x layout.
func fusedExperts(modelType string) bool {
	switch modelType {
	case "llama4_text", "llama4", "gpt_oss":
		return true
	}
	return false
}

// fusedExpertParams is the parameter count of one layer's fused experts
// module: every routed expert's projections and, where present, biases.
func (m *Model) fusedExpertParams() int64 {
	e := m.MoE
	p := int64(e.Experts) * m.mlpParams(int64(e.Intermediate))
	if e.ExpertBias {
		p += int64(e.Experts) * m.expertBiasParams()
	}
	return p
}

// MLA describes DeepSeek multi-head latent attention.
type MLA struct {
	QLoRARank, KVLoRARank, QKRopeDim, QKNopeDim, VHeadDim int
}

// Quantization is a checkpoint's weight quantization.
type Quantization struct {
	Method    string // awq, gptq, fp8, bitsandbytes, compressed-tensors, mxfp4, ...
	Bits      int    // weight bits when known
	GroupSize int    // input rows per scale group (AWQ, GPTQ); 0 unknown, -1 per channel
	// Skip counts, per module kind, the layers whose weights the
	// checkpoint leaves unquantized (quantization_config
	// modules_to_not_convert, ignore, llm_int8_skip_modules).
	Skip quantSkip
}

// quantSkip counts the layers in which each module kind stays 16-bit.
type quantSkip struct {
	Attention, MLP, Experts, Router int
}

// Gated reports whether the MLP has gate, up and down projections.
func (m *Model) Gated() bool { return m.MLP == "swiglu" || m.MLP == "geglu" }

// normParams is the parameter count of one norm over n features.
func (m *Model) normParams(n int64) int64 {
	if m.Norm == "layernorm" {
		return 2 * n
	}
	return n
}

// EmbeddingParams counts the input embeddings (token, position, token type and
// the embedding LayerNorm of encoders).
func (m *Model) EmbeddingParams() int64 {
	h := int64(m.Hidden)
	p := int64(m.Vocab+m.ExtraEmbedTokens) * h
	if m.Positions == "learned" {
		p += int64(m.MaxPositions) * h
	}
	p += int64(m.TypeVocab) * h
	if m.Encoder {
		p += m.normParams(h)
	}
	return p
}

// LMHeadParams counts the output projection; 0 when tied or encoder-only.
func (m *Model) LMHeadParams() int64 {
	if m.TiedEmbeddings || m.Encoder {
		return 0
	}
	return int64(m.Vocab) * int64(m.Hidden)
}

// AttentionParams counts one layer's attention block (memory-model.md §8.1).
func (m *Model) AttentionParams() int64 {
	h, H, kv, hd := int64(m.Hidden), int64(m.Heads), int64(m.KVHeads), int64(m.HeadDim)
	if a := m.MLA; a != nil {
		// DeepSeek-V2/V3 MLA: q_a/q_b with q_a_layernorm (or a plain q_proj),
		// kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj and o_proj.
		qk := int64(a.QKNopeDim + a.QKRopeDim)
		var q int64
		if a.QLoRARank > 0 {
			r := int64(a.QLoRARank)
			q = h*r + r + r*H*qk
		} else {
			q = h * H * qk
		}
		r := int64(a.KVLoRARank)
		kvp := h*(r+int64(a.QKRopeDim)) + r + r*H*(int64(a.QKNopeDim)+int64(a.VHeadDim))
		return q + kvp + H*int64(a.VHeadDim)*h
	}
	p := h*H*hd + 2*h*kv*hd + H*hd*h
	switch {
	case m.LinearBias:
		p += H*hd + 2*kv*hd + h
	case m.QKVBias:
		p += (H + 2*kv) * hd
	}
	if m.QKNorm {
		p += 2 * hd
	}
	return p
}

// mlpParams counts a dense MLP with intermediate size i.
func (m *Model) mlpParams(i int64) int64 {
	h := int64(m.Hidden)
	if m.Gated() {
		p := 3 * h * i
		if m.LinearBias {
			p += 2*i + h
		}
		return p
	}
	p := 2 * h * i
	if m.LinearBias {
		p += i + h
	}
	return p
}

// DenseMLPParams counts one dense MLP layer.
func (m *Model) DenseMLPParams() int64 { return m.mlpParams(int64(m.Intermediate)) }

// MoEParams counts one MoE layer's MLP: routed experts, router and shared
// experts (memory-model.md §8.1 "MoE").
func (m *Model) MoEParams() int64 {
	e := m.MoE
	if e == nil {
		return 0
	}
	h := int64(m.Hidden)
	p := int64(e.Experts)*m.mlpParams(int64(e.Intermediate)) + h*int64(e.Experts)
	if e.RouterBias {
		p += int64(e.Experts)
	}
	if e.ExpertBias {
		p += int64(e.Experts) * m.expertBiasParams()
	}
	p += int64(e.SharedExperts) * m.mlpParams(int64(e.Intermediate))
	if e.SharedIntermediate > 0 {
		p += m.mlpParams(int64(e.SharedIntermediate))
	}
	if e.SharedGate {
		p += h
	}
	return p
}

// expertBiasParams counts one expert's biases: gate and up outputs (2I
// when gated) and the down output (h).
func (m *Model) expertBiasParams() int64 {
	i := int64(m.MoE.Intermediate)
	if m.Gated() {
		i *= 2
	}
	return i + int64(m.Hidden)
}

// activeMoEParams counts the MoE MLP weights one token touches.
func (m *Model) activeMoEParams() int64 {
	e := m.MoE
	h := int64(m.Hidden)
	p := int64(e.ActiveExperts)*m.mlpParams(int64(e.Intermediate)) + h*int64(e.Experts)
	p += int64(e.SharedExperts) * m.mlpParams(int64(e.Intermediate))
	if e.SharedIntermediate > 0 {
		p += m.mlpParams(int64(e.SharedIntermediate))
	}
	if e.SharedGate {
		p += h
	}
	return p
}

// layerNormParams counts one layer's norms.
func (m *Model) layerNormParams() int64 {
	return int64(m.NormsPerLayer) * m.normParams(int64(m.Hidden))
}

// moeLayers is the number of layers with a MoE MLP: those after the
// DenseLayers prefix, every LayerStep-th of them when the MoE layers
// interleave with dense ones.
func (m *Model) moeLayers() int {
	if m.MoE == nil {
		return 0
	}
	n := m.Layers - m.MoE.DenseLayers
	if step := m.MoE.LayerStep; step > 1 {
		n = 0
		for i := m.MoE.DenseLayers; i < m.Layers; i++ {
			if (i+1)%step == 0 {
				n++
			}
		}
	}
	return n
}

// ArchParams is the parameter count from the architecture formula in
// memory-model.md §8.1: embeddings + layers × (attention + MLP + norms) +
// final norm + untied lm_head (+ pooler).
func (m *Model) ArchParams() int64 {
	return m.paramsWith(m.MoEParams)
}

func (m *Model) paramsWith(moe func() int64) int64 {
	h := int64(m.Hidden)
	dense := int64(m.Layers - m.moeLayers())
	p := m.EmbeddingParams() + m.LMHeadParams()
	p += int64(m.Layers) * (m.AttentionParams() + m.layerNormParams())
	p += dense * m.DenseMLPParams()
	if m.MoE != nil {
		p += int64(m.moeLayers()) * moe()
	}
	if !m.Encoder {
		p += m.normParams(h) // final norm
	}
	p += m.decoderStackParams()
	// Each cross-attention layer adds q_norm, k_norm and its two gates.
	p += int64(m.CrossAttentionLayers) * (2*int64(m.HeadDim) + 2)
	if m.Vision != nil {
		p += m.Vision.Params
	}
	if m.Pooler {
		p += h*h + h
	}
	return p
}

// decoderStackParams counts an encoder-decoder's decoder blocks (two
// attention blocks, a dense MLP and one norm more than an encoder block),
// its final norm and the relative position biases; 0 for other models.
func (m *Model) decoderStackParams() int64 {
	var p int64
	if m.DecoderLayers > 0 {
		h := int64(m.Hidden)
		block := 2*m.AttentionParams() + m.DenseMLPParams() + m.layerNormParams() + m.normParams(h)
		p += int64(m.DecoderLayers)*block + m.normParams(h)
	}
	bias := int64(m.RelativeBuckets) * int64(m.Heads)
	if m.RelativeBiasEveryLayer {
		return p + bias*int64(m.Layers+m.DecoderLayers)
	}
	stacks := int64(1)
	if m.DecoderLayers > 0 {
		stacks = 2
	}
	return p + bias*stacks
}

// EncoderDecoder reports whether the model has separate encoder and
// decoder stacks (T5).
func (m *Model) EncoderDecoder() bool { return m.DecoderLayers > 0 }

// kvLayers is the number of layers whose self-attention fills a KV cache:
// the decoder's of an encoder-decoder; mllama's cross-attention layers
// attend to the image tokens, not the text, and are left out.
func (m *Model) kvLayers() int {
	if m.DecoderLayers > 0 {
		return m.DecoderLayers
	}
	return m.Layers - m.CrossAttentionLayers
}

// Params is the total parameter count: ExactParams when known (safetensors),
// otherwise ArchParams.
func (m *Model) Params() int64 {
	if m.ExactParams > 0 {
		return m.ExactParams
	}
	return m.ArchParams()
}

// ActiveParams counts the parameters one token uses (MoE: top-k experts).
func (m *Model) ActiveParams() int64 {
	if m.MoE == nil {
		return m.Params()
	}
	return m.paramsWith(m.activeMoEParams)
}

// LargestLayerParams is the biggest single module's parameter count, as
// DeepSpeed's ZeRO-3 estimator measures it (memory-model.md §2.2: the sum
// of a module's own parameters, for LLMs usually the embedding or
// lm_head). Fused experts are one module whose parameters hold every
// routed expert of the layer, so that module is the unit ZeRO-3 gathers
// (it fetches a module's own parameters together) and FSDP gathers with
// its wrapped block.
func (m *Model) LargestLayerParams() int64 {
	h := int64(m.Hidden)
	best := int64(m.Vocab) * h
	cands := []int64{h * int64(m.Heads) * int64(m.HeadDim), h * int64(m.Intermediate)}
	if m.MoE != nil {
		cands = append(cands, h*int64(m.MoE.Intermediate))
		if m.MoE.Fused {
			cands = append(cands, m.fusedExpertParams())
		}
	}
	for _, c := range cands {
		best = max(best, c)
	}
	return best
}

// LargestLinearParams is the biggest weight matrix inside the transformer
// layers (excluding embeddings and lm_head).
func (m *Model) LargestLinearParams() int64 {
	h := int64(m.Hidden)
	best := max(h*int64(m.Heads)*int64(m.HeadDim), h*int64(m.Intermediate))
	if m.MoE != nil {
		best = max(best, h*int64(m.MoE.Intermediate))
	}
	return best
}

// KVBytesPerToken is the KV-cache cost of one token on one GPU
// (memory-model.md §5.1; vllm.md §7): 2 × layers × max(1, kv_heads // tp) ×
// head_dim × dtype bytes, over the layers whose self-attention caches the
// token (kvLayers). MLA models store one latent of kv_lora_rank +
// qk_rope_head_dim per layer, with no factor 2 and the same size on every rank.
// Encoder-only models have no KV cache. vLLM's serving estimate takes its
// per-token cost from its block layout instead (vllmKVLayout), which for
// mllama counts the cross-attention layers as well.
func (m *Model) KVBytesPerToken(tp int, dtypeBytes float64) int64 {
	if m.Encoder {
		return 0
	}
	if tp < 1 {
		tp = 1
	}
	return m.kvBytesPerLayerToken(tp, dtypeBytes) * int64(m.kvLayers())
}

// kvBytesPerLayerToken is one layer's share of KVBytesPerToken: vLLM's
// page size per token of one attention layer.
func (m *Model) kvBytesPerLayerToken(tp int, dtypeBytes float64) int64 {
	if m.Encoder {
		return 0
	}
	tp = max(tp, 1)
	if a := m.MLA; a != nil {
		return int64(float64(a.KVLoRARank+a.QKRopeDim) * dtypeBytes)
	}
	kv := max(1, m.KVHeads/tp)
	return int64(float64(2*kv*m.HeadDim) * dtypeBytes)
}

// validate checks the facts the formulas rely on.
func (m *Model) validate() error {
	var errs []error
	pos := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	pos("hidden_size", m.Hidden)
	pos("num_layers", m.Layers)
	pos("num_heads", m.Heads)
	pos("num_kv_heads", m.KVHeads)
	pos("head_dim", m.HeadDim)
	pos("intermediate_size", m.Intermediate)
	pos("vocab_size", m.Vocab)
	pos("max_positions", m.MaxPositions)
	if m.Heads > 0 && m.KVHeads > 0 && m.Heads%m.KVHeads != 0 {
		errs = append(errs, fmt.Errorf("num_heads %d is not a multiple of num_kv_heads %d", m.Heads, m.KVHeads))
	}
	if m.Norm != "rmsnorm" && m.Norm != "layernorm" {
		errs = append(errs, fmt.Errorf("unknown norm %q", m.Norm))
	}
	if m.MLP != "swiglu" && m.MLP != "geglu" && m.MLP != "gelu" {
		errs = append(errs, fmt.Errorf("unknown mlp %q", m.MLP))
	}
	if m.Positions != "rope" && m.Positions != "learned" && m.Positions != "relative" {
		errs = append(errs, fmt.Errorf("unknown positions %q", m.Positions))
	}
	if m.CrossAttentionLayers < 0 || m.CrossAttentionLayers >= max(m.Layers, 1) || m.ExtraEmbedTokens < 0 {
		errs = append(errs, fmt.Errorf("cross_attention_layers %d must be below num_layers %d; extra_embed_tokens must not be negative",
			m.CrossAttentionLayers, m.Layers))
	}
	if m.DecoderLayers < 0 || m.RelativeBuckets < 0 {
		errs = append(errs, fmt.Errorf("decoder layers and relative buckets must not be negative"))
	}
	if m.NormsPerLayer <= 0 {
		errs = append(errs, fmt.Errorf("norms_per_layer must be positive"))
	}
	if e := m.MoE; e != nil {
		if e.Experts <= 0 || e.ActiveExperts <= 0 || e.ActiveExperts > e.Experts || e.Intermediate <= 0 ||
			e.DenseLayers < 0 || e.DenseLayers >= m.Layers || e.LayerStep < 0 || m.moeLayers() == 0 {
			errs = append(errs, fmt.Errorf("moe: inconsistent expert counts"))
		}
	}
	if a := m.MLA; a != nil && (a.KVLoRARank <= 0 || a.QKRopeDim <= 0 || a.VHeadDim <= 0) {
		errs = append(errs, fmt.Errorf("mla: kv_lora_rank, qk_rope_head_dim and v_head_dim must be positive"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("model %s: %w", m.ID, errors.Join(errs...))
	}
	return nil
}

// Model finds a catalog model by repo id, alias, or the name after "org/",
// ignoring case ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct").
func (c *Catalog) Model(id string) (*Model, bool) {
	k := strings.ToLower(strings.TrimSpace(id))
	if m, ok := c.modelIndex[k]; ok {
		return m, true
	}
	if i := strings.LastIndex(k, "/"); i >= 0 {
		m, ok := c.modelIndex[k[i+1:]]
		return m, ok
	}
	return nil, false
}

// Models returns the catalog models sorted by id.
func (c *Catalog) Models() []*Model { return append([]*Model(nil), c.models...) }

// modelKeys lists the lower-cased lookup keys of m: id, aliases and their bare names.
func modelKeys(m *Model) []string {
	seen := map[string]bool{}
	var keys []string
	for _, n := range append([]string{m.ID}, m.Aliases...) {
		k := strings.ToLower(n)
		for _, v := range []string{k, k[strings.LastIndex(k, "/")+1:]} {
			if !seen[v] {
				seen[v] = true
				keys = append(keys, v)
			}
		}
	}
	return keys
}
