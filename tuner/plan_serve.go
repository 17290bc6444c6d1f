package tuner

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Serving constants.
const (
	// planUtilization is the gpu_memory_utilization the planner proposes:
	// vLLM's default in every release through 2025 (vllm.md §2, §5.5).
	// It is lowered only when the CUDA context and graphs do not fit in
	// the rest; a higher configured value that leaves them room is kept.
	planUtilization = 0.90
	// planContextStep: a reduced max_model_len is a multiple of this.
	planContextStep = 1024
	// typicalRequestTokens is the request length max_num_seqs is sized for:
	// vLLM's own serving benchmark's random dataset defaults to 1,024 prompt
	// and 128 output tokens (vllm-project/vllm vllm/benchmarks/datasets.py,
	// RandomDataset.DEFAULT_INPUT_LEN / DEFAULT_OUTPUT_LEN @ 0056b87f).
	typicalRequestTokens = 1024 + 128
)

// serveEval is one serving configuration's estimate and fit.
type serveEval struct {
	est      Estimate
	need     int64
	limit    int64
	oneReqKV int64
	fits     bool
}

// servePlanner evaluates serving configurations.
type servePlanner struct {
	m        *Model
	base     Workload
	headroom float64
	err      error
}

// eval estimates w with tp, util, mml and mns (0 = vLLM's default) on t.
// Need counts everything but the KV pool beyond one max_model_len request.
func (sp *servePlanner) eval(t Target, tp int, util float64, mml, mns int) serveEval {
	w := sp.base
	w.TensorParallel, w.GPUMemoryUtilization, w.MaxModelLen, w.MaxNumSeqs = tp, util, mml, mns
	ev := serveEval{limit: planLimit(t.Capacity, sp.headroom)}
	e, err := EstimateMemory(sp.m, t, w)
	if err != nil {
		if sp.err == nil {
			sp.err = err
		}
		ev.need = math.MaxInt64
		return ev
	}
	s := e.Serve
	ev.est = e
	ev.oneReqKV = s.OneRequestKVBytes
	ev.need = e.PerGPU.Total - e.PerGPU.KVCache + ev.oneReqKV
	ev.fits = e.Fits && ev.need <= ev.limit && s.GraphHeadroom >= 0
	return ev
}

// utilFor is 0.90 unless the CUDA context and graphs, which live outside
// the budget (memory-model.md §5.2), need more than the remaining 10 %;
// then the largest hundredth that leaves them room. A configured value
// above 0.90 that still leaves them room is kept: lowering it would only
// shrink the KV cache (VLLM004 judges the same room).
func (sp *servePlanner) utilFor(t Target) (float64, string) {
	if cur := sp.base.GPUMemoryUtilization; cur > planUtilization && cur < 1 {
		ev := sp.eval(t, 1, cur, 1, 0)
		if sp.err != nil {
			return planUtilization, ""
		}
		// Kept only with room for the graphs at the top of their measured
		// range: a planner that keeps a value must be sure of it.
		s := ev.est.Serve
		need := t.Capacity - s.Budget - s.GraphHeadroom // CUDA context + typical graphs
		if !sp.base.EnforceEager && !s.GraphsInBudget {
			need += s.Graphs.High - s.Graphs.Bytes
		}
		if t.Capacity-s.Budget >= need {
			return cur, fmt.Sprintf("the configured %.2f leaves %s GiB outside the budget, room for %s (%s GiB at most)",
				cur, gibs(t.Capacity-s.Budget), outsideBudget(s), gibs(need))
		}
	}
	ev := sp.eval(t, 1, planUtilization, 1, 0)
	if sp.err != nil {
		return planUtilization, ""
	}
	s := ev.est.Serve
	outside := t.Capacity - s.Budget - s.GraphHeadroom // CUDA context + graphs
	if s.GraphHeadroom >= 0 {
		return planUtilization, fmt.Sprintf("0.90 (vLLM's default) leaves %s GiB outside the budget for %s (%s GiB)",
			gibs(t.Capacity-s.Budget), outsideBudget(s), gibs(outside))
	}
	pct := max((t.Capacity-outside)*100/t.Capacity, 1)
	for ; pct > 1; pct-- {
		if t.Capacity-int64(float64(pct)/100*float64(t.Capacity)) >= outside {
			break
		}
	}
	return float64(pct) / 100, fmt.Sprintf("0.90 would leave %s GiB outside the budget, less than %s need (%s GiB); %.2f leaves %s GiB",
		gibs(t.Capacity-s.Budget), outsideBudget(s), gibs(outside), float64(pct)/100, gibs(t.Capacity-int64(float64(pct)/100*float64(t.Capacity))))
}

// outsideBudget names what must fit outside gpu_memory_utilization's
// budget: the CUDA context, and the CUDA graphs unless the release
// profiles them inside the budget (v0.21 and later).
func outsideBudget(s *ServeEstimate) string {
	if s.GraphsInBudget {
		return "the CUDA context"
	}
	return "the CUDA context and graphs"
}

// largestMML is the largest multiple of planContextStep up to the model's
// max positions that fits, its request held by the KV cache with the
// validated over-prediction margin (kvHolds); the model's max positions
// itself when it is below one step; 0 when none does.
func (sp *servePlanner) largestMML(t Target, tp int, util float64) int {
	fits := func(mml int) bool {
		ev := sp.eval(t, tp, util, mml, 0)
		return ev.fits && ev.est.Serve != nil && kvHolds(ev.est.Serve)
	}
	maxPos := sp.m.MaxPositions
	if maxPos < planContextStep {
		if fits(maxPos) {
			return maxPos
		}
		return 0
	}
	lo, hi := 0, maxPos/planContextStep+1 // k·step fits for k ≤ lo (k = 0 trivially), not for k ≥ hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid * planContextStep) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo * planContextStep
}

// kvHolds reports whether the KV cache the model sizes still holds one
// max_model_len request if vLLM's real cache is kvOverPrediction smaller,
// as it was in the validation rows the model over-predicted most. Blocks,
// not tokens, are compared: a hybrid model's request needs blocks in every
// KV cache group.
func kvHolds(s *ServeEstimate) bool {
	return float64(s.NumBlocks) >= float64(s.RequestBlocks)*(1+kvOverPrediction)
}

func effectiveServePrecision(m *Model, w Workload) Precision {
	switch {
	case w.Precision != "":
		return w.Precision
	case m.Dtype == "float16":
		return FP16
	case m.Dtype == "float32" && w.Kind == Serve:
		// vLLM's dtype auto downcasts a float32 checkpoint to the platform's
		// first 16-bit dtype, bfloat16 on GPUs that have it
		// (vllm-project/vllm vllm/config.py _resolve_auto_dtype, "Downcast
		// for float32 models"), as servingWeightFormat sizes it.
		return BF16
	case m.Dtype == "float32":
		return FP32
	}
	return BF16
}

// servePrecision applies the precision rule to serving, keeping fp16 for
// plain AWQ and GPTQ kernels, which accept only float16 (vllm.md §4).
func servePrecision(g *GPU, m *Model, w Workload) (Precision, string) {
	cur := effectiveServePrecision(m, w)
	q := strings.ToLower(w.WeightQuant)
	if cur == FP16 && (q == "awq" || q == "gptq") {
		return FP16, "fp16 kept: plain awq and gptq kernels accept only float16 (vllm.md §4)"
	}
	if cur == AMP || cur == PureBF16 {
		cur = BF16
	}
	return choosePrecision(g, cur, false)
}

// serveTPCandidates lists tensor-parallel degrees up to the GPUs available
// per pipeline stage (and per node when nodes are given) that divide the
// attention heads, as vLLM requires (vllm.md §2), and split the KV heads:
// QKVParallelLinear partitions them when there are at least as many as
// ranks and replicates them otherwise, so either kv_heads % tp or
// tp % kv_heads must be 0 (vllm-project/vllm
// vllm/model_executor/models/gemma2.py @025adfb, Gemma2Attention: "assert
// self.total_num_kv_heads % tp_size == 0" / "assert tp_size %
// self.total_num_kv_heads == 0"); skipped lists the others.
func serveTPCandidates(req PlanRequest, pp int) (cands []int, skipped []string) {
	top := req.GPUs / pp
	if n := req.gpusPerNode(); n > 0 {
		top = min(top, n)
	}
	kv := req.Model.KVHeads
	for t := 1; t <= top; t++ {
		if req.Model.Heads%t == 0 && (kv <= 0 || kv%t == 0 || t%kv == 0) {
			cands = append(cands, t)
		} else {
			skipped = append(skipped, strconv.Itoa(t))
		}
	}
	return cands, skipped
}

// planServing plans a vLLM deployment.
func planServing(req PlanRequest, headroom float64) (Plan, error) {
	m, g, cur := req.Model, req.GPU, req.Current
	pp := max(cur.PipelineParallel, 1)
	if pp > req.GPUs {
		return Plan{}, fmt.Errorf("pipeline parallel size %d exceeds %d gpus", pp, req.GPUs)
	}
	prec, precWhy := servePrecision(g, m, cur)
	sp := &servePlanner{m: m, base: cur, headroom: headroom}
	sp.base.Precision = prec
	sp.base.PipelineParallel = pp
	full := g.Target()
	util, utilWhy := sp.utilFor(full)

	maxPos := m.MaxPositions
	cfg := cur.MaxModelLen
	if cfg == 0 {
		cfg = maxPos
	}
	cands, skipped := serveTPCandidates(req, pp)
	tp, mml := 0, 0
	var tried []string
	if cfg <= maxPos {
		for _, t := range cands {
			if ev := sp.eval(full, t, util, cfg, 0); ev.fits {
				tp, mml = t, cfg
				break
			} else {
				tried = append(tried, fmt.Sprintf("TP %d %s", t, gibs(ev.need)))
			}
		}
	}
	if tp == 0 {
		for _, t := range cands {
			if k := sp.largestMML(full, t, util); k > 0 {
				tp, mml = t, k
				break
			}
		}
	}
	fitsAny := tp > 0
	if !fitsAny {
		tp, mml = cands[len(cands)-1], min(maxPos, planContextStep)
	}
	if sp.err != nil {
		return Plan{}, sp.err
	}

	var p Plan
	target := full
	migWhy := ""
	if req.MIGProfiles {
		var prof *MIGProfile
		prof, migWhy = sp.chooseMIG(g, tp, pp, fitsAny, sp.eval(full, tp, util, mml, 0), mml)
		if prof != nil {
			p.MIG = prof
			target = g.MIGTarget(prof)
			util, utilWhy = sp.utilFor(target)
		}
	}

	ev := sp.eval(target, tp, util, mml, 0)
	s := ev.est.Serve
	capSeqs := s.MaxNumSeqs // vLLM's default for this device, at most max_num_batched_tokens
	typical := min(typicalRequestTokens, mml)
	perReq := int64((typical + s.BlockSize - 1) / s.BlockSize)
	// A hybrid model's request takes blocks in every KV cache group.
	reqBlocks := vllmKVLayout(m, pp, sp.base.DisableHybridKVCache).requestBlocks(typical, s.MaxNumBatchedTokens, s.BlockSize)
	holds := int(min(s.NumBlocks/reqBlocks, int64(math.MaxInt32)))
	mns := max(1, min(capSeqs, holds))
	final := sp.eval(target, tp, util, mml, mns)
	if sp.err != nil {
		return Plan{}, sp.err
	}
	w := sp.base
	w.TensorParallel, w.GPUMemoryUtilization, w.MaxModelLen, w.MaxNumSeqs = tp, util, mml, mns
	p.Workload, p.Estimate = w, final.est
	p.Limit, p.Need, p.Fits = final.limit, final.need, fitsAny && final.fits

	curSeqs := cur.MaxNumSeqs
	if curSeqs == 0 {
		_, d := vllmBatchDefaults(full)
		curSeqs = d
		if cur.MaxNumBatchedTokens > 0 {
			curSeqs = min(curSeqs, cur.MaxNumBatchedTokens)
		}
	}
	curMML := cur.MaxModelLen
	if curMML == 0 {
		curMML = maxPos
	}
	curUtil := cur.GPUMemoryUtilization
	if curUtil == 0 {
		curUtil = planUtilization
	}
	if curUtil > util {
		utilWhy += fmt.Sprintf("; the configured %.2f would leave only %s GiB",
			curUtil, gibs(target.Capacity-int64(curUtil*float64(target.Capacity))))
	}
	p.Choices = []Choice{
		{SettingPrecision, string(effectiveServePrecision(m, cur)), string(prec), precWhy},
		{SettingTensorParallel, strconv.Itoa(max(cur.TensorParallel, 1)), strconv.Itoa(tp),
			tpReason(req, p.MIG, tp, pp, cands[len(cands)-1], fitsAny, mml, cfg, ev, tried, skipped)},
		{SettingGPUMemoryUtilization, fmt.Sprintf("%.2f", curUtil), fmt.Sprintf("%.2f", util), utilWhy},
		{SettingMaxModelLen, strconv.Itoa(curMML), strconv.Itoa(mml),
			mmlReason(m, cfg, mml, tp, fitsAny, sp.eval(target, tp, util, min(cfg, maxPos), 0), final)},
		{SettingMaxNumSeqs, strconv.Itoa(curSeqs), strconv.Itoa(mns),
			seqsReason(s, holds, mns, capSeqs, perReq, target.Name)},
	}
	if req.MIGProfiles {
		to := "none"
		if p.MIG != nil {
			to = p.MIG.Name
		}
		p.Choices = append(p.Choices, Choice{SettingMIGProfile, req.currentMIGName(), to, migWhy})
	}
	if p.Fits {
		p.Verdict = fmt.Sprintf("fits: %s of %s per GPU for weights, activations, non-torch memory, CUDA context and graphs and one %s-token request; vLLM's KV cache takes the rest of gpu_memory_utilization %.2f (%s tokens)",
			gibs(p.Need), limitPhrase(p.Limit, target.Capacity, headroom), thousands(int64(mml)), util, thousands(final.est.Serve.KVCacheTokens))
	} else {
		help := "more GPUs"
		if req.Nodes > 1 && pp == 1 {
			help = fmt.Sprintf("pipeline parallelism across the %d nodes", req.Nodes)
		}
		p.Verdict = fmt.Sprintf("does not fit: at TP %d (the most GPUs whose count divides %d heads) a %s-token request needs %s of %s per GPU; try %s, a quantized checkpoint or a shorter max_model_len",
			tp, m.Heads, thousands(int64(mml)), gibs(p.Need), limitPhrase(p.Limit, target.Capacity, headroom), help)
	}
	return p, nil
}

// plural writes "1 GPU" or "8 GPUs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seqsReason(s *ServeEstimate, holds, mns, capSeqs int, perReq int64, target string) string {
	r := fmt.Sprintf("at max_num_seqs %d the KV cache holds %s tokens = %d requests of %s tokens (vLLM's benchmark request: 1,024 prompt + 128 output tokens, at most max_model_len)",
		s.MaxNumSeqs, thousands(s.KVCacheTokens), holds, thousands(perReq*int64(s.BlockSize)))
	switch {
	case holds == 0:
		return r + "; 1, the minimum"
	case mns == capSeqs:
		return fmt.Sprintf("%s; capped at %d, vLLM's default on %s (at most max_num_batched_tokens)", r, capSeqs, target)
	}
	return fmt.Sprintf("%s; below vLLM's default %d on %s", r, capSeqs, target)
}

func tpReason(req PlanRequest, mig *MIGProfile, tp, pp, maxTP int, fits bool, mml, cfg int, ev serveEval, tried, skipped []string) string {
	if mig != nil {
		return fmt.Sprintf("TP 1 on a %s slice: MIG instances share no NVLink, so each slice serves one replica", mig.Name)
	}
	head := fmt.Sprintf("TP %d: %s of %s GiB per GPU with one %s-token request", tp, gibs(ev.need), gibs(ev.limit), thousands(int64(mml)))
	if !fits {
		head = fmt.Sprintf("TP %d, the largest available: nothing fits (%s of %s GiB per GPU with one %s-token request)", tp, gibs(ev.need), gibs(ev.limit), thousands(int64(mml)))
	} else if mml != cfg {
		head += fmt.Sprintf("; no degree up to %d fits max_model_len %s", maxTP, thousands(int64(cfg)))
	}
	var below []string
	for _, s := range skipped {
		if n, _ := strconv.Atoi(s); n < tp {
			below = append(below, s)
		}
	}
	var div string
	heads := fmt.Sprintf("%d attention heads", req.Model.Heads)
	for _, s := range below {
		if n, _ := strconv.Atoi(s); req.Model.Heads%n == 0 {
			heads = fmt.Sprintf("%d attention heads and %d KV heads evenly", req.Model.Heads, req.Model.KVHeads)
		}
	}
	switch len(below) {
	case 0:
	case 1:
		div = fmt.Sprintf("TP %s does not divide %s", below[0], heads)
	default:
		div = fmt.Sprintf("TP %s do not divide %s", strings.Join(below, ", "), heads)
	}
	rep := fmt.Sprintf("%s hold %s", plural(req.GPUs, "GPU"), plural(req.GPUs/(tp*pp), "replica"))
	if req.GPUs == 1 {
		rep = "1 GPU holds 1 replica"
	}
	if n := req.gpusPerNode(); n > 0 && req.Nodes > 1 {
		rep += fmt.Sprintf("; tensor parallelism stays inside a node (%s per node)", plural(n, "GPU"))
	}
	if !fits || mml != cfg {
		tried = nil
	}
	var smaller string
	if len(tried) > 0 {
		smaller = "smaller degrees would need " + strings.Join(tried, ", ") + " GiB"
	}
	return joinReasons(head, smaller, div, rep)
}

func mmlReason(m *Model, cfg, mml, tp int, fits bool, atCfg, final serveEval) string {
	kv := fmt.Sprintf("one request takes %s GiB of KV cache; the cache holds %s tokens", gibs(final.oneReqKV), thousands(final.est.Serve.KVCacheTokens))
	if !fits {
		return fmt.Sprintf("%s: nothing fits, not even %s tokens at TP %d (%s of %s GiB)", thousands(int64(mml)), thousands(int64(mml)), tp, gibs(final.need), gibs(final.limit))
	}
	if mml == cfg {
		return fmt.Sprintf("%s fits at TP %d: %s", thousands(int64(cfg)), tp, kv)
	}
	var why string
	if cfg > m.MaxPositions {
		why = fmt.Sprintf("%s exceeds the model's %s positions", thousands(int64(cfg)), thousands(int64(m.MaxPositions)))
	} else {
		why = fmt.Sprintf("%s would need %s of %s GiB", thousands(int64(cfg)), gibs(atCfg.need), gibs(atCfg.limit))
		if atCfg.est.Serve != nil && atCfg.est.Serve.KVCacheTokens < int64(cfg) {
			why += fmt.Sprintf(" and vLLM's cache would hold only %s tokens", thousands(atCfg.est.Serve.KVCacheTokens))
		}
	}
	return fmt.Sprintf("%s; %s is the largest multiple of %d that fits at TP %d with %.0f%% of KV cache to spare (the most the model over-predicted vLLM's cache in validation): %s",
		why, thousands(int64(mml)), planContextStep, tp, kvOverPrediction*100, kv)
}

// migOrder sorts g's MIG profiles smallest first (memory, compute slices,
// plain before +me, name), leaving out the profile that spans the whole GPU.
func migOrder(g *GPU) []*MIGProfile {
	var ps []*MIGProfile
	for _, p := range g.MIGProfiles() {
		if p.ComputeSlices < g.MIGComputeSlices {
			ps = append(ps, p)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		switch {
		case a.MemoryBytes != b.MemoryBytes:
			return a.MemoryBytes < b.MemoryBytes
		case a.ComputeSlices != b.ComputeSlices:
			return a.ComputeSlices < b.ComputeSlices
		case a.MediaExtensions != b.MediaExtensions:
			return !a.MediaExtensions
		}
		return a.Name < b.Name
	})
	return ps
}

// chooseMIG finds the smallest MIG profile on which the full-GPU plan's
// max_model_len fits with headroom at TP 1.
func (sp *servePlanner) chooseMIG(g *GPU, tp, pp int, fits bool, whole serveEval, mml int) (*MIGProfile, string) {
	switch {
	case !g.MIGCapable():
		return nil, fmt.Sprintf("%s has no MIG profiles: whole GPU", g.Name)
	case tp*pp > 1:
		return nil, fmt.Sprintf("the model needs %d whole GPUs per replica: no MIG slice", tp*pp)
	case !fits:
		return nil, fmt.Sprintf("the model does not fit one whole GPU (%s of %s GiB): no MIG slice", gibs(whole.need), gibs(whole.limit))
	}
	var tried []string
	for _, prof := range migOrder(g) {
		t := g.MIGTarget(prof)
		util, _ := sp.utilFor(t)
		ev := sp.eval(t, 1, util, mml, 0)
		if ev.fits {
			return prof, joinReasons(fmt.Sprintf("%s: %s of %s with one %s-token request at gpu_memory_utilization %.2f",
				prof.Name, gibs(ev.need), limitPhrase(ev.limit, t.Capacity, sp.headroom), thousands(int64(mml)), util),
				smallerPhrase(tried), fmt.Sprintf("up to %d per GPU", prof.MaxCount))
		}
		tried = appendTried(tried, prof, ev.need, ev.limit)
	}
	return nil, joinReasons("no MIG slice smaller than the whole GPU fits: whole GPU", smallerPhrase(tried))
}

// appendTried records a profile that did not fit, once per memory size.
func appendTried(tried []string, prof *MIGProfile, need, limit int64) []string {
	if n := len(tried); n > 0 && strings.HasSuffix(tried[n-1], " of "+gibs(limit)) {
		return tried
	}
	return append(tried, fmt.Sprintf("%s %s of %s", prof.Name, gibs(need), gibs(limit)))
}

func smallerPhrase(tried []string) string {
	if len(tried) == 0 {
		return ""
	}
	return "smaller profiles would need " + strings.Join(tried, ", ") + " GiB"
}
