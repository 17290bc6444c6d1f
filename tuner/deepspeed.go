package tuner

import (
	"strconv"
	"strings"
)

// ZeROModelStates is the per-device model-state memory of the ZeRO paper
// (Rajbhandari et al., arXiv:1910.02054v3, Figure 1 and §5; memory-model.md §1):
// with K bytes of optimizer state per parameter (12 for mixed-precision Adam),
//
//	stage 0 (baseline DP): (2 + 2 + K)·Ψ
//	stage 1 (P_os):        2Ψ + 2Ψ + K·Ψ/N_d
//	stage 2 (P_os+g):      2Ψ + (2 + K)·Ψ/N_d
//	stage 3 (P_os+g+p):    (2 + 2 + K)·Ψ/N_d
//
// The paper's Table 1 is this function at K = 12.
func ZeROModelStates(params int64, k float64, stage, dp int) float64 {
	psi, n := float64(params), float64(max(dp, 1))
	switch stage {
	case 0:
		return (4 + k) * psi
	case 1:
		return 4*psi + k*psi/n
	case 2:
		return 2*psi + (2+k)*psi/n
	default:
		return (4 + k) * psi / n
	}
}

// DeepSpeedZero2Estimate reproduces DeepSpeed's
// estimate_zero2_model_states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py
// @ 38327e07, after PR #5099; memory-model.md §2.1), returning per-GPU and
// per-node CPU bytes:
//
//	offload:    gpu = 2P;               cpu = P · max(4·total_gpus, 16) · buffer
//	no offload: gpu = 2P + int(18P/N);  cpu = P · 4 · gpus_per_node · buffer
//
// where 18 = 2 (fp16 grads) + 4 (fp32 grads) + 4 (fp32 params) + 8 (Adam m, v)
// and buffer is additional_buffer_factor (DeepSpeed default 1.5).
func DeepSpeedZero2Estimate(params int64, gpusPerNode, nodes int, cpuOffload bool, buffer float64) (gpu, cpu int64) {
	total := int64(gpusPerNode * nodes)
	p := float64(params)
	if cpuOffload {
		return 2 * params, int64(p * float64(max(4*total, 16)) * buffer)
	}
	return 2*params + 18*params/total, int64(p * 4 * float64(gpusPerNode) * buffer)
}

// DeepSpeedZero3Estimate reproduces DeepSpeed's
// estimate_zero3_model_states_mem_needs (deepspeed/runtime/zero/stage3.py;
// memory-model.md §2.2), returning per-GPU and per-node CPU bytes. The largest
// layer's fp16 params and grads (4·L) are live on the GPU in every case.
func DeepSpeedZero3Estimate(params, largestLayer int64, gpusPerNode, nodes int,
	offloadOptimizer, offloadParam, zeroInit bool, buffer float64) (gpu, cpu int64) {
	total := int64(gpusPerNode * nodes)
	gpusFactor := 1 / float64(nodes)
	p, gpn := float64(params), float64(gpusPerNode)
	live := 4 * largestLayer
	switch {
	case offloadOptimizer && offloadParam:
		if zeroInit {
			return live, int64(p * 18 * gpusFactor * buffer)
		}
		return live, int64(p * max(4*gpn, 18*gpusFactor) * buffer)
	case offloadOptimizer:
		if zeroInit {
			return live + 2*params/total, int64(p * 16 * gpusFactor * buffer)
		}
		return live + 2*params/total, int64(p * max(4*gpn, 16*gpusFactor) * buffer)
	default:
		if zeroInit {
			return live + 18*params/total, int64(float64(largestLayer) * 4 * gpn * buffer)
		}
		return live + 18*params/total, int64(p * 4 * gpn * buffer)
	}
}

// deepSpeedBufferFactor is DeepSpeed's additional_buffer_factor default.
const deepSpeedBufferFactor = 1.5

// DeepSpeed ZeRO defaults (deepspeed/runtime/zero/config.py
// DeepSpeedZeroConfig @ edaa7221, memory-model.md §2.4): reduce_bucket_size
// 5e8 elements of 16-bit gradients for the contiguous reduce buffer;
// stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9 and
// stage3_max_reuse_distance 1e9 elements for ZeRO-3's gathered parameters
// (zeroParamCache).
const (
	zeroReduceBucketElems   = 500_000_000
	zeroPrefetchBucketElems = 50_000_000
	zeroMaxLiveParams       = 1_000_000_000
	// zeroMaxReuseDistance is stage3_max_reuse_distance's default (1e9
	// parameters): ZeRO-3 keeps a gathered parameter that the module trace
	// uses again within this many parameters.
	zeroMaxReuseDistance = 1_000_000_000
)

// zeroParamCache holds the three DeepSpeed settings that decide how many
// parameters a ZeRO-3 rank keeps gathered, in elements.
type zeroParamCache struct {
	maxLive, prefetchBucket, reuseDistance int64
}

func defaultZeROParamCache() zeroParamCache {
	return zeroParamCache{maxLive: zeroMaxLiveParams, prefetchBucket: zeroPrefetchBucketElems, reuseDistance: zeroMaxReuseDistance}
}

// ZeRO3Defaults are DeepSpeed's defaults, in elements, for
// stage3_max_live_parameters, stage3_prefetch_bucket_size and
// stage3_max_reuse_distance: what an estimate assumes for a setting the
// workload leaves nil.
func ZeRO3Defaults() (maxLive, prefetchBucket, reuseDistance int64) {
	c := defaultZeROParamCache()
	return c.maxLive, c.prefetchBucket, c.reuseDistance
}

// zeroParamCacheOf is the workload's settings, DeepSpeed's defaults where
// it states none; stated says whether any was stated.
func zeroParamCacheOf(w Workload) (c zeroParamCache, stated bool) {
	c = defaultZeROParamCache()
	for _, s := range []struct {
		v  *int64
		to *int64
	}{{w.ZeRO3MaxLiveParams, &c.maxLive}, {w.ZeRO3PrefetchBucket, &c.prefetchBucket}, {w.ZeRO3MaxReuseDistance, &c.reuseDistance}} {
		if s.v != nil && *s.v >= 0 {
			*s.to, stated = *s.v, true
		}
	}
	return c, stated
}

// extraGathered is how many parameters a ZeRO-3 rank holds gathered at
// the activation peak beyond the module in use (the largest layer, counted
// with the weights), for perRank parameters per model-parallel rank.
//
// PartitionedParamCoordinator (deepspeed/runtime/zero/
// partitioned_param_coordinator.py @ 00a31c99; the same at edaa7221 and
// v0.8.0) counts every gathered
// parameter in __n_available_params: __all_gather_params_ adds a
// parameter's ds_numel, __release_param subtracts it. Once the module
// trace is complete, fetch_sub_module prefetches after each module up to
// min(max_available_parameters_in_numel - __n_available_params,
// prefetch_bucket_sz) elements of the trace ahead, and its loop takes
// whole parameters while the sum is below that, so one parameter can carry
// it past the limit. Modules smaller than the bucket are consumed more
// slowly than they are prefetched, so the gathered set fills to
// stage3_max_live_parameters and stays there; release_sub_module keeps
// what __params_to_release spares (the reuse window, zeroReuseWindowParams),
// which counts in the same total but is not limited by it. The peak is
// therefore the larger of max_live and the reuse window, plus the module
// in use (or the one parameter that overshoots), capped by the rank's
// parameters: an upper bound, reached when the trace has modules smaller
// than the bucket. With prefetch_bucket_size 0 nothing is prefetched and
// only the reuse window stays.
func (c zeroParamCache) extraGathered(m *Model, perRank int64, tp int) int64 {
	n, _ := c.gathered(m, perRank, tp)
	return n
}

// gathered is extraGathered with what set it, for the overhead line.
func (c zeroParamCache) gathered(m *Model, perRank int64, tp int) (int64, string) {
	tpd := int64(max(tp, 1))
	held := zeroReuseWindowParams(m, c.reuseDistance) / tpd
	by := "reuse window of max_reuse_distance " + sci(c.reuseDistance)
	if c.prefetchBucket > 0 && c.maxLive >= held {
		held, by = c.maxLive, "prefetch up to max_live "+sci(c.maxLive)
	}
	if rest := perRank - m.LargestLayerParams()/tpd; held >= rest {
		return max(0, rest), "the whole model"
	}
	return held, by
}

// sci writes a DeepSpeed element count the way its configs do (1e9, 5e7).
func sci(v int64) string {
	s := strconv.FormatFloat(float64(v), 'e', -1, 64)
	return strings.NewReplacer("e+0", "e", "e+", "e").Replace(s)
}

// zeroReuseWindowParams is how many parameters of the transformer layers
// DeepSpeed ZeRO-3 keeps gathered across the turn from forward to backward.
// Once the module trace is complete, PartitionedParameterCoordinator's
// release_sub_module releases only what __params_to_release returns, and
// that drops every parameter that reappears among the next
// max_reuse_dist_in_numel parameters of the trace
// (deepspeed/runtime/zero/partitioned_param_coordinator.py @ 00a31c99).
// A layer's forward and backward uses are separated by the layers after it
// and the head (final norm and lm_head), each traversed twice, so the
// trailing layers for which 2 × (head + the layers after them) stays under
// the distance stay gathered at the start of backward, when activations
// peak. A vocabulary-sized head alone can exceed it (Llama 3's 525M
// lm_head parameters twice is over 1e9): then nothing is kept.
func zeroReuseWindowParams(m *Model, distance int64) int64 {
	h := int64(m.Hidden)
	head := m.normParams(h)
	if !m.Encoder {
		head += int64(m.Vocab) * h // lm_head, or the tied embedding traversed as it
	}
	layers := m.Params() - m.EmbeddingParams() - m.LMHeadParams() - m.normParams(h)
	if m.Layers < 1 || layers <= 0 {
		return 0
	}
	per := layers / int64(m.Layers)
	var kept int64
	for k := 0; k < m.Layers; k++ {
		if 2*(head+int64(k)*per) >= distance {
			break
		}
		kept += per
	}
	return kept
}
