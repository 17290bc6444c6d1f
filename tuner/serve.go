package tuner

import (
	"fmt"
	"strings"
)

// servingWeightFormat picks the weight format for inference and serving:
// the explicit WeightQuant, else the checkpoint's quantization_config, else
// its dtype (vLLM serves fp32 checkpoints in 16 bits, precision.md §3.4;
// plain inference keeps fp32 when Precision is FP32).
func servingWeightFormat(m *Model, r resolved) (weightFormat, error) {
	if r.WeightQuant != "" {
		return lookupWeightFormat(r.WeightQuant)
	}
	if f, ok := checkpointFormat(m.Quant); ok {
		return f, nil
	}
	if r.Kind == Inference && r.Precision == FP32 {
		return weightFormats["fp32"], nil
	}
	return weightFormats["bf16"], nil
}

// estimateInference covers plain forward passes with a KV cache for
// MicroBatch sequences of SeqLen tokens (e.g. Hugging Face generate).
func estimateInference(e *Estimate, m *Model, t Target, r resolved) error {
	f, err := servingWeightFormat(m, r)
	if err != nil {
		return err
	}
	shard := int64(r.modelShard)
	weights := weightBytes(m, f) / shard
	kvB := 2.0
	if r.KVCacheDtype != "" {
		if kvB, err = kvCacheBytes(r.KVCacheDtype); err != nil {
			return err
		}
	}
	tokens := int64(r.MicroBatch) * int64(r.SeqLen)
	kv := m.KVBytesPerToken(r.TensorParallel, kvB) * tokens / int64(r.PipelineParallel)
	ab := actElemBytes(r.Precision)
	act := inferenceForward(m, tokens, r.TensorParallel, ab)
	if !m.Encoder {
		// Logits in the compute dtype, plus fp32 logits of the last position
		// per sequence for sampling. generate() asks for the last position
		// only at prefill (logits_to_keep=1, see LastLogits); a plain forward
		// returns logits for every prompt position.
		positions := int64(r.MicroBatch)
		if r.PrefillLogits == AllLogits {
			positions = tokens
		}
		act += int64(float64(positions*int64(m.Vocab))*ab)/int64(r.TensorParallel) + int64(r.MicroBatch)*int64(m.Vocab)*4
	}
	e.PerGPU = Breakdown{Weights: weights, Activations: act, KVCache: kv}
	e.addOverhead("CUDA context", contextBytes(r))
	e.addOverhead("allocator reserve (5% of activations)", act*allocatorPercent/100)
	if r.TensorParallel > 1 {
		e.addOverhead("NCCL / tensor-parallel buffers", tpCommBytes)
	} else if r.world > 1 {
		e.addOverhead("NCCL buffers", ncclBytes)
	}
	if f.name == "nf4" || f.name == "nf4-dq" {
		e.addOverhead("4-bit dequantization buffer", 2*m.LargestLinearParams()/int64(r.TensorParallel))
	}
	return nil
}

// vllmBatchDefaults returns vLLM's OpenAI-server defaults for
// max_num_batched_tokens and max_num_seqs (vllm.md §3,
// EngineArgs.get_batch_defaults): 8192 / 1024 when the device has at least
// 70 GiB and its name does not contain "a100", else 2048 / 256.
func vllmBatchDefaults(t Target) (mnbt, mns int) {
	name := strings.ToLower(t.Name)
	if t.GPU != nil {
		name = strings.ToLower(t.GPU.DisplayName + " " + t.GPU.Name)
	}
	if t.Capacity >= 70*GiB && !strings.Contains(name, "a100") {
		return 8192, 1024
	}
	return 2048, 256
}

// estimateServe sizes vLLM's KV cache the way V1 does (memory-model.md §5.2,
// §5.6; vllm/v1/worker/gpu_worker.py determine_available_memory):
//
//	budget   = gpu_memory_utilization × total memory
//	kv bytes = budget − weights − profiled activation peak − non-torch memory
//	blocks   = floor(kv bytes / (block_size × KV bytes per token))
//
// The start-up check fails (fits = false) when no block is left or one
// max_model_len request does not fit (§5.3). The CUDA context and CUDA graphs
// live outside the budget; GraphHeadroom reports whether they fit. From
// v0.21 (a stated VLLMVersion) the graphs come out of the budget instead.
func estimateServe(e *Estimate, m *Model, t Target, r resolved) error {
	f, err := servingWeightFormat(m, r)
	if err != nil {
		return err
	}
	kvB, err := kvCacheBytes(r.KVCacheDtype)
	if err != nil {
		return err
	}
	if autoKV(r.KVCacheDtype) && f.name == "fp32" {
		kvB = 4 // --dtype float32: the KV cache follows the model dtype
	}
	mnbt, mns := vllmBatchDefaults(t)
	if r.MaxNumBatchedTokens > 0 {
		mnbt = r.MaxNumBatchedTokens
	}
	if r.MaxNumSeqs > 0 {
		mns = r.MaxNumSeqs
	} else {
		mns = min(mns, mnbt) // a defaulted max_num_seqs is capped at max_num_batched_tokens
	}
	if mnbt < mns {
		return fmt.Errorf("max_num_batched_tokens (%d) must be greater than or equal to max_num_seqs (%d)", mnbt, mns)
	}
	// Weights split evenly over TP × PP ranks (memory-model.md §5.6): vLLM
	// shards the embedding and lm_head by vocabulary and the layers by TP and
	// PP; the replicated norms are a few MB, and uneven PP splits of layers
	// are ignored.
	shard := int64(r.modelShard)
	weights := weightBytes(m, f)/shard + marlinMXFP4Padding(m, f, t, r.TensorParallel) + vllmRopeCacheBytes(m, f)
	// The profile run's peak is the larger of the forward pass over
	// max_num_batched_tokens and the dummy sampler run; V1 frees the forward
	// intermediates before sampling.
	sampler := vllmSamplerBytes(m, min(mns, mnbt))
	if r.release.sortsInSamplerProfile(r.VLLMFlashInferSampler) {
		sampler = vllmSortSamplerBytes(m, min(mns, mnbt))
	}
	act := max(inferenceForward(m, int64(mnbt), r.TensorParallel, 2), sampler)
	nonTorch := vllmNonTorchBytes
	if r.TensorParallel > 1 {
		nonTorch = tpCommBytes
	}
	budget := int64(r.GPUMemoryUtilization * float64(t.Capacity))
	// vLLM groups the layers by attention kind (vllmKVLayout): a pool block
	// holds one page for each of groupSize layers, every group draws from
	// the pool, and the reported token count is blocks per group × block
	// size. A model with full attention only is one group of all its layers
	// (per pipeline stage), so this is the familiar per-token cost × layers.
	// That is the count vLLM printed through v0.19 (vllm-project/vllm#40691
	// reports it on 0.19.0); later releases print max concurrency ×
	// max_model_len instead (quoted in vllm#51041), which for a hybrid model
	// is a different number: KVCacheTokens stays the pool's count, and
	// MaxConcurrency carries the other.
	disableHybrid := r.DisableHybridKVCache
	if r.release.chunkedHybridOff() && m.Local != nil && m.Local.Kind == ChunkedAttention {
		disableHybrid = true
	}
	layout := vllmKVLayout(m, r.PipelineParallel, disableHybrid)
	perLayer := m.kvBytesPerLayerToken(r.TensorParallel, kvB)
	perToken := perLayer * int64(layout.groupSize*len(layout.groups))
	kvBytes := budget - weights - act - nonTorch
	s := &ServeEstimate{
		KVBytesPerToken: perToken, Budget: budget,
		GPUMemoryUtilization: r.GPUMemoryUtilization, MaxModelLen: r.MaxModelLen,
		MaxNumSeqs: mns, MaxNumBatchedTokens: mnbt, BlockSize: r.BlockSize,
	}
	e.Serve = s
	s.Graphs = vllmCUDAGraphs(m, mns, mnbt, r.TensorParallel, r.PipelineParallel)
	if r.release.legacyCaptureRule() {
		s.Graphs.Bytes = s.Graphs.Before11.Bytes
	}
	graphs := s.Graphs.Bytes
	if r.EnforceEager {
		graphs = 0
		s.Graphs = CUDAGraphs{}
	}
	ctx := contextBytes(r)
	s.GraphHeadroom = t.Capacity - budget - ctx - graphs
	if r.release.graphsInBudget() {
		// The profiler captured the graphs before sizing the KV cache:
		// they come out of the budget, and only the CUDA context is left
		// outside it.
		s.GraphsInBudget = true
		kvBytes -= graphs
		s.GraphHeadroom = t.Capacity - budget - ctx
	}
	e.Fits = true
	blockBytes := int64(r.BlockSize) * perLayer * int64(layout.groupSize)
	blocksPerReq := layout.requestBlocks(r.MaxModelLen, mnbt, r.BlockSize)
	s.RequestBlocks = blocksPerReq
	s.OneRequestKVBytes = blocksPerReq * blockBytes
	if kvBytes <= 0 || blockBytes <= 0 {
		e.Fits = false
		kvBytes = max(kvBytes, 0)
		what := "weights, activations and non-torch memory"
		if s.GraphsInBudget {
			what = "weights, activations, non-torch memory and CUDA graphs"
		}
		e.Notes = append(e.Notes, "No available memory for the cache blocks: "+what+" exceed gpu_memory_utilization × capacity; raise gpu_memory_utilization, quantize, or add tensor parallelism")
	} else {
		s.NumBlocks = kvBytes / blockBytes
		s.KVCacheTokens = s.NumBlocks / int64(len(layout.groups)) * int64(r.BlockSize)
		s.MaxConcurrency = float64(s.NumBlocks) / float64(blocksPerReq)
		if s.NumBlocks < blocksPerReq {
			e.Fits = false
			e.Notes = append(e.Notes, fmt.Sprintf("one request of max_model_len %d needs %d KV blocks but only %d fit (%d tokens); vLLM refuses to start: lower max_model_len or raise gpu_memory_utilization",
				r.MaxModelLen, blocksPerReq, s.NumBlocks, s.KVCacheTokens))
		}
	}
	s.KVCacheBytes = kvBytes
	allocated := s.NumBlocks * blockBytes // vLLM allocates whole blocks
	if s.GraphHeadroom < 0 && !r.EnforceEager {
		e.Notes = append(e.Notes, fmt.Sprintf("CUDA graphs (~%s) and the CUDA context do not fit in the %s left outside gpu_memory_utilization; lower it or set enforce_eager",
			formatGiB(graphs), formatGiB(t.Capacity-budget)))
	}
	e.Notes = append(e.Notes, releaseNotes(r.release, r.VLLMFlashInferSampler, s.GraphsInBudget, sampler, min(mns, mnbt))...)
	e.Notes = append(e.Notes, kvLayoutNotes(m, layout, r.MaxModelLen, mnbt, r.BlockSize, disableHybrid)...)
	e.PerGPU = Breakdown{Weights: weights, Activations: act, KVCache: allocated}
	e.addOverhead("vLLM non-torch memory", nonTorch)
	e.addOverhead("CUDA context", ctx)
	e.addOverhead("CUDA graphs", graphs)
	return nil
}

// kvLayoutNotes says how the KV cache was laid out when that departs from
// full attention on every layer, and names the inputs it rests on.
func kvLayoutNotes(m *Model, l kvLayout, maxLen, mnbt, bs int, disabled bool) []string {
	a := m.Local
	switch {
	case a != nil && disabled && !l.hybrid():
		return []string{fmt.Sprintf("%s, but the hybrid KV cache manager is disabled: every layer holds full-length KV blocks", a.describe(m.Layers))}
	case a == nil && m.SlidingWindow > 0:
		return []string{fmt.Sprintf("sliding_window %d is set, but which layers use it is known only for gemma2, gemma3, gpt_oss and layer_types configs: every layer is sized as full attention, an upper bound on the KV cache", m.SlidingWindow)}
	case a == nil:
		return nil
	}
	out := []string{fmt.Sprintf("%s; %s. One %d-token request takes %d blocks of the pool",
		a.describe(m.Layers), l.describe(), maxLen, l.requestBlocks(maxLen, mnbt, bs)) + " (from " + a.Source + ")"}
	if a.Kind == ChunkedAttention && l.hybrid() {
		out = append(out, "chunked-local layers are sized to the chunk as vLLM's hybrid KV cache manager does by default (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE, default on since vllm-project/vllm#29627); releases from #21761 (v0.10.1) until then turned the manager off for chunked attention and sized every layer as full attention, as --disable-hybrid-kv-cache-manager does")
	}
	return out
}

// marlinMXFP4Padding is the per-GPU growth of mxfp4 expert weights on a GPU
// without native FP4 (compute capability below 10.0), where vLLM runs them
// through the Marlin MoE kernel ("Your GPU does not have native support for
// FP4 computation ... Weight-only FP4 compression will be used leveraging
// the Marlin kernel"). Mxfp4MoEMethod.create_weights then pads each
// expert's hidden size to a multiple of 256 and its per-rank intermediate
// size to a multiple of 128, because the kernel needs n % 256 == 0 and
// k % 128 == 0 (vllm-project/vllm
// vllm/model_executor/layers/quantization/mxfp4.py @007d500). For gpt-oss
// (h = I = 2880) that is 3072 × 2944 instead of 2880 × 2880: 9% more.
func marlinMXFP4Padding(m *Model, f weightFormat, t Target, tp int) int64 {
	e := m.MoE
	if f.name != "mxfp4" || e == nil || t.GPU == nil || t.GPU.CC.Major == 0 || t.GPU.CC.AtLeast(10, 0) {
		return 0
	}
	tp = max(tp, 1)
	roundUp := func(v, to int64) int64 { return (v + to - 1) / to * to }
	h := int64(m.Hidden)
	i := int64(e.Intermediate) / int64(tp)
	grow := roundUp(h, 256)*roundUp(i, 128) - h*i
	mats := int64(2) // up and down
	if m.Gated() {
		mats = 3
	}
	return int64(float64(int64(m.moeLayers())*int64(e.Experts)*mats*grow) * f.linearBytes)
}

// vllmRopeCacheBytes is the rotary cos/sin table vLLM registers as a
// buffer when it builds the model: RotaryEmbedding.__init__ computes
// [max_position_embeddings, rotary_dim] (cos and sin halves) and casts it
// to the model dtype (vllm-project/vllm
// vllm/model_executor/layers/rotary_embedding/base.py @04458da;
// DeepseekScalingRotaryEmbedding covers original_max_position × factor
// rows, which DeepSeek configs give as max_position_embeddings). get_rope
// shares one instance among the layers, every tensor-parallel rank holds
// it whole, and "Model loading took" counts it with the weights: 32 MiB
// for Llama-3.1's 131072 positions × 128. Models with learned positions
// have none. Gemma 3 builds a second table: its sliding-window layers call
// get_rope with rope_local_base_freq and no scaling, its global layers
// with rope_theta and the config's rope_scaling, and get_rope caches one
// instance per distinct setting (vllm-project/vllm
// vllm/model_executor/models/gemma3.py @004dc92, Gemma3Attention). Gemma 2
// uses one setting on every layer, so one table.
func vllmRopeCacheBytes(m *Model, f weightFormat) int64 {
	if m.Positions == "learned" || m.Encoder {
		return 0
	}
	dim := int64(m.HeadDim)
	if m.MLA != nil {
		dim = int64(m.MLA.QKRopeDim)
	}
	b := int64(2)
	if f.name == "fp32" {
		b = 4
	}
	tables := int64(1)
	if (m.ModelType == "gemma3_text" || m.ModelType == "gemma3") && m.Local != nil {
		tables = 2
	}
	return tables * int64(m.MaxPositions) * dim * b
}

// formatGiB prints bytes as GiB with two decimals.
func formatGiB(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/float64(GiB)) }

// releaseNotes says which release the serving estimate followed where the
// accounting depends on it; an unstated release is named among the
// estimate's assumed inputs instead (internal/cli estimateInputs).
func releaseNotes(rel vllmRelease, flashinfer, graphsInBudget bool, sampler int64, reqs int) []string {
	var out []string
	if rel.sortsInSamplerProfile(flashinfer) {
		out = append(out, fmt.Sprintf("vLLM %s sorts the whole vocabulary in its profiled dummy sampler run over %d requests: %s of the budget", rel, reqs, formatGiB(sampler)))
	}
	if graphsInBudget {
		out = append(out, fmt.Sprintf("vLLM %s profiles the CUDA graphs before sizing the KV cache, so they come out of gpu_memory_utilization's budget", rel))
	}
	return out
}
