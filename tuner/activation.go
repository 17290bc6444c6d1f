package tuner

// Activation memory. The training model is Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models" (arXiv:2205.05198),
// §4 and Table 2, adapted to modern models as memory-model.md §3.1 describes:
//   - Korthikanti per layer (16-bit activations, 1-byte dropout masks, TP
//     without sequence parallelism): 2sbh QKV input, Q and K 4sbh, V 2sbh,
//     out-proj input 2sbh, attention-output mask sbh, MLP input 2sbh,
//     fc1 output 8sbh, GeLU output 8sbh, MLP mask sbh, two LayerNorm inputs
//     4sbh, plus 5as²b for the materialized softmax (2as²b output, as²b mask,
//     2as²b dropout output). Everything except the norm and linear inputs and
//     masks is split over TP (the "10 + 24/t" split).
//   - FlashAttention/SDPA stores only Q, K, V, the output and an fp32
//     log-sum-exp, so the s² terms drop out unless Attention is eager.
//   - GQA stores K and V at kv_heads × head_dim.
//   - A gated MLP (SwiGLU/GeGLU) stores gate out, up out, activation out and
//     their product: 4 × 2sbI = 8sbI (memory-model.md §3.1); a plain MLP
//     stores fc1 out and activation out: 4sbI.
//   - Models without dropout (Llama-style) store no masks.
//   - RMSNorm as Hugging Face and torchtune implement it upcasts its input
//     to fp32 and keeps that copy plus the normalized 16-bit output for
//     backward: 4 + 2 bytes per element (transformers LlamaRMSNorm.forward);
//     torch LayerNorm keeps its input (Korthikanti's 2 bytes).
//   - The fp32 logits for the loss take 4sbv/t bytes (Korthikanti §4.3);
//     for vocabularies of 128k+ at small h this term dominates
//     (memory-model.md §3.1). Encoder-only models are assumed to train a small
//     classification head: no vocabulary logits.
//   - Full checkpointing keeps each layer's input (2sbh per layer) plus one
//     layer's full working set while it is recomputed.
//   - Pipeline parallelism with 1F1B: the first stage holds p micro-batches
//     of L/p layers, i.e. L layers' worth (Korthikanti Eq. 5); the last stage
//     holds the logits.
// Sequence parallelism, LoRA's smaller saved set for frozen nn.Linear layers
// and fused norm kernels are not modelled; all make real usage lower.

// actElemBytes is the stored activation element size: 4 for fp32 training,
// 2 under any 16-bit or 8-bit compute (FP8 recipes keep 16-bit activations
// for the saved tensors we count).
func actElemBytes(p Precision) float64 {
	if p == FP32 {
		return 4
	}
	return 2
}

// layerActivation holds one layer's stored bytes for one token: perToken
// bytes, plus perTokenSeq × s bytes for the eager s² terms.
type layerActivation struct {
	perToken, perTokenSeq float64
}

func (l layerActivation) bytes(tokens, seq float64) float64 {
	return tokens * (l.perToken + l.perTokenSeq*seq)
}

// trainLayerActivation is the per-token storage of one transformer layer.
func trainLayerActivation(m *Model, r resolved, moe bool) layerActivation {
	ab := actElemBytes(r.Precision)
	t := float64(r.TensorParallel)
	h := float64(m.Hidden)
	H := float64(m.Heads)

	normElem := ab // torch LayerNorm keeps its input
	if m.Norm == "rmsnorm" {
		normElem = 4 + ab // fp32 upcast copy + normalized output
	}
	// Replicated across TP ranks: norm inputs, the inputs of the QKV and MLP
	// projections, dropout masks.
	rep := float64(m.NormsPerLayer)*normElem*h + 2*ab*h
	if m.Dropout {
		rep += 2 * h
	}
	// Attention, split over TP.
	var attn float64
	if a := m.MLA; a != nil {
		qk := float64(a.QKNopeDim + a.QKRopeDim)
		v := float64(a.VHeadDim)
		attn = ab * H * (2*qk + 2*v) / t
		rep += ab * float64(a.QLoRARank+a.KVLoRARank+a.QKRopeDim) // compressed latents
	} else {
		hd := float64(m.HeadDim)
		kvPerRank := float64(max(1, m.KVHeads/r.TensorParallel))
		attn = ab*(2*H*hd/t) + ab*2*kvPerRank*hd // Q and output; K and V
	}
	var s2 float64
	if r.Attention == EagerAttention {
		s2 = ab * H / t // softmax output
		if m.Dropout {
			s2 += (1 + ab) * H / t // dropout mask and output
		}
	} else {
		attn += 4 * H / t // fp32 log-sum-exp
	}
	mlp := mlpActivation(m, r, moe, ab, t)
	return layerActivation{perToken: rep + attn + mlp, perTokenSeq: s2}
}

// mlpActivation is the MLP's stored bytes per token.
func mlpActivation(m *Model, r resolved, moe bool, ab, t float64) float64 {
	per := func(i float64) float64 {
		if m.Gated() {
			return 4 * ab * i / t
		}
		return 2 * ab * i / t
	}
	if !moe {
		return per(float64(m.Intermediate))
	}
	e := m.MoE
	// Each token runs through top-k routed experts and the shared experts; the
	// dispatcher keeps a permuted copy of the token per routed expert and the
	// fp32 router logits (our approximation of common MoE implementations).
	x := float64(e.ActiveExperts) * per(float64(e.Intermediate))
	x += float64(e.SharedExperts) * per(float64(e.Intermediate))
	if e.SharedIntermediate > 0 {
		x += per(float64(e.SharedIntermediate))
	}
	x += float64(e.ActiveExperts)*ab*float64(m.Hidden) + 4*float64(e.Experts)
	return x
}

// trainActivations returns the activation bytes of one GPU for training.
func trainActivations(m *Model, r resolved) int64 {
	ab := actElemBytes(r.Precision)
	s := float64(r.SeqLen)
	tokens := s * float64(r.MicroBatch)
	h := float64(m.Hidden)
	t := float64(r.TensorParallel)
	p := r.PipelineParallel

	dense := trainLayerActivation(m, r, false)
	moe := dense
	denseLayers, moeLayers := m.Layers, 0
	if m.MoE != nil {
		moe = trainLayerActivation(m, r, true)
		denseLayers, moeLayers = m.MoE.DenseLayers, m.Layers-m.MoE.DenseLayers
	}
	biggest := max(dense.bytes(tokens, s), moe.bytes(tokens, s))

	// layers returns the stored bytes of n layers (n ≤ L, dense ones first) for
	// one micro-batch.
	layers := func(n int) float64 {
		if r.Checkpointing {
			return float64(n)*ab*h*tokens + biggest
		}
		nd := min(n, denseLayers)
		nm := min(n-nd, moeLayers)
		return float64(nd)*dense.bytes(tokens, s) + float64(nm)*moe.bytes(tokens, s)
	}
	embed := ab * h * tokens
	if m.Dropout {
		embed += h * tokens
	}
	normElem := ab
	if m.Norm == "rmsnorm" {
		normElem = 4 + ab
	}
	final := (normElem + ab) * h * tokens
	var logits float64
	if !m.Encoder {
		logits = 4 * tokens * float64(m.Vocab) / t
	}
	if p == 1 {
		return int64(layers(m.Layers) + embed + final + logits)
	}
	// 1F1B: the first stage keeps p micro-batches of L/p layers.
	first := float64(p)*layers((m.Layers+p-1)/p) + embed
	if r.Checkpointing {
		first = float64(m.Layers)*ab*h*tokens + biggest + embed
	}
	last := layers((m.Layers+p-1)/p) + final + logits
	return int64(max(first, last))
}

// inferenceActivations is the transient peak of a no-grad forward pass over
// tokens tokens: the MLP intermediate of one layer plus a few hidden-size
// buffers, (3·I/t + 3·h) × 2 bytes per token (memory-model.md §5.2, fitted on
// vllm#10517 at ≈108 KiB per token for Llama-3.1-8B), with MoE layers using
// the fused-MoE caches of their top-k experts.
func inferenceForward(m *Model, tokens int64, tp int, ab float64) int64 {
	t := float64(tp)
	h := float64(m.Hidden)
	per := 3*float64(m.Intermediate)/t + 3*h
	if e := m.MoE; e != nil {
		// vLLM fused_moe caches per token: top_k × (2I + I) intermediate and
		// top_k × h output, plus shared experts.
		moe := float64(e.ActiveExperts)*(3*float64(e.Intermediate)/t+h) + 3*h
		moe += float64(e.SharedExperts) * 3 * float64(e.Intermediate) / t
		moe += 3 * float64(e.SharedIntermediate) / t
		per = max(per, moe)
	}
	return int64(float64(tokens) * per * ab)
}

// vllmSamplerBytes is the dummy sampler run's peak in vLLM V1: fp32 logits
// for min(max_num_seqs, max_num_batched_tokens) requests over the full
// vocabulary (logits are gathered across TP ranks), plus the sorted copy and
// its int64 indices that top-p sorting creates: 4 + 4 + 8 = 16 bytes per
// logit (vllm-project/vllm vllm/v1/sample/sampler.py "Convert logits to
// float32"; vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p
// "logits.sort(dim=-1)").
func vllmSamplerBytes(m *Model, reqs int) int64 {
	return int64(reqs) * int64(m.Vocab) * 16
}
