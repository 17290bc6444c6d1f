package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/tuner"
)

// tuneFindings asks the tuner for a plan on the subject's target and turns
// the settings it would change into one TUNE finding whose fix (applied
// only by `fix --tune`) writes them in the file's own spelling. Nothing is
// proposed without a known GPU and model, or when no plan fits.
func (l *Linter) tuneFindings(s *subject) []finding.Finding {
	t := s.tgt
	// A TGI server is sized with vLLM's option names; a plan would write
	// them into the launcher's, which it does not read.
	if s.kind == kindTGI || s.kind == kindKAITO || s.kind == kindNIM || t.GPU == nil || t.Model == nil || t.MIG != nil {
		return nil
	}
	if c := t.Comment; c != nil && (c.gpu || c.gpus) {
		// No plan for hardware only a comment states: a plan is a fix.
		return nil
	}
	cur, ok := t.tunerWorkload(s.work)
	if !ok {
		return nil
	}
	// The same headroom the memory rules use, so a rule's fix and the
	// plan agree on what fits.
	req := tuner.PlanRequest{Model: t.Model, GPU: t.GPU, GPUs: max(t.GPUs, 1), Nodes: t.Nodes, Current: cur, Headroom: t.headroom()}
	// Only an accumulation the file states fixes the global batch the plan
	// keeps; a default (1) leaves the global batch free to grow with the
	// micro batch, which the plan's reason says.
	if n, ok := recipe.StatedAccumulation(s.work); ok {
		req.GradientAccumulation = n
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
	var parts, elsewhere []string
	var first []any
	for _, c := range plan.Choices {
		if !c.Changed() {
			continue
		}
		cops, ok := tuneOps(s, c, plan.Choices)
		if !ok {
			// The plan rests on a setting this file cannot hold (activation
			// checkpointing lives in the training script): applying the
			// rest alone could overcommit, so no fix is offered.
			if c.Setting != tuner.SettingMaxNumSeqs {
				elsewhere = append(elsewhere, fmt.Sprintf("%s %s → %s (%s)", c.Setting, c.From, c.To, c.Reason))
			}
			continue
		}
		if first == nil && len(cops) > 0 {
			first = cops[0].Path
		}
		ops = append(ops, cops...)
		parts = append(parts, fmt.Sprintf("%s %s → %s (%s)", c.Setting, c.From, c.To, c.Reason))
	}
	// A larger micro batch that only a different global batch would allow
	// is advice: named, never written (the run's optimisation is the
	// user's to change).
	var held []string
	for _, c := range plan.Held {
		cops, ok := tuneOps(s, c, plan.Choices)
		if !ok || len(cops) == 0 {
			continue
		}
		if first == nil {
			first = cops[0].Path
		}
		held = append(held, fmt.Sprintf("%s %s → %s (%s)", c.Setting, c.From, c.To, c.Reason))
	}
	if len(ops) == 0 && len(held) == 0 {
		return nil
	}
	r, _ := l.deps.Catalog.Lookup("tuned-settings")
	sections := parts
	if len(elsewhere) > 0 {
		sections = append(sections, "set outside this file: "+strings.Join(elsewhere, "; ")+" (no fix: the other settings do not fit without it)")
	}
	if len(held) > 0 {
		// Held only where the file states its accumulation
		// (recipe.StatedAccumulation), so the key is written there.
		sections = append(sections, "not proposed, as it changes the global batch: "+strings.Join(held, "; ")+" (change gradient_accumulation_steps with it to choose a new global batch)")
	}
	msg := fmt.Sprintf("for %d× %s: %s", req.GPUs, t.GPU.Name, strings.Join(sections, "; "))
	f := l.stamp(r, finding.Finding{
		Message: msg,
		Range:   s.locate(first),
		Path:    s.docPath(first),
	}, "")
	attachEvidence(&f, r, nil, s.inputs())
	f.Memory = memoryFor(r, s.memory)
	if edits, err := s.edits(ops); len(ops) > 0 && err == nil && len(edits) > 0 && len(elsewhere) == 0 {
		f.Fixes = []finding.Fix{{Message: "apply the tuned settings", Edits: edits, Tune: true}}
	}
	withholdFix(&f, r, s.inputs())
	return []finding.Finding{f}
}

// tuneOps maps a plan choice to the patch that writes it in the subject's
// own format; ok is false for settings the format cannot express (or that
// an "auto" value leaves to the launcher).
func tuneOps(s *subject, c tuner.Choice, all []tuner.Choice) ([]check.Op, bool) {
	kind, _ := s.work.Get("kind")
	if c.Setting == tuner.SettingPrecision {
		switch kind {
		case "deepspeed":
			// Switching fp16 to bf16 writes both blocks: DeepSpeed
			// refuses both enabled.
			block := map[string]string{"bf16": "bf16", "fp16": "fp16"}[c.To]
			if block == "" {
				return nil, false
			}
			ops := []check.Op{{Op: "set", Path: []any{block, "enabled"}, Value: true}}
			if other := map[string]string{"bf16": "fp16", "fp16": "bf16"}[c.To]; c.From == other {
				ops = append(ops, check.Op{Op: "set", Path: []any{other, "enabled"}, Value: false})
			}
			return ops, true
		case "finetune":
			sets, ok := recipe.PrecisionSets(s.work, s.value, c)
			ops := make([]check.Op, 0, len(sets))
			for _, x := range sets {
				ops = append(ops, check.Op{Op: "set", Path: x.Path, Value: x.Value})
			}
			return ops, ok
		case "vllm":
			dt := map[string]string{"bf16": "bfloat16", "fp16": "half"}[c.To]
			if dt == "" {
				return nil, false
			}
			return []check.Op{{Op: "set", Path: []any{"dtype"}, Value: dt}}, true
		}
	}
	if kind == "finetune" && (c.Setting == tuner.SettingFSDPSharding || c.Setting == tuner.SettingFSDPOffload) {
		sets, ok := recipe.FSDPSets(s.work, s.value, c, all)
		ops := make([]check.Op, 0, len(sets))
		for _, x := range sets {
			ops = append(ops, check.Op{Op: "set", Path: x.Path, Value: x.Value})
		}
		return ops, ok
	}
	if kind == "finetune" && c.Setting == tuner.SettingGradAccumulation && recipe.AxolotlBatchSize(s.work, s.value) > 0 {
		// axolotl refuses gradient_accumulation_steps beside batch_size:
		// the recipe cannot hold another accumulation.
		return nil, false
	}
	path, value, ok := tunePatch(s, c)
	if !ok {
		return nil, false
	}
	return []check.Op{{Op: "set", Path: path, Value: value}}, true
}

// tunePatch maps a plan choice to one path and value in the subject's own
// format.
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
	case "finetune":
		return recipe.TunePatch(s.work, c)
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
		}
	case "accelerate":
		if v, _ := s.work.Get("deepspeed_config_file"); v != nil {
			return nil, nil, false // the DeepSpeed file holds these
		}
		switch c.Setting {
		case tuner.SettingFSDPSharding, tuner.SettingFSDPOffload, tuner.SettingCheckpointing:
			return normalize.AccelerateFSDPPatch(s.work, c)
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

// attachPlanFix gives vram-overcommit findings the tuner's plan as their
// fix: a config that cannot run as written gets the smallest change of
// settings that fits, applied by plain `fix` (the TUNE finding keeps the
// same edits for `fix --tune`).
func attachPlanFix(found, tuned []finding.Finding) {
	if len(tuned) == 0 || len(tuned[0].Fixes) == 0 {
		return
	}
	plan := tuned[0].Fixes[0]
	for i := range found {
		if found[i].Slug != "vram-overcommit" || len(found[i].Fixes) > 0 {
			continue
		}
		if len(finding.Assumed(found[i].Evidence)) > 0 {
			// A verdict on an assumed input is advice: plain `fix` does
			// not rewrite the file on a guess (`fix --tune` still can).
			continue
		}
		found[i].Fixes = []finding.Fix{{
			Message: "apply the tuner's plan: " + strings.TrimPrefix(tuned[0].Message, "for "),
			Edits:   plan.Edits,
		}}
	}
}
