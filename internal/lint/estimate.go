package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/rules"
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

// tunerWorkload maps the workload model to the memory model's workload,
// by the format that knows how: a fine-tuning recipe (recipe.Workload) or
// a DeepSpeed, Accelerate or vLLM config (normalize.Workload.Tuner). ok
// is false when the model does not say enough to estimate.
func (t Target) tunerWorkload(w *normalize.Workload) (tuner.Workload, bool) {
	var tw tuner.Workload
	var ok bool
	if k, _ := w.Get("kind"); k == "finetune" {
		tw, ok = recipe.WorkloadWithFSDP(w, t.worldSize(), t.launchedWork(), t.Stated.FSDP, t.Comment.shardingTaken())
		if recipe.FusedLoss(w, t.Model) {
			tw.Loss = tuner.FusedLoss
		}
	} else {
		tw, ok = w.Tuner(t.GPUs)
	}
	if !ok {
		return tw, false
	}
	return t.applyRelease(w, t.applyStatedInputs(w, t.applyStated(w, tw))), true
}

// estimate runs the memory model for a subject's workload on its target
// and renders it for the rules, with its per-GPU breakdown as finding
// data; nil when the GPU, the model or the workload is not known well
// enough.
func (t Target) estimate(w *normalize.Workload) (map[string]any, *finding.Memory) {
	tt, ok := t.tunerTarget()
	if !ok || t.Model == nil {
		return nil, nil
	}
	if t.Comment.setupsTaken() != nil {
		return t.estimateSetups(w)
	}
	tw, ok := t.tunerWorkload(w)
	if !ok {
		if t.candidates() != nil {
			return nil, nil // the sharding and the GPU's memory both open: no verdict
		}
		return t.estimateOpen(w, tt)
	}
	est, mem := t.estimateOne(w, tt, tw)
	if est != nil && t.candidates() != nil {
		return t.estimateGPUVariants(w, tw, est, mem)
	}
	if est != nil && t.methodOpen(w) {
		t.methodAlternatives(w, tt, est)
	}
	return est, mem
}

// estimateOne is estimate for one workload.
func (t Target) estimateOne(w *normalize.Workload, tt tuner.Target, tw tuner.Workload) (map[string]any, *finding.Memory) {
	e, err := tuner.EstimateMemory(t.Model, tt, tw)
	if err != nil {
		return nil, nil
	}
	mem := memoryOf(e)
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
	if e.PPO != nil {
		out["summary"] = ppoSummary(e)
	}
	if pg := e.PagedBytes(); pg > 0 {
		out["paged_optimizer"] = pg
	}
	if s := e.Serve; s != nil {
		// What must fit inside gpu_memory_utilization × capacity: weights,
		// the profiling run's activations, non-torch memory and the KV
		// cache of one max-length request (vLLM refuses to start without
		// it).
		// Sliding-window and chunked-local layers hold only their span of
		// it (tuner's vLLM KV layout).
		oneSeq := s.OneRequestKVBytes
		var nonTorch int64
		for _, o := range e.Overheads {
			if o.Name == "vLLM non-torch memory" {
				nonTorch = o.Bytes
			}
		}
		need := e.PerGPU.Weights + e.PerGPU.Activations + nonTorch + oneSeq
		out["total"], out["capacity"] = need, s.Budget
		budget := "gpu_memory_utilization"
		if fw, _ := w.Get("framework"); fw == "tgi" {
			budget = "cuda_memory_fraction"
		}
		out["summary"] = fmt.Sprintf("weights %s + activations %s + one %d-token sequence's KV cache %s, against %s %.2f × %s",
			gib(e.PerGPU.Weights), gib(e.PerGPU.Activations), s.MaxModelLen, gib(oneSeq), budget, s.GPUMemoryUtilization, gib(e.Capacity))
		out["serve"] = map[string]any{
			"kv_bytes_per_token": s.KVBytesPerToken, "kv_cache_tokens": s.KVCacheTokens,
			"max_concurrency": s.MaxConcurrency, "budget": s.Budget, "kv_cache_bytes": s.KVCacheBytes,
			"max_model_len": int64(s.MaxModelLen), "max_num_seqs": int64(s.MaxNumSeqs),
			"graph_headroom": s.GraphHeadroom, "one_sequence_bytes": oneSeq,
			"gpu_memory_utilization": s.GPUMemoryUtilization,
			"block_size":             int64(s.BlockSize), "fixed_bytes": need - oneSeq,
			"context_bytes": contextOf(e),
		}
		if g := s.Graphs; g.Bytes > 0 {
			out["serve"].(map[string]any)["cuda_graphs"] = map[string]any{
				"bytes": g.Bytes, "low": g.Low, "high": g.High,
				"graphs": int64(g.Graphs), "legacy_graphs": int64(g.Legacy),
				"max_size": int64(g.MaxSize), "layers": int64(g.Layers),
				"v0_11":        graphRange(g.Current),
				"before_v0_11": graphRange(g.Before11),
			}
		}
		return out, mem
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
	return out, mem
}

// graphRange renders one capture rule's CUDA-graph pool for the rules.
func graphRange(r tuner.GraphRange) map[string]any {
	return map[string]any{"graphs": int64(r.Graphs), "bytes": r.Bytes, "low": r.Low, "high": r.High}
}

// contextOf is the CUDA context the estimate counts.
func contextOf(e tuner.Estimate) int64 {
	for _, o := range e.Overheads {
		if o.Name == "CUDA context" {
			return o.Bytes
		}
	}
	return 0
}

// memoryOf is an estimate's per-GPU breakdown as finding data: the parts
// in the memory model's order, their total and the capacity they are set
// against.
func memoryOf(e tuner.Estimate) *finding.Memory {
	b := e.PerGPU
	return &finding.Memory{
		GPU: e.Target, Total: b.Total, Capacity: e.Capacity,
		Parts: []finding.Part{
			{Name: "weights", Bytes: b.Weights}, {Name: "gradients", Bytes: b.Gradients},
			{Name: "optimizer states", Bytes: b.OptimizerStates}, {Name: "activations", Bytes: b.Activations},
			{Name: "KV cache", Bytes: b.KVCache}, {Name: "overhead", Bytes: b.Overhead},
		},
	}
}

// memoryFor is the estimate a rule's finding rests on: a rule that names
// the model among its inputs reads the memory estimate.
func memoryFor(r *rules.Rule, mem *finding.Memory) *finding.Memory {
	if r == nil || mem == nil || !slices.Contains(r.Inputs, "model") {
		return nil
	}
	m := *mem
	return &m
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

// ppoSummary names a PPO run's parts: the two trained models' states,
// the two frozen models' weights, the larger phase's transient memory and
// the overhead.
func ppoSummary(e tuner.Estimate) string {
	p := e.PPO
	states := func(b tuner.Breakdown) int64 { return b.Weights + b.Gradients + b.OptimizerStates }
	phase := fmt.Sprintf("PPO step activations %s (policy, its logits and the value model at %d × %d tokens)",
		gib(e.PerGPU.Activations), p.BackwardBatch, p.Seq)
	if !p.TrainingPhasePeak {
		phase = fmt.Sprintf("generation KV cache %s + logits %s (%d × %d tokens)",
			gib(p.GenerationKV), gib(p.GenerationForward), p.ForwardBatch, p.Seq)
	}
	return fmt.Sprintf("policy %s + value model %s (trained: weights, gradients, optimizer states) + reference policy %s + reward model %s (frozen weights) + %s + overhead %s",
		gib(states(p.Policy)), gib(states(p.Value)), gib(p.Reference), gib(p.Reward), phase, gib(e.PerGPU.Overhead))
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// Sizing is a file's memory verdict: the per-GPU need the memory model
// estimated for its workload against the GPU's capacity (for a vLLM
// server, what must fit inside gpu_memory_utilization of it).
type Sizing struct {
	GPU           string `json:"gpu"`
	Model         string `json:"model"`
	Fits          bool   `json:"fits"`
	PerGPUBytes   int64  `json:"per_gpu_bytes"`
	CapacityBytes int64  `json:"capacity_bytes"`
	// AssumedModel is the catalog model the estimate assumed from Model's
	// name alone (nothing held Model itself); empty when Model was known.
	AssumedModel string `json:"assumed_model,omitempty"`
	// AssumedWeights is the weight format read from the same name with
	// the model ("fp8 (8-bit)" for "...-Instruct-FP8"), when it names one
	// (tuner.Catalog.ModelByName); empty otherwise.
	AssumedWeights string `json:"assumed_weights,omitempty"`
	// Open names the one input that decides the memory and that nothing
	// states ("sharding", "method", "gpu" for a recipe comment's GPU
	// named without its memory, "setup" for a comment that names several
	// setups) when the sizing covers its plausible
	// values: Alternatives gives the estimate under each, Fits holds only
	// when every one fits, and PerGPUBytes is the one the rules judged (the
	// assumed full fine-tune for the method, the least need for the
	// sharding). Note says it in one line (for the sharding, which has no
	// default to assume).
	Open         string              `json:"open,omitempty"`
	Alternatives []SizingAlternative `json:"alternatives,omitempty"`
	Note         string              `json:"note,omitempty"`
	// Related are the other files the verdict is read from when it is
	// another file's: the recipe a manifest's container launches, the
	// launch command, the statement that packs the recipe into the
	// ConfigMap the container reads (related_manifest.go).
	Related []SizingSource `json:"related,omitempty"`
	// NotStartable says why the server cannot start as written, when a
	// rule found so (startRule): its parallel sizes need more GPUs than
	// the container gets, or its vLLM release no longer serves the model.
	// PerGPUBytes is then the need as written had it started (for the
	// parallel sizes, each worker's on a GPU of its own), and Fits is
	// false: the file does not run on the hardware it states, whatever
	// the memory.
	NotStartable string `json:"not_startable,omitempty"`
}

// startRule reports whether a rule's finding means the server never
// starts, whatever its memory; the sizing carries its message
// (Sizing.NotStartable) rather than a second reading of the same facts.
// VLLM001 compares a vLLM or TGI server's tensor × pipeline × data
// parallel size (TGI: num-shard) with the container's GPUs; VLLM006 finds
// a model the stated vLLM release no longer serves.
func startRule(id string) bool { return id == "VLLM001" || id == "VLLM006" }

// notStartable marks a sizing whose server a rule found cannot start.
func (s *Sizing) notStartable(rule, message string) {
	if s == nil || !startRule(rule) || s.NotStartable != "" {
		return
	}
	s.Fits = false
	s.NotStartable = message
}

// SizingSource is one file a sizing is read from, and its role.
type SizingSource struct {
	Role string `json:"role"` // recipe, launch, configmap or chart
	File string `json:"file"`
	Line int    `json:"line"`
}

// sizing reads the verdict out of an estimate rendered for the rules.
func (t Target) sizing(est map[string]any) *Sizing {
	need, _ := est["total"].(int64)
	capacity, _ := est["capacity"].(int64)
	open, _ := est["open"].(map[string]any)
	if open != nil {
		capacity, _ = open["capacity"].(int64)
	}
	if t.GPU == nil || capacity <= 0 {
		return nil
	}
	s := &Sizing{GPU: t.GPU.Name, Model: t.ModelID, PerGPUBytes: need, CapacityBytes: capacity}
	if t.ModelByName {
		s.AssumedModel = t.Model.ID
		if q := t.Model.Quant; q != nil {
			s.AssumedWeights = fmt.Sprintf("%s (%d-bit)", q.Method, q.Bits)
		}
	}
	if t.MIG != nil {
		s.GPU += " " + t.MIG.Name
	}
	if s.Model == "" && t.Model != nil {
		s.Model = t.Model.ID
	}
	if _, serve := est["serve"]; serve {
		s.Fits = need <= capacity
	} else if open != nil {
		openSizing(s, open)
	} else {
		s.Fits, _ = est["fits"].(bool)
	}
	return s
}

// tighter returns the sizing with the larger share of its capacity used,
// so a file with several documents reports the one closest to not fitting;
// a server that cannot start (Sizing.NotStartable) goes first.
func tighter(a, b *Sizing) *Sizing {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case (a.NotStartable == "") != (b.NotStartable == ""):
		if b.NotStartable != "" {
			return b
		}
		return a
	case float64(b.PerGPUBytes)/float64(b.CapacityBytes) > float64(a.PerGPUBytes)/float64(a.CapacityBytes):
		return b
	}
	return a
}
