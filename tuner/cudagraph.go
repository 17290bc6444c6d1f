package tuner

// vLLM's CUDA-graph pool: what capture_model allocates after the KV cache
// is sized, logged as "Graph capturing finished in N secs, took X GiB"
// (free memory before minus after capture; vllm-project/vllm
// vllm/v1/worker/gpu_model_runner.py capture_model).
//
// What it scales with. V1 captures one graph per batch size in
// compilation_config.cudagraph_capture_sizes, and with torch.compile's
// piecewise mode each of those is split at every attention op into one
// graph per layer (splitting_ops: vllm::unified_attention...). So the
// pool grows with (captured graphs) × (layers on the rank), plus a part
// that does not depend on the count and shrinks with tensor parallelism
// (the largest size's buffers, sharded by TP).
//
// Measured: llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs
// @d3121e059da88662db39a926a3ead964be97359b, vLLM 0.19.0 on H100-80GB,
// default capture set (51 piecewise sizes up to 512 plus 51 FULL decode
// graphs, cudagraph_mode FULL_AND_PIECEWISE, max_num_seqs 1024): 58 runs
// over 29 models took 0.51-1.85 GiB. Llama-3.1-8B at PP 1/2/4 (32, 16, 8
// layers per rank) took 0.91/0.65/0.51 GiB: 17 MiB per layer for 102
// graphs, i.e. about 171 KiB per graph and layer; the rest, 0.39 GiB at
// TP 1, fell to 0.24 GiB at TP 2 and 0.16 GiB at TP 4 (Qwen2.5-7B and
// Llama-3.1-8B): about 80 MiB + 320 MiB / TP. Against those two terms the
// dense runs measured 0.72× (gemma-3-4b-it) to 1.19× (Llama-3.3-70B at
// TP 2) of the estimate; MoE runs up to 1.91× (DeepSeek-V2-Lite: the
// expert kernels add graph nodes per layer). Those ratios are the bounds.
const (
	graphBytesPerGraphLayer = 171 << 10 // 171 KiB
	graphFixedBytes         = 80 * MiB
	graphFixedPerTPBytes    = 320 * MiB
	// graphLowPercent, graphHighPercent and graphHighMoEPercent bound the
	// pool around the estimate (the measured/estimated range above).
	graphLowPercent     = 70
	graphHighPercent    = 125
	graphHighMoEPercent = 200
)

// CUDAGraphs is the CUDA-graph pool vLLM captures for one serving setup.
type CUDAGraphs struct {
	// Graphs is the number of captured graphs per layer (piecewise sizes
	// plus FULL decode graphs) under vLLM v0.11-v0.20's defaults; Legacy is
	// the count under v0.10 and earlier V1 defaults. Low and High take
	// the smaller and the larger, since a file rarely states its release.
	Graphs, Legacy int
	// MaxSize is the largest captured batch (v0.11+ rule).
	MaxSize int
	// Layers is the number of layers on one pipeline rank.
	Layers int
	// Bytes is the estimate at Graphs; Low and High bound every plausible
	// value over both capture rules and the measured spread.
	Bytes, Low, High int64
	// Current and Before11 bound the pool under one capture rule each,
	// for a file that states its release.
	Current, Before11 GraphRange
}

// GraphRange is the pool under one capture rule: its estimate and the
// measured spread around it.
type GraphRange struct {
	Graphs           int
	Bytes, Low, High int64
}

// captureSizes counts vLLM's default cudagraph_capture_sizes up to max:
// [1, 2, 4] + range(8, 256, 8) + range(256, max+1, 16) (vllm-project/vllm
// vllm/config/vllm.py _set_cudagraph_sizes, v0.11+).
func captureSizes(max int) int {
	n := 0
	for _, s := range []int{1, 2, 4} {
		if s <= max {
			n++
		}
	}
	for s := 8; s < 256 && s <= max; s += 8 {
		n++
	}
	for s := 256; s <= max; s += 16 {
		n++
	}
	return n
}

// vllmCUDAGraphs sizes the pool for a model served with max_num_seqs mns
// and max_num_batched_tokens mnbt.
//
// Capture rules. v0.11 and later (until the estimate moved inside the
// budget in v0.21): max_cudagraph_capture_size = min(2 × max_num_seqs,
// 512), capped at max_num_batched_tokens, and FULL_AND_PIECEWISE adds a
// FULL decode graph for each size up to max_num_seqs (vllm/config/vllm.py
// _set_cudagraph_sizes; the v0.19 logs above print both lists). V1 before
// v0.11 captured [1, 2, 4] + range(8, 513, 8) up to max_num_batched_tokens,
// piecewise only (vllm/v1/worker/gpu_model_runner.py,
// cudagraph_batch_sizes).
func vllmCUDAGraphs(m *Model, mns, mnbt, tp, pp int) CUDAGraphs {
	tp, pp = max(tp, 1), max(pp, 1)
	maxSize := min(2*mns, 512, mnbt)
	piecewise := captureSizes(maxSize)
	full := captureSizes(min(mns, maxSize))
	legacy := 0
	for _, s := range []int{1, 2, 4} {
		if s <= mnbt {
			legacy++
		}
	}
	for s := 8; s <= 512 && s <= mnbt; s += 8 {
		legacy++
	}
	layers := (m.Layers + pp - 1) / pp
	at := func(graphs int) int64 {
		return graphFixedBytes + graphFixedPerTPBytes/int64(tp) + int64(graphs)*int64(layers)*graphBytesPerGraphLayer
	}
	high := int64(graphHighPercent)
	if m.MoE != nil {
		high = graphHighMoEPercent
	}
	rng := func(graphs int) GraphRange {
		b := at(graphs)
		return GraphRange{Graphs: graphs, Bytes: b, Low: b * graphLowPercent / 100, High: b * high / 100}
	}
	g := CUDAGraphs{Graphs: piecewise + full, Legacy: legacy, MaxSize: maxSize, Layers: layers,
		Current: rng(piecewise + full), Before11: rng(legacy)}
	g.Bytes = g.Current.Bytes
	g.Low = min(g.Current.Low, g.Before11.Low)
	g.High = max(g.Current.High, g.Before11.High)
	return g
}
