package tuner

import "math"

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
//   - The loss takes lossBytesPerLogit × s·b·v/t bytes (Korthikanti §4.3
//     counts 4, one fp32 copy; transformers' default loss path holds three
//     fp32 copies at the start of backward); for vocabularies of 128k+ at
//     small h this term dominates (memory-model.md §3.1). Encoder-only models
//     are assumed to train a small classification head: no vocabulary logits.
//   - Eager attention stores eagerScoreBytes per score (fp32 softmax output
//     plus its 16-bit copy).
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

// eagerScoreBytes is what eager attention stores per attention score (per
// head, query and key position) for backward. The softmax runs in fp32 under
// 16-bit compute: transformers' eager_attention_forward calls
// "nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)"
// (models/llama/modeling_llama.py), and autocast runs softmax in fp32 for
// models that do not ask (torch.amp autocast op reference, "CUDA Ops that can
// autocast to float32": softmax). Softmax saves its fp32 output (4 bytes);
// the matmul with V saves the 16-bit copy (ab). With attention dropout the
// dropout runs on the fp32 probabilities: a 1-byte mask and a 4-byte output
// (Korthikanti's as²b + 2as²b at 4 bytes). Under fp32 compute there is no
// copy. bench/gpu measured 6.0 bytes per score (Qwen2.5-0.5B, bf16, no
// dropout): 4 + 2.
func eagerScoreBytes(m *Model, ab float64) float64 {
	b := 4.0
	if m.Dropout {
		b += 1 + 4
	}
	if ab < 4 {
		b += ab
	}
	return b
}

// lossBytesPerLogit is the bytes per logit (token × vocabulary entry) live
// at the loss's peak, which is the start of backward:
//   - hf-default: transformers' ForCausalLMLoss ("logits = logits.float()",
//     then nn.functional.cross_entropy; src/transformers/loss/loss_utils.py
//     since v4.46) — cross_entropy is log_softmax + nll_loss, log_softmax
//     saves its fp32 output (4), and backward first materialises nll_loss's
//     fp32 gradient (4) and then log_softmax's fp32 input gradient (4)
//     while both are alive: 12 bytes. The 16-bit logits and the fp32 upcast
//     (2 + 4 + 4 = 10 in forward) are freed by then when the caller keeps only
//     the loss, as Trainer.compute_loss does. bench/gpu measured 12.6-13.2
//     bytes per logit on the micro-batch slope, which also holds the growth
//     of the other activations. Before v4.46 the models upcast the logits in
//     forward and shifted a contiguous copy, which holds more; not modelled.
//   - chunked: torchtune's CEWithChunkedOutputLoss and LitGPT's
//     chunked_cross_entropy keep the 16-bit logits for backward and upcast
//     one chunk at a time: ab bytes (one chunk's fp32 copy is left out).
//   - fused: fused linear cross-entropy (Liger) never holds the full logits.
func lossBytesPerLogit(l LossImpl, ab float64) float64 {
	switch l {
	case ChunkedLoss:
		return ab
	case FusedLoss:
		return 0
	}
	return 12
}

// trainLayerActivation is the per-token storage of one transformer layer.
func trainLayerActivation(m *Model, r resolved, moe bool) layerActivation {
	ab := actElemBytes(r.Precision)
	t := float64(r.TensorParallel)
	h := float64(m.Hidden)
	H := float64(m.Heads)

	rb := residualBytes(r, ab)
	normElem := rb // torch LayerNorm keeps its input
	if m.Norm == "rmsnorm" {
		normElem = 4 + rb // fp32 upcast copy + normalized output
	}
	// Replicated across TP ranks: norm inputs, the inputs of the QKV and MLP
	// projections, dropout masks. Each projection input is a norm's
	// output: with one norm a layer (Falcon-7B's parallel attention, whose
	// attention and MLP both read input_layernorm's output) the two
	// projections share one saved input.
	rep := float64(m.NormsPerLayer)*normElem*h + float64(min(m.NormsPerLayer, 2))*ab*h
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
		s2 = eagerScoreBytes(m, ab) * H / t
	} else {
		attn += 4 * H / t // fp32 log-sum-exp
	}
	mlp := mlpActivation(m, r, moe, ab, t)
	return layerActivation{perToken: rep + attn + mlp + adapterInputCopies(m, r, moe, ab, t), perTokenSeq: s2}
}

// adapterInputCopies is what LoRA adapters add per token and layer when
// they are kept in fp32 beside a 16-bit base: PEFT's lora.Linear.forward
// casts the layer input to the adapter's dtype ("x = self._cast_input_dtype(x,
// lora_A.weight.dtype)", earlier "x = x.to(lora_A.weight.dtype)";
// peft/tuners/lora/layer.py), and lora_A's matmul saves that copy (cast back
// to 16 bits under autocast) for its weight gradient, one per adapted module.
// bench/gpu measured 2.05 bytes per input element per adapted module
// (Qwen2.5-1.5B, all-linear minus q,v at micro batch 8). Pure-bf16 and fp32
// adapters share the base's dtype: no copy.
func adapterInputCopies(m *Model, r resolved, moe bool, ab, t float64) float64 {
	if (r.Kind != LoRA && r.Kind != QLoRA) || r.Precision == PureBF16 || r.Precision == FP32 {
		return 0
	}
	h, hd := float64(m.Hidden), float64(m.HeadDim)
	inter, experts := float64(m.Intermediate), 1.0
	if moe && m.MoE != nil {
		inter = float64(m.MoE.Intermediate)
		experts = float64(m.MoE.ActiveExperts + m.MoE.SharedExperts)
	}
	var in float64
	for _, tg := range r.targets {
		switch tg {
		case "q", "k", "v":
			in += h
		case "o":
			in += float64(m.Heads) * hd / t
		case "gate", "up":
			in += experts * h
		case "down":
			in += experts * inter / t
		case "shared_gate", "shared_up", "shared_down":
			if moe && m.MoE != nil {
				e := m.MoE
				shared := float64(e.SharedExperts)
				if e.SharedIntermediate > 0 {
					shared++
				}
				if tg == "shared_down" {
					in += shared * float64(max(e.Intermediate, e.SharedIntermediate)) / t
				} else {
					in += shared * h
				}
			}
		}
	}
	return ab * in
}

// residualBytes is the element size of the residual stream (each layer's
// input, the embedding output, the norms' outputs): ab, or 4 when PEFT's
// k-bit preparation left the embeddings and norms in fp32
// (Workload.KbitFP32), which promotes the residual adds to fp32.
func residualBytes(r resolved, ab float64) float64 {
	if r.Kind == QLoRA && r.KbitFP32 {
		return 4
	}
	return ab
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
	gpu, _ := trainActivationsSplit(m, r)
	return gpu
}

// offloadStash is how many offloaded tensors stay on the GPU while their
// copies to host memory are in flight: OffloadActivations' default
// max_fwd_stash_size of 5 (pytorch/torchtune
// torchtune/training/_activation_offloading.py @ bd2a0fc; pack_tensor
// drops a stashed tensor only once five newer ones were offloaded, and
// the last five are freed only when backward's first node has run).
const offloadStash = 5

// trainActivationsSplit returns the activation bytes one GPU holds at its
// peak and the bytes it keeps in host memory under activation offloading
// (Workload.ActivationOffloading; 0 without it). torchtune's
// OffloadActivations is a saved_tensors_hooks context around the model's
// forward: every saved tensor of at least min_offload_size (1 KiB) that is
// not a parameter goes to pinned host memory and comes back in backward
// (pack_tensor / unpack_tensor). What stays on the GPU:
//   - the output projection's saved input: get_act_offloading_ctx_manager
//     wraps the output layer (lm_head) in NoOpManager, so its input stays;
//   - the loss and its logits: the recipes compute the loss outside the
//     context (recipes/lora_finetune_single_device.py "with
//     self.activations_handling_ctx: outputs = self._model(**batch)", loss
//     after). TRL and axolotl call the loss inside the model's forward, where
//     the hooks would move the fp32 copies too; counting them on the GPU
//     is the upper bound;
//   - the tensors in flight: with use_streams the last offloadStash tensors
//     of the forward stay until backward starts, and backward brings back
//     the current autograd node's tensors and frees the previous node's.
//     Under checkpointing those are layer inputs (the non-reentrant
//     checkpoint saves its inputs through the outer hooks; its recomputation
//     keeps its own tensors on the GPU, as the recompute term counts);
//     without checkpointing we bound them by one layer's saved set.
//
// The recipes refuse offloading without checkpointing (torchtune raises
// "enable_activation_offloading should only be True when
// enable_activation_checkpointing is True"); TRL's context runs without.
// Pipeline parallelism with offloading is not modelled: everything counts
// on the GPU.
func trainActivationsSplit(m *Model, r resolved) (gpu, host int64) {
	if m.EncoderDecoder() {
		// Offloading is not modelled for encoder-decoders: all on the GPU.
		return trainActivationsEncDec(m, r), 0
	}
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
		moeLayers = m.moeLayers()
		denseLayers = m.Layers - moeLayers
	}
	biggest := max(dense.bytes(tokens, s), moe.bytes(tokens, s))

	// stored returns the bytes n layers (n ≤ L, dense ones first) keep for
	// backward for one micro-batch: their inputs alone under checkpointing.
	rb := residualBytes(r, ab)
	stored := func(n int) float64 {
		if r.Checkpointing {
			return float64(n) * rb * h * tokens
		}
		nd := min(n, denseLayers)
		nm := min(n-nd, moeLayers)
		return float64(nd)*dense.bytes(tokens, s) + float64(nm)*moe.bytes(tokens, s)
	}
	// recompute is what a checkpointed layer rebuilds inside its own
	// backward (torch.utils.checkpoint: CheckpointFunction.backward and the
	// non-reentrant unpack hook rerun the layer's forward there; Megatron's
	// mpu/random.py CheckpointFunction likewise). Every layer's backward runs
	// after the loss's backward has consumed and freed the logits' buffers
	// (autograd releases a node's saved tensors once it has run, unless
	// retain_graph), so the two transients never coexist: the peak holds the
	// larger of them, not their sum.
	var recompute float64
	if r.Checkpointing {
		recompute = biggest
	}
	layers := func(n int) float64 { return stored(n) + recompute }
	embed := rb * h * tokens
	if m.Dropout {
		embed += h * tokens
	}
	normElem := rb
	if m.Norm == "rmsnorm" {
		normElem = 4 + rb
	}
	final := (normElem + rb) * h * tokens
	var logits float64
	if !m.Encoder {
		logits = lossBytesPerLogit(r.Loss, ab) * tokens * float64(m.Vocab) / t
	}
	if p == 1 && r.ActivationOffloading {
		lmIn := rb * h * tokens // the output projection's input (NoOpManager)
		inFlight := biggest     // one layer's saved set, without checkpointing
		hostSide := stored(m.Layers) + embed + final - lmIn
		if r.Checkpointing {
			inFlight = float64(min(m.Layers, offloadStash)) * rb * h * tokens
			hostSide = float64(m.Layers)*pinnedBlock(rb*h*tokens) + embed + final - lmIn
		}
		return int64(inFlight + lmIn + max(recompute, logits)), int64(hostSide)
	}
	if p == 1 {
		return int64(stored(m.Layers) + embed + final + max(recompute, logits)), 0
	}
	// 1F1B: the first stage keeps p micro-batches of L/p layers.
	first := float64(p)*layers((m.Layers+p-1)/p) + embed
	if r.Checkpointing {
		first = float64(m.Layers)*rb*h*tokens + biggest + embed
	}
	last := stored((m.Layers+p-1)/p) + final + max(recompute, logits)
	return int64(max(first, last)), 0
}

// pinnedBlock is the host memory one pinned tensor of n bytes takes: torch's
// caching host allocator rounds every pin_memory allocation up to a power
// of two ("size_t roundSize = c10::llvm::PowerOf2Ceil(size)",
// pytorch/pytorch aten/src/ATen/core/CachingHostAllocator.h) and keeps the
// freed blocks cached for the next step. Only the checkpointed layer inputs,
// whose size is known exactly, are rounded; without checkpointing the host
// figure sums the layers' saved bytes unrounded, a lower bound.
func pinnedBlock(n float64) float64 {
	if n <= 1 {
		return n
	}
	return math.Exp2(math.Ceil(math.Log2(n)))
}

// trainActivationsEncDec is trainActivations for a T5-style
// encoder-decoder (transformers models/t5/modeling_t5.py): the encoder's
// blocks run over SeqLen source tokens and the decoder's over TargetLen
// target tokens, each block stored as trainLayerActivation counts it; every
// decoder block adds a cross-attention layer (T5LayerCrossAttention: norm,
// q from the decoder stream, k and v projected from the encoder output,
// scores of target × source positions, the output projection and its
// dropout). The encoder output that all cross-attention layers project is
// stored once. Logits and loss cover the target tokens only. T5Attention
// computes its scores itself (eager, with the position bias added), so
// Attention should be eager for these models. The position-bias tensor
// (heads × s² per stack, batch-independent) is left out.
func trainActivationsEncDec(m *Model, r resolved) int64 {
	ab := actElemBytes(r.Precision)
	rb := residualBytes(r, ab)
	t := float64(r.TensorParallel)
	h, H, hd := float64(m.Hidden), float64(m.Heads), float64(m.HeadDim)
	src, tgt := float64(r.SeqLen), float64(r.TargetLen)
	b := float64(r.MicroBatch)
	srcTok, tgtTok := b*src, b*tgt
	layer := trainLayerActivation(m, r, false)

	normElem := rb
	if m.Norm == "rmsnorm" {
		normElem = 4 + rb
	}
	kv := float64(max(1, m.KVHeads/r.TensorParallel))
	// Per target token: norm input, q input, Q and attention output, the
	// output projection's input is the attention output (counted), masks.
	crossTgt := normElem*h + ab*h + ab*2*H*hd/t
	if m.Dropout {
		crossTgt += h
	}
	var crossScores float64 // per target token and source position
	if r.Attention == EagerAttention {
		crossScores = eagerScoreBytes(m, ab) * H / t
	} else {
		crossTgt += 4 * H / t
	}
	crossSrc := ab * 2 * kv * hd // K and V per source token
	cross := tgtTok*(crossTgt+crossScores*src) + srcTok*crossSrc

	enc := layer.bytes(srcTok, src)
	dec := layer.bytes(tgtTok, tgt) + cross
	var stacks float64
	if r.Checkpointing {
		stacks = float64(m.Layers)*rb*h*srcTok + float64(m.DecoderLayers)*rb*h*tgtTok + max(enc, dec)
	} else {
		stacks = float64(m.Layers)*enc + float64(m.DecoderLayers)*dec
	}
	encOut := rb * h * srcTok // the encoder output the cross-attention layers read
	embed := rb * h * (srcTok + tgtTok)
	if m.Dropout {
		embed += h * (srcTok + tgtTok)
	}
	final := (normElem + rb) * h * (srcTok + tgtTok)
	logits := lossBytesPerLogit(r.Loss, ab) * tgtTok * float64(m.Vocab) / t
	return int64(stacks + encOut + embed + final + logits)
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

// sortSamplerBytesPerLogit is the peak per logit of the dummy sampler run
// in releases whose PyTorch top-k/top-p path sorts the vocabulary
// (vllmRelease.sortsInSamplerProfile), while logits.sort runs:
//
//	2  the 16-bit logits _dummy_sampler_run still holds
//	4  their fp32 copy (vllm/v1/sample/sampler.py "logits.to(torch.float32)")
//	4  the sorted values and
//	8  their int64 indices (topk_topp_sampler.py apply_top_k_top_p,
//	   "logits_sort, logits_idx = logits.sort(dim=-1, descending=False)")
//	8  the int64 index input PyTorch's segmented sort fills
//	   (pytorch/pytorch aten/src/ATen/native/cuda/SortStable.cu
//	   segmented_sort_pairs, "reverse_indices ... numel * sizeof(int64_t)",
//	   taken for 128 or more rows of under 1,000,000 entries)
//	12 CUB's third key and value buffers for a sort that may not overwrite
//	   its input (NVIDIA/cccl cub dispatch_segmented_radix_sort.cuh,
//	   "bytes needed for 3rd keys buffer" / "3rd values buffer")
//
// 38 bytes: for gpt-oss-120b on one H100 (1024 requests × 201088 entries)
// 7.29 GiB, which with the 0.25 GiB of non-torch memory leaves the 1.71 and
// −2.14 GiB of KV cache the logs of vllm-project/vllm#27508 and #23278
// report (1.72 and −2.23 GiB by this count). The later top-p mask, its
// softmax and the scatter back (28 bytes at most) stay below it. Fewer
// than 128 rows take another sort path whose temporaries are not counted.
const sortSamplerBytesPerLogit = 38

// vllmSortSamplerBytes is the dummy sampler run's peak in a release that
// sorts in it.
func vllmSortSamplerBytes(m *Model, reqs int) int64 {
	return int64(reqs) * int64(m.Vocab) * sortSamplerBytesPerLogit
}
