package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/tuner"
)

// tuneFindings asks the tuner for a plan on the subject's target and turns
// the settings it would change into one TUNE finding whose fix (applied
// only by `fix --tune`) writes them in the file's own spelling. Nothing is
// proposed without a known GPU and model, or when no plan fits.
func (l *Linter) tuneFindings(s *subject) []finding.Finding {
	t := s.tgt
	if t.GPU == nil || t.Model == nil || t.MIG != nil {
		return nil
	}
	cur, ok := t.tunerWorkload(s.work)
	if !ok {
		return nil
	}
	// The same headroom the memory rules use, so a rule's fix and the
	// plan agree on what fits.
	req := tuner.PlanRequest{Model: t.Model, GPU: t.GPU, GPUs: max(t.GPUs, 1), Nodes: t.Nodes, Current: cur, Headroom: estimateHeadroom}
	if v, ok := s.work.Get("batch.accumulation"); ok {
		if n, ok := v.(int64); ok {
			req.GradientAccumulation = int(n)
		}
	}
	if v, ok := s.work.Get("batch.global"); ok {
		if n, ok := v.(int64); ok {
			req.GlobalBatch = int(n)
		}
	}
	if cur.Kind == tuner.Serve && t.GPUs == 0 {
		req.GPUs = max(cur.TensorParallel*cur.PipelineParallel, 1)
	}
	plan, err := tuner.MakePlan(req)
	if err != nil || !plan.Fits {
		return nil
	}
	var ops []check.Op
	var parts []string
	var first []any
	for _, c := range plan.Choices {
		if !c.Changed() {
			continue
		}
		path, value, ok := tunePatch(s, c)
		if !ok {
			continue
		}
		if first == nil {
			first = path
		}
		ops = append(ops, check.Op{Op: "set", Path: path, Value: value})
		parts = append(parts, fmt.Sprintf("%s %s → %s (%s)", c.Setting, c.From, c.To, c.Reason))
	}
	if len(ops) == 0 {
		return nil
	}
	r, _ := l.deps.Catalog.Lookup("tuned-settings")
	f := l.stamp(r, finding.Finding{
		Message: fmt.Sprintf("for %d× %s: %s", req.GPUs, t.GPU.Name, strings.Join(parts, "; ")),
		Range:   s.locate(first),
		Path:    s.docPath(first),
	}, "")
	if edits, err := s.edits(ops); err == nil && len(edits) > 0 {
		f.Fixes = []finding.Fix{{Message: "apply the tuned settings", Edits: edits, Tune: true}}
	}
	return []finding.Finding{f}
}

// tunePatch maps a plan choice to a path and value in the subject's own
// format; ok is false for settings the format cannot express (or that an
// "auto" value leaves to the launcher).
func tunePatch(s *subject, c tuner.Choice) (path []any, value any, ok bool) {
	num := func(v string) (int64, bool) {
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	isAuto := func(field string) bool {
		v, _ := s.work.Get(field)
		return v == "auto"
	}
	kind, _ := s.work.Get("kind")
	switch kind {
	case "deepspeed":
		switch c.Setting {
		case tuner.SettingZeroStage:
			n, ok := num(c.To)
			return []any{"zero_optimization", "stage"}, n, ok
		case tuner.SettingOffloadOptimizer:
			return []any{"zero_optimization", "offload_optimizer", "device"}, c.To, true
		case tuner.SettingOffloadParam:
			return []any{"zero_optimization", "offload_param", "device"}, c.To, true
		case tuner.SettingMicroBatch:
			n, ok := num(c.To)
			return []any{"train_micro_batch_size_per_gpu"}, n, ok && !isAuto("batch.micro")
		case tuner.SettingGradAccumulation:
			n, ok := num(c.To)
			return []any{"gradient_accumulation_steps"}, n, ok && !isAuto("batch.accumulation")
		case tuner.SettingPrecision:
			switch c.To {
			case "bf16":
				return []any{"bf16", "enabled"}, true, c.From == "fp32"
			case "fp16":
				return []any{"fp16", "enabled"}, true, c.From == "fp32"
			}
		}
	case "accelerate":
		if v, _ := s.work.Get("deepspeed_config_file"); v != nil {
			return nil, nil, false // the DeepSpeed file holds these
		}
		switch c.Setting {
		case tuner.SettingZeroStage:
			n, ok := num(c.To)
			return []any{"deepspeed_config", "zero_stage"}, n, ok && s.work.Paths["zero.stage"] != nil
		case tuner.SettingOffloadOptimizer:
			return []any{"deepspeed_config", "offload_optimizer_device"}, c.To, s.work.Paths["zero.stage"] != nil
		case tuner.SettingOffloadParam:
			return []any{"deepspeed_config", "offload_param_device"}, c.To, s.work.Paths["zero.stage"] != nil
		case tuner.SettingPrecision:
			return []any{"mixed_precision"}, c.To, c.To == "bf16" || c.To == "fp16"
		}
	case "vllm":
		switch c.Setting {
		case tuner.SettingTensorParallel:
			n, ok := num(c.To)
			return []any{"tensor-parallel-size"}, n, ok
		case tuner.SettingGPUMemoryUtilization:
			f, err := strconv.ParseFloat(c.To, 64)
			return []any{"gpu-memory-utilization"}, f, err == nil
		case tuner.SettingMaxModelLen:
			n, ok := num(c.To)
			return []any{"max-model-len"}, n, ok
		case tuner.SettingMaxNumSeqs:
			// vLLM's default adapts to the GPU and preempts when the KV
			// cache runs short; only a hand-set value is re-sized.
			n, ok := num(c.To)
			return []any{"max-num-seqs"}, n, ok && s.work.Paths["serve.max_num_seqs"] != nil
		}
	}
	return nil, nil, false
}
