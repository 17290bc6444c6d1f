package lint

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/tuner"
)

// Sizing over alternatives (STYLE §1.8): when exactly one input that
// decides the memory is unstated and its plausible values are a small
// closed set, each value is estimated. A memory verdict stands only when
// every value gives the same one; otherwise the rules see no verdict but
// the alternatives (estimate.open), and vram-overcommit says at info which
// values fit and what to state. The tuner proposes nothing for such a
// subject: a plan needs the sharding it would change. The open inputs are
// the sharding (openWorkloads), the method of a DeepSpeed or Accelerate
// config (methodAlternatives) and the GPU of a recipe comment that names
// one without its memory or of a pod's nvidia.com/gpu.memory selector
// (estimateGPUVariants); two open at once give no verdict.

// alternative is one plausible value of the open input and the workload
// under it.
type alternative struct {
	label string
	tw    tuner.Workload
}

// openWorkloads is the one input a subject leaves open and its workload
// under each plausible value: today the sharding of a multi-GPU full
// fine-tune whose recipe, launcher and comment name none
// (recipe.ShardingAlternatives). ok is false when no input is open, or
// when the workload cannot be estimated for another reason.
func (t Target) openWorkloads(w *normalize.Workload) (string, []alternative, bool) {
	if k, _ := w.Get("kind"); k != "finetune" {
		return "", nil, false
	}
	alts, ok := recipe.ShardingAlternatives(w, t.worldSize(), t.launchedWork(), t.Stated.FSDP, t.Comment.shardingTaken())
	if !ok {
		return "", nil, false
	}
	fused := recipe.FusedLoss(w, t.Model)
	out := make([]alternative, 0, len(alts))
	for _, a := range alts {
		tw := a.Workload
		if fused {
			tw.Loss = tuner.FusedLoss
		}
		out = append(out, alternative{label: a.Label, tw: t.applyStated(w, tw)})
	}
	return "sharding", out, true
}

// worldSize is the GPU count a recipe is sized over: the target's, else
// its comment's (0 when neither gives one).
func (t Target) worldSize() int {
	if t.GPUs > 0 {
		return t.GPUs
	}
	return t.Comment.gpusTaken()
}

// Verdicts of one estimate, as vram-overcommit judges it.
const (
	verdictFits  = "fits"
	verdictTight = "tight" // fits, leaving less than the headroom free
	verdictOver  = "over"
)

// verdict judges a per-GPU need against a capacity with the target's
// headroom, as vram-overcommit does.
func (t Target) verdict(need, capacity int64) string {
	switch {
	case need > capacity:
		return verdictOver
	case float64(capacity-need) < t.headroom()*float64(capacity):
		return verdictTight
	}
	return verdictFits
}

// estimateOpen estimates a subject whose one open input has a few
// plausible values (openWorkloads). When every value gives the same
// verdict, the rules read the estimate of the value that needs least (an
// overcommit holds even there) and its summary names the others; when
// they differ, the rules read only estimate.open. Either way estimate.open
// carries each value's need and verdict, and a sentence for the report.
func (t Target) estimateOpen(w *normalize.Workload, tt tuner.Target) (map[string]any, *finding.Memory) {
	input, alts, ok := t.openWorkloads(w)
	if !ok {
		return nil, nil
	}
	type result struct {
		label, verdict string
		est            map[string]any
		mem            *finding.Memory
		need, capacity int64
		fits           bool
	}
	rs := make([]result, 0, len(alts))
	least := 0
	for i, a := range alts {
		est, mem := t.estimateOne(w, tt, a.tw)
		if est == nil {
			return nil, nil
		}
		need, _ := est["total"].(int64)
		capacity, _ := est["capacity"].(int64)
		fits, _ := est["fits"].(bool)
		rs = append(rs, result{label: a.label, verdict: t.verdict(need, capacity), est: est, mem: mem, need: need, capacity: capacity, fits: fits})
		if need < rs[least].need {
			least = i
		}
	}
	agree := true
	list := make([]any, 0, len(rs))
	for _, r := range rs {
		agree = agree && r.verdict == rs[0].verdict
		list = append(list, map[string]any{"value": r.label, "total": r.need, "verdict": r.verdict, "fits": r.fits})
	}
	capacity := rs[least].capacity
	gpus := fmt.Sprintf("%d× %s", t.worldSize(), t.GPU.Name)
	byVerdict := map[string][]string{}
	var all []string
	for _, r := range rs {
		s := fmt.Sprintf("%s at %s", r.label, gib(r.need))
		if !strings.HasPrefix(r.label, "unsharded") {
			s = "with " + s
		}
		byVerdict[r.verdict] = append(byVerdict[r.verdict], s)
		all = append(all, s)
	}
	open := map[string]any{"input": input, "alternatives": list, "agree": agree, "capacity": capacity}
	if agree {
		what := agreedWords(rs[0].verdict)
		open["note"] = fmt.Sprintf("the estimate %s %s (%s each) under every %s the launch may use: %s; the recipe states none",
			what, gpus, gib(capacity), input, joinOr(all))
		// Only the verdict itself holds for every value: the advice that
		// reads a fitting micro batch, the ZeRO stages or the recipe's
		// alternatives (checkpointing off, LoRA) would rest on one of them.
		out := verdictOnly(rs[least].est)
		out["summary"] = fmt.Sprintf("%s, with %s, the least of every %s the launch may use (%s; the recipe states none)",
			out["summary"], rs[least].label, input, strings.Join(all, ", "))
		out["open"] = open
		return out, rs[least].mem
	}
	parts := splitVerdicts(byVerdict, t.headroom(), "")
	open["note"] = fmt.Sprintf("on %s (%s each) the estimate %s; the recipe states no %s, so its launcher decides",
		gpus, gib(capacity), joinAnd(parts), input)
	open["settle"] = "state the sharding its launcher uses in the recipe: the DeepSpeed config it runs (deepspeed:) or its FSDP settings (fsdp:)"
	return map[string]any{"open": open}, nil
}

// methods are the training methods a script may apply to a model that its
// config does not say how it trains: PEFT's LoRA and QLoRA run under
// DeepSpeed ZeRO-1 to 3 as a full fine-tune does (huggingface/peft
// docs/source/accelerate/deepspeed.md @ 31c884e9, its compatibility table
// and "Use PEFT QLoRA and DeepSpeed with ZeRO3"), and under FSDP. Full is
// the method the rules assume (evidence.go trainingInputs); the
// alternatives only say whether the verdict holds for the other two.
var methods = []struct{ method, label string }{
	{"full", "full"}, {"lora", "LoRA"}, {"qlora", "QLoRA"},
}

// methodOpen reports whether a training subject leaves its method open:
// a DeepSpeed or Accelerate config, which never says whether its script
// trains the whole model or adapters, when the project file does not
// state it either. A fine-tuning recipe is left to its assumed method
// (full): its tool names adapters in its own keys (TRL's use_peft,
// axolotl's adapter, LLaMA-Factory's finetuning_type), so one that names
// none most likely trains the whole model, and its advice rules
// (checkpointing-unneeded, tuned-settings) plan fixes for that method.
func (t Target) methodOpen(w *normalize.Workload) bool {
	if role, _ := w.Get("role"); role != "train" {
		return false
	}
	if k, _ := w.Get("kind"); k != "deepspeed" && k != "accelerate" {
		return false
	}
	return t.Stated.Method == ""
}

// methodAlternatives estimates a training subject whose method is open
// under each method and records them in est.open (input "method"). The
// rules go on reading the full fine-tune's estimate, the assumed method:
// est.open.agree says whether every method gives its verdict (then
// vram-overcommit does not rest on the method), est.open.states_over
// whether every method's model states alone exceed the GPU, and
// est.open.note names the others' needs for the message.
func (t Target) methodAlternatives(w *normalize.Workload, tt tuner.Target, est map[string]any) {
	need, _ := est["total"].(int64)
	capacity, _ := est["capacity"].(int64)
	if _, serve := est["serve"]; serve || capacity <= 0 {
		return
	}
	first := t.verdict(need, capacity)
	agree, statesOver := true, true
	var list []any
	var others []string
	fits := map[bool][]string{}
	for _, m := range methods {
		mt := t
		mt.Stated.Method = m.method
		tw, ok := mt.tunerWorkload(w)
		if !ok {
			return
		}
		e, err := tuner.EstimateMemory(t.Model, tt, tw)
		if err != nil {
			return
		}
		b := e.PerGPU
		v := t.verdict(b.Total, e.Capacity)
		agree = agree && v == first
		statesOver = statesOver && b.Weights+b.Gradients+b.OptimizerStates > e.Capacity
		list = append(list, map[string]any{"value": m.label, "total": b.Total, "verdict": v, "fits": e.Fits})
		if m.method != "full" {
			others = append(others, fmt.Sprintf("%s at %s", m.label, gib(b.Total)))
			fits[v != verdictOver] = append(fits[v != verdictOver], fmt.Sprintf("%s at %s", m.label, gib(b.Total)))
		}
	}
	open := map[string]any{"input": "method", "alternatives": list, "agree": agree, "states_over": statesOver, "capacity": capacity}
	switch {
	case agree:
		open["note"] = "so does every method the script may use: " + joinAnd(others)
	case len(fits[true]) > 0 && len(fits[false]) > 0:
		open["note"] = fmt.Sprintf("it would fit with %s, not with %s", joinOr(fits[true]), joinOr(fits[false]))
	case len(fits[true]) > 0:
		open["note"] = "it would fit with " + joinOr(fits[true])
	default:
		open["note"] = "so does " + joinOr(fits[false])
	}
	est["open"] = open
}

// joinOr joins words as a sentence offers a choice: "a", "a or b", "a, b
// or c".
func joinOr(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// SizingAlternative is the estimate under one plausible value of the
// input a file leaves open.
type SizingAlternative struct {
	Value       string `json:"value"`
	Fits        bool   `json:"fits"`
	PerGPUBytes int64  `json:"per_gpu_bytes"`
}

// openSizing fills a sizing from estimate.open: the top-level figures are
// the estimate the rules judged (a method's: the full fine-tune the rules
// assume; a sharding's: the one that needs least), Fits holds only when
// every value fits, and the alternatives say the rest. An input with no
// default (the sharding) also gets a one-line note, which the text report
// prints; a method's note is vram-overcommit's.
func openSizing(s *Sizing, open map[string]any) {
	s.Open, _ = open["input"].(string)
	if s.Open != "method" {
		s.Note, _ = open["note"].(string)
	}
	judged := s.PerGPUBytes
	s.Fits = true
	for _, a := range open["alternatives"].([]any) {
		m := a.(map[string]any)
		alt := SizingAlternative{}
		alt.Value, _ = m["value"].(string)
		alt.Fits, _ = m["fits"].(bool)
		alt.PerGPUBytes, _ = m["total"].(int64)
		s.Alternatives = append(s.Alternatives, alt)
		s.Fits = s.Fits && alt.Fits
		if judged == 0 && (s.PerGPUBytes == 0 || alt.PerGPUBytes < s.PerGPUBytes) {
			s.PerGPUBytes = alt.PerGPUBytes
		}
	}
	s.CapacityBytes, _ = open["capacity"].(int64)
}

// gpuCandidates are the catalog GPUs a target's GPU may be when the file
// names it only up to a set, with the words that say so: a recipe
// comment's name without its memory ("8xA100": 40 or 80 GB, PCIe or SXM;
// tuner.Catalog.MemoryVariants), or a pod's nvidia.com/gpu.memory
// selector whose total several GPUs report (Target.Candidates).
type gpuCandidates struct {
	gpus []*tuner.GPU
	// may completes "every GPU ...": what names them.
	may string
	// open says why no verdict stands when they disagree; tail follows
	// the list of GPUs where they agree.
	open, tail, settle string
}

// candidates are the target's GPU candidates; nil when its GPU is settled.
func (t Target) candidates() *gpuCandidates {
	if t.Comment.variants() != nil {
		written := t.Comment.hw.Written
		return &gpuCandidates{gpus: t.Comment.variantGPUs,
			may:    fmt.Sprintf("the recipe's comment may mean by %q", written),
			open:   fmt.Sprintf("the recipe's comment names %q without its memory", written),
			tail:   "; it states no memory",
			settle: "state the GPU with its memory: --gpu or targets.gpu"}
	}
	if len(t.Candidates) > 1 {
		return &gpuCandidates{gpus: t.Candidates,
			may:    fmt.Sprintf("the node selector %s MiB may mean", t.CandidatesBy),
			open:   fmt.Sprintf("the node selector %s MiB is the memory of several GPUs", t.CandidatesBy),
			settle: "select the nodes by nvidia.com/gpu.product as well"}
	}
	return nil
}

// estimateGPUVariants judges a subject whose GPU is one of several
// candidates (gpuCandidates) on every one of them, the GPU being the one
// open input. est is the estimate on the least of them (the target's
// GPU). When every GPU gives the same verdict the rules read est, less
// the advice that rests on one GPU's capacity (the fitting micro batch,
// the ZeRO stages, the recipe's alternatives), with estimate.open saying
// so; when they differ, the rules read only estimate.open.
func (t Target) estimateGPUVariants(w *normalize.Workload, tw tuner.Workload, est map[string]any, mem *finding.Memory) (map[string]any, *finding.Memory) {
	c := t.candidates()
	type result struct {
		name, verdict  string
		need, capacity int64
		fits           bool
	}
	var rs []result
	for _, g := range c.gpus {
		name := g.Name
		e, _ := t.estimateOne(w, g.Target(), tw)
		if e == nil {
			return nil, nil
		}
		need, _ := e["total"].(int64)
		capacity, _ := e["capacity"].(int64)
		fits, _ := e["fits"].(bool)
		rs = append(rs, result{name: name, verdict: t.verdict(need, capacity), need: need, capacity: capacity, fits: fits})
	}
	agree := true
	list := make([]any, 0, len(rs))
	var all []string
	byVerdict := map[string][]string{}
	for _, r := range rs {
		agree = agree && r.verdict == rs[0].verdict
		list = append(list, map[string]any{"value": r.name, "total": r.need, "verdict": r.verdict, "fits": r.fits})
		s := fmt.Sprintf("%s (%s of %s)", r.name, gib(r.need), gib(r.capacity))
		all = append(all, s)
		byVerdict[r.verdict] = append(byVerdict[r.verdict], r.name)
	}
	open := map[string]any{"input": "gpu", "alternatives": list, "agree": agree, "capacity": rs[0].capacity}
	if agree {
		what := agreedWords(rs[0].verdict)
		open["note"] = fmt.Sprintf("the estimate %s every GPU %s: %s%s", what, c.may, strings.Join(all, ", "), c.tail)
		out := verdictOnly(est)
		out["summary"] = fmt.Sprintf("%s, on %s, the least of the GPUs %s (%s)",
			out["summary"], rs[0].name, c.may, strings.Join(all, ", "))
		out["open"] = open
		return out, mem
	}
	parts := splitVerdicts(byVerdict, t.headroom(), "on ")
	open["note"] = fmt.Sprintf("%s, and the estimate %s (%s)", c.open, joinAnd(parts), strings.Join(all, ", "))
	open["settle"] = c.settle
	return map[string]any{"open": open}, nil
}

// estimateSetups judges a subject whose hardware is a recipe comment's
// several setups ("tested on 8xA100 machine and 16xH100 machines") on
// each of them, every catalog GPU a setup's name may mean with that
// setup's count: the setup is the one open input. When every setup gives
// the same verdict, the rules read the first's estimate (the target's GPU
// and count), less the advice that rests on one setup's capacity, with
// estimate.open saying so; when they differ, the rules read only
// estimate.open. Another open input (the sharding) gives no verdict.
func (t Target) estimateSetups(w *normalize.Workload) (map[string]any, *finding.Memory) {
	type result struct {
		label, verdict string
		need, capacity int64
		fits           bool
	}
	var rs []result
	var first map[string]any
	var firstMem *finding.Memory
	for _, s := range t.Comment.setups {
		st := t
		c := *t.Comment
		c.hw, c.setups, c.variantGPUs = s.hw, nil, nil
		st.Comment, st.GPU = &c, s.gpu
		tw, ok := st.tunerWorkload(w)
		if !ok {
			return nil, nil
		}
		e, mem := st.estimateOne(w, s.gpu.Target(), tw)
		if e == nil {
			return nil, nil
		}
		if first == nil {
			first, firstMem = e, mem
		}
		need, _ := e["total"].(int64)
		capacity, _ := e["capacity"].(int64)
		fits, _ := e["fits"].(bool)
		rs = append(rs, result{label: s.hw.String(), verdict: t.verdict(need, capacity), need: need, capacity: capacity, fits: fits})
	}
	agree := true
	list := make([]any, 0, len(rs))
	var all []string
	byVerdict := map[string][]string{}
	for _, r := range rs {
		agree = agree && r.verdict == rs[0].verdict
		list = append(list, map[string]any{"value": r.label, "total": r.need, "verdict": r.verdict, "fits": r.fits})
		all = append(all, fmt.Sprintf("%s (%s of %s)", r.label, gib(r.need), gib(r.capacity)))
		byVerdict[r.verdict] = append(byVerdict[r.verdict], r.label)
	}
	// The sizing's top-level figures are the least need and its setup's
	// capacity (openSizing), so that the two read as one estimate.
	least := 0
	for i, r := range rs {
		if r.need < rs[least].need {
			least = i
		}
	}
	open := map[string]any{"input": "setup", "alternatives": list, "agree": agree, "capacity": rs[least].capacity}
	if agree {
		what := agreedWords(rs[0].verdict)
		open["note"] = fmt.Sprintf("the estimate %s every setup the recipe's comment names: %s", what, strings.Join(all, ", "))
		open["capacity"] = rs[0].capacity
		out := verdictOnly(first)
		out["summary"] = fmt.Sprintf("%s, on %s, the first of the setups the recipe's comment names (%s)",
			out["summary"], rs[0].label, strings.Join(all, ", "))
		out["open"] = open
		return out, firstMem
	}
	parts := splitVerdicts(byVerdict, t.headroom(), "on ")
	open["note"] = fmt.Sprintf("the recipe's comment names several setups, and the estimate %s (%s)", joinAnd(parts), strings.Join(all, ", "))
	open["settle"] = "state the GPU and the GPU count the recipe runs on: --gpu and --gpus, or targets.gpu and targets.gpus"
	return map[string]any{"open": open}, nil
}

// agreedWords says what the estimate does on every alternative when they
// all agree.
func agreedWords(verdict string) string {
	return map[string]string{
		verdictFits:  "fits",
		verdictTight: "leaves under the headroom free on",
		verdictOver:  "exceeds",
	}[verdict]
}

// splitVerdicts says what the estimate does under alternatives that
// disagree: those it fits, those it leaves under the headroom free
// (tightPrep before them: "" or "on "), those it does not fit.
func splitVerdicts(byVerdict map[string][]string, headroom float64, tightPrep string) []string {
	var parts []string
	if v := byVerdict[verdictFits]; len(v) > 0 {
		parts = append(parts, "fits "+joinOr(v))
	}
	if v := byVerdict[verdictTight]; len(v) > 0 {
		parts = append(parts, fmt.Sprintf("leaves under %.0f%% free %s%s", headroom*100, tightPrep, joinOr(v)))
	}
	if v := byVerdict[verdictOver]; len(v) > 0 {
		parts = append(parts, "does not fit "+joinOr(v))
	}
	return parts
}

// verdictOnly is an estimate every alternative agrees on, less the advice
// that would rest on one of them: a fitting micro batch, the ZeRO stages,
// the recipe's own alternatives.
func verdictOnly(est map[string]any) map[string]any {
	out := maps.Clone(est)
	for _, k := range []string{"max_micro_batch", "stages", "alternatives"} {
		delete(out, k)
	}
	return out
}
