package lint

import (
	"cmp"
	"fmt"
	"maps"
	"strings"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/tuner"
)

// defaultHeadroom is the share of capacity a fitting workload leaves free
// (fragmentation, NCCL, CUDA graphs): vram-overcommit's default, which a
// project sets with rules: {vram-overcommit: {params: {headroom: H}}}.
const defaultHeadroom = 0.10

// headroom is the target's headroom, the default when unset.
func (t Target) headroom() float64 {
	if t.Headroom > 0 && t.Headroom < 1 {
		return t.Headroom
	}
	return defaultHeadroom
}

// headroomParam reads vram-overcommit's headroom from rule parameters
// keyed by slug (0 when unset), brought within the tuner's bounds, and
// writes the value used back into params. The memory rule, the largest
// fitting micro batch, the ZeRO and fine-tuning alternatives and the
// tuner's plan all use that one value, so a rule's message, its fix and
// the plan agree on what fits.
func headroomParam(params map[string]any) float64 {
	ps, _ := params["vram-overcommit"].(map[string]any)
	var h float64
	switch v := ps["headroom"].(type) {
	case float64:
		h = v
	case int64:
		h = float64(v)
	case int:
		h = float64(v)
	default:
		return 0
	}
	h = min(max(h, tuner.MinPlanHeadroom), tuner.MaxPlanHeadroom)
	cp := maps.Clone(ps)
	cp["headroom"] = h
	params["vram-overcommit"] = cp
	return h
}

// tunerTarget is the capacity a subject is checked against: the MIG slice
// when there is one, else the whole GPU.
func (t Target) tunerTarget() (tuner.Target, bool) {
	if t.GPU == nil {
		return tuner.Target{}, false
	}
	if t.MIG != nil {
		return t.GPU.MIGTarget(t.MIG), true
	}
	return t.GPU.Target(), true
}

// tunerWorkload maps the workload model to the memory model's workload.
// ok is false when the model does not say enough to estimate.
func (t Target) tunerWorkload(w *normalize.Workload) (tuner.Workload, bool) {
	get := func(f string) any { v, _ := w.Get(f); return v }
	num := func(f string) int {
		n, _ := get(f).(int64)
		return int(n)
	}
	str := func(f string) string { s, _ := get(f).(string); return s }
	if str("kind") == "finetune" {
		return recipe.Workload(w, t.GPUs)
	}
	var tw tuner.Workload
	switch str("role") {
	case "train":
		if str("device") != "" && str("device") != "gpu" {
			return tw, false
		}
		tw.Kind = tuner.Train
		switch str("precision") {
		case "fp32":
			tw.Precision = tuner.FP32
		case "fp16":
			tw.Precision = tuner.FP16
		case "fp8":
			tw.Precision = tuner.FP8
		default:
			tw.Precision = tuner.BF16
		}
		// Accelerate without DeepSpeed or FSDP runs PyTorch AMP, which keeps
		// fp32 weights and gradients (precision.md §2.2).
		if str("framework") == "accelerate" && tw.Precision != tuner.FP32 {
			switch strings.ToUpper(str("distributed_type")) {
			case "NO", "MULTI_GPU", "":
				tw.Precision = tuner.AMP
			}
		}
		tw.ZeroStage = num("zero.stage")
		tw.OffloadOptimizer = tuner.Device(cmp.Or(str("zero.offload_optimizer"), "none"))
		tw.OffloadParam = tuner.Device(cmp.Or(str("zero.offload_param"), "none"))
		tw.DataParallel = max(t.GPUs, 1)
		tw.MicroBatch = max(num("batch.micro"), 1)
		if b, ok := get("checkpointing").(bool); ok {
			tw.Checkpointing = b
		}
	case "serve":
		tw.Kind = tuner.Serve
		tw.TensorParallel = max(num("parallel.tp"), 1)
		tw.PipelineParallel = max(num("parallel.pp"), 1)
		switch str("precision") {
		case "fp16":
			tw.Precision = tuner.FP16
		case "bf16":
			tw.Precision = tuner.BF16
		case "fp32":
			tw.Precision = tuner.FP32
		}
		if f, ok := get("serve.gpu_memory_utilization").(float64); ok && f > 0 && f <= 1 {
			tw.GPUMemoryUtilization = f
		}
		tw.MaxModelLen = max(num("serve.max_model_len"), 0)
		tw.MaxNumSeqs = max(num("serve.max_num_seqs"), 0)
		tw.MaxNumBatchedTokens = max(num("serve.max_num_batched_tokens"), 0)
		if bs := num("serve.block_size"); bs > 0 {
			tw.BlockSize = bs
		}
		if kv := str("serve.kv_cache_dtype"); kv != "" {
			tw.KVCacheDtype = kv
		}
		switch q := str("serve.quantization"); q {
		case "awq", "awq_marlin":
			tw.WeightQuant = "awq"
		case "gptq", "gptq_marlin":
			tw.WeightQuant = "gptq"
		case "fp8":
			tw.WeightQuant = "fp8"
		case "bitsandbytes":
			tw.WeightQuant = "nf4"
		}
		if b, ok := get("serve.enforce_eager").(bool); ok {
			tw.EnforceEager = b
		}
	default:
		return tw, false
	}
	return tw, true
}

// estimate runs the memory model for a subject's workload on its target
// and renders it for the rules; nil when the GPU, the model or the
// workload is not known well enough.
func (t Target) estimate(w *normalize.Workload) map[string]any {
	tt, ok := t.tunerTarget()
	if !ok || t.Model == nil {
		return nil
	}
	tw, ok := t.tunerWorkload(w)
	if !ok {
		return nil
	}
	e, err := tuner.EstimateMemory(t.Model, tt, tw)
	if err != nil {
		return nil
	}
	out := map[string]any{
		"total":    e.PerGPU.Total,
		"capacity": e.Capacity,
		"fits":     e.Fits,
		"headroom": e.Headroom,
		"breakdown": map[string]any{
			"weights": e.PerGPU.Weights, "gradients": e.PerGPU.Gradients,
			"optimizer_states": e.PerGPU.OptimizerStates, "activations": e.PerGPU.Activations,
			"kv_cache": e.PerGPU.KVCache, "overhead": e.PerGPU.Overhead,
		},
		"summary": summary(e.PerGPU, e.Serve != nil),
		"target":  e.Target,
	}
	if s := e.Serve; s != nil {
		// What must fit inside gpu_memory_utilization × capacity: weights,
		// the profiling run's activations, non-torch memory and the KV
		// cache of one max-length request (vLLM refuses to start without
		// it).
		blocks := int64((s.MaxModelLen + s.BlockSize - 1) / s.BlockSize)
		oneSeq := blocks * int64(s.BlockSize) * s.KVBytesPerToken
		var nonTorch int64
		for _, o := range e.Overheads {
			if o.Name == "vLLM non-torch memory" {
				nonTorch = o.Bytes
			}
		}
		need := e.PerGPU.Weights + e.PerGPU.Activations + nonTorch + oneSeq
		out["total"], out["capacity"] = need, s.Budget
		out["summary"] = fmt.Sprintf("weights %s + activations %s + one %d-token sequence's KV cache %s, against gpu_memory_utilization %.2f × %s",
			gib(e.PerGPU.Weights), gib(e.PerGPU.Activations), s.MaxModelLen, gib(oneSeq), s.GPUMemoryUtilization, gib(e.Capacity))
		out["serve"] = map[string]any{
			"kv_bytes_per_token": s.KVBytesPerToken, "kv_cache_tokens": s.KVCacheTokens,
			"max_concurrency": s.MaxConcurrency, "budget": s.Budget, "kv_cache_bytes": s.KVCacheBytes,
			"max_model_len": int64(s.MaxModelLen), "max_num_seqs": int64(s.MaxNumSeqs),
			"graph_headroom": s.GraphHeadroom, "one_sequence_bytes": oneSeq,
			"gpu_memory_utilization": s.GPUMemoryUtilization,
			"block_size":             int64(s.BlockSize), "fixed_bytes": need - oneSeq,
		}
		return out
	}
	switch tw.Kind {
	case tuner.Train, tuner.LoRA, tuner.QLoRA:
		out["max_micro_batch"] = int64(tuner.MaxFittingMicroBatch(t.Model, tt, tw, t.headroom()))
		_, zero := w.Get("zero.stage")
		_, fsdp := w.Get("fsdp.sharding")
		if zero || fsdp {
			out["stages"] = zeroStages(t.Model, tt, tw, t.headroom())
		}
	}
	if k, _ := w.Get("kind"); k == "finetune" {
		out["alternatives"] = recipe.Alternatives(t.Model, tt, tw, t.headroom())
	}
	return out
}

// zeroStages estimates the workload at each ZeRO stage, keeping the
// offload settings the stage supports (optimizer offload from stage 1,
// parameter offload only at stage 3: deepspeed.md §4, §4.1). fits leaves
// headroom free, as max_micro_batch does.
func zeroStages(m *tuner.Model, tt tuner.Target, tw tuner.Workload, headroom float64) map[string]any {
	limit := int64(float64(tt.Capacity) * (1 - headroom))
	out := map[string]any{}
	for stage := 0; stage <= 3; stage++ {
		sw := tw
		sw.ZeroStage = stage
		if stage < 3 {
			sw.OffloadParam = tuner.Device("none")
		}
		if stage == 0 {
			sw.OffloadOptimizer = tuner.Device("none")
		}
		e, err := tuner.EstimateMemory(m, tt, sw)
		if err != nil {
			continue
		}
		out[fmt.Sprint(stage)] = map[string]any{"total": e.PerGPU.Total, "fits": e.PerGPU.Total <= limit}
	}
	return out
}

// summary names the components of a breakdown in GiB.
func summary(b tuner.Breakdown, serve bool) string {
	parts := []string{"weights " + gib(b.Weights)}
	if !serve {
		parts = append(parts, "gradients "+gib(b.Gradients), "optimizer states "+gib(b.OptimizerStates))
	}
	parts = append(parts, "activations "+gib(b.Activations))
	if serve {
		parts = append(parts, "KV cache "+gib(b.KVCache))
	}
	parts = append(parts, "overhead "+gib(b.Overhead))
	return strings.Join(parts, " + ")
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
