package tuner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// trainCand is one ZeRO configuration the training planner tries.
type trainCand struct {
	stage            int
	offOpt, offParam bool
	fsdp             bool // an FSDP strategy (fsdpCandidates), named as FSDP names it
	hybrid           bool // FSDP hybrid sharding (within a node)
}

// FSDPStrategy is the torch.distributed.fsdp ShardingStrategy name of a
// ZeRO-like stage: 0 NO_SHARD, 2 SHARD_GRAD_OP, 3 FULL_SHARD, and with
// hybrid sharding _HYBRID_SHARD_ZERO2 and HYBRID_SHARD.
func FSDPStrategy(stage int, hybrid bool) string {
	switch {
	case stage == 0:
		return "NO_SHARD"
	case stage <= 2 && hybrid:
		return "_HYBRID_SHARD_ZERO2"
	case stage <= 2:
		return "SHARD_GRAD_OP"
	case hybrid:
		return "HYBRID_SHARD"
	}
	return "FULL_SHARD"
}

func (c trainCand) String() string {
	if c.fsdp {
		s := "FSDP " + FSDPStrategy(c.stage, c.hybrid)
		if c.offParam {
			s += " with CPU offload"
		}
		return s
	}
	s := "ZeRO-" + strconv.Itoa(c.stage)
	switch {
	case c.offOpt && c.offParam:
		return s + " with optimizer and parameters offloaded"
	case c.offOpt:
		return s + " with the optimizer offloaded"
	}
	return s
}

// trainCandidates lists ZeRO configurations from the least to the most
// communication. Stages partition over data-parallel ranks (ZeRO paper §5),
// so on one rank stages 1-3 save nothing and are skipped; ZeRO-3 appears on
// one GPU only with offload_param, which DeepSpeed reads only at stage 3
// (deepspeed.md §4). Optimizer offload comes before parameter offload, at
// stage 2 first: DeepSpeed accepts offload_optimizer at stages 1-3, and its
// ZeRO-Offload estimator (estimate_zero2_model_states_mem_needs,
// memory-model.md §2.1) models stage 2; stage 1 would hold the same memory
// in our model with the same communication volume (ZeRO paper §7).
func trainCandidates(dp int) []trainCand {
	if dp == 1 {
		return []trainCand{{stage: 0}, {stage: 2, offOpt: true}, {stage: 3, offOpt: true, offParam: true}}
	}
	return []trainCand{{stage: 0}, {stage: 1}, {stage: 2}, {stage: 3},
		{stage: 2, offOpt: true}, {stage: 3, offOpt: true}, {stage: 3, offOpt: true, offParam: true}}
}

// fsdpCandidates lists the FSDP configurations the framework supports, from
// the least to the most communication: FSDP1's ShardingStrategy NO_SHARD,
// SHARD_GRAD_OP and FULL_SHARD (or the hybrid pair within a node), then
// FULL_SHARD with CPUOffload(offload_params=True), which offloads
// parameters, gradients and the optimizer step together. FSDP2
// (fully_shard) has only reshard_after_forward false (SHARD_GRAD_OP-like)
// and true (FULL_SHARD-like), no NO_SHARD (accelerate.md §4). On one rank
// sharding saves nothing, so only the lowest strategy and offload remain.
func fsdpCandidates(dp int, s Sharding, hybrid bool) []trainCand {
	low := 0
	if s == FSDP2 {
		low = 2
	}
	var out []trainCand
	for _, st := range []int{0, 2, 3} {
		if st < low || (dp == 1 && st > low) {
			continue
		}
		out = append(out, trainCand{stage: st, fsdp: true, hybrid: hybrid})
	}
	return append(out, trainCand{stage: 3, offOpt: true, offParam: true, fsdp: true, hybrid: hybrid})
}

// trainPlanner evaluates training configurations on one target.
type trainPlanner struct {
	m      *Model
	target Target
	limit  int64
	base   Workload
	dp     int
	gb, ga int // configured global batch (0 = unset) and accumulation (≥ 1)
	// gbStated: the global batch is stated (GlobalBatch); else, with
	// gaStated, it is today's micro × accumulation × dp, kept as gb.
	gbStated, gaStated bool
	curMB              int
	maxMB              int // micro-batch search ceiling
	optDev             Device
	paramDev           Device
	err                error
}

func (tp *trainPlanner) workload(c trainCand, mb int, ckpt bool) Workload {
	w := tp.base
	w.ZeroStage = c.stage
	w.OffloadOptimizer, w.OffloadParam = NoOffload, NoOffload
	if c.offOpt {
		w.OffloadOptimizer = tp.optDev
	}
	if c.offParam {
		w.OffloadParam = tp.paramDev
	}
	w.MicroBatch = mb
	w.Checkpointing = ckpt
	return w
}

// need is the per-GPU total of a configuration; an estimator error is kept
// for planTraining to return and reads as not fitting.
func (tp *trainPlanner) need(c trainCand, mb int, ckpt bool) int64 {
	e, err := EstimateMemory(tp.m, tp.target, tp.workload(c, mb, ckpt))
	if err != nil {
		if tp.err == nil {
			tp.err = err
		}
		return math.MaxInt64
	}
	return e.PerGPU.Total
}

// maxMicro is the largest micro batch up to tp.maxMB that fits, 0 if none.
// The limit keeps the margin the model's error band needs (bandLimit).
func (tp *trainPlanner) maxMicro(c trainCand, ckpt bool) int {
	limit, _ := bandLimit(tp.limit, tp.target.Capacity, tp.base.Kind)
	return largestFitting(tp.maxMB, func(mb int) bool { return tp.need(c, mb, ckpt) <= limit })
}

// MaxFittingMicroBatch is the largest micro batch, up to the planner's
// ceiling of 1024 (DeepSpeed's autotuner's, memory-model.md §7), at which
// w's estimate on t leaves the headroom fraction of capacity free; 0 when
// even 1 does not fit or the estimate fails. w's other settings are kept.
//
// The limit keeps the margin the model's validated error band needs where
// that exceeds the headroom (bandLimit).
func MaxFittingMicroBatch(m *Model, t Target, w Workload, headroom float64) int {
	limit, _ := bandLimit(planLimit(t.Capacity, headroom), t.Capacity, w.Kind)
	return largestFitting(planMaxMicroBatch, func(mb int) bool {
		w.MicroBatch = mb
		e, err := EstimateMemory(m, t, w)
		return err == nil && e.PerGPU.Total <= limit
	})
}

// MaxFittingSeqLen is the longest sequence, up to the model's max
// positions, at which w (with its micro batch) on t leaves the headroom
// fraction of capacity free; 0 when even one token does not fit or the
// estimate fails. Like MaxFittingMicroBatch it keeps the margin the model's
// validated error band needs (bandLimit), so that it stays at or below the
// published maxima in docs/validation.md (tuner/internal/validation's
// TestMaxSeqLenNotAbovePublished).
func MaxFittingSeqLen(m *Model, t Target, w Workload, headroom float64) int {
	limit, _ := bandLimit(planLimit(t.Capacity, headroom), t.Capacity, w.Kind)
	return largestFitting(m.MaxPositions, func(s int) bool {
		w.SeqLen = s
		e, err := EstimateMemory(m, t, w)
		return err == nil && e.PerGPU.Total <= limit
	})
}

// largestFitting is the largest n in [1, ceiling] for which fits holds, 0
// if fits(1) does not; memory grows with the micro batch, so fits is
// monotone and an exponential then binary search finds it.
func largestFitting(ceiling int, fits func(int) bool) int {
	if !fits(1) {
		return 0
	}
	lo, hi := 1, 2
	for hi <= ceiling && fits(hi) {
		lo, hi = hi, hi*2
	}
	hi = min(hi, ceiling+1) // lo fits, hi does not (or lies past the ceiling)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// batchPick is a micro batch with its accumulation steps.
type batchPick struct {
	micro, accum, global int
	exact                bool // global equals the configured global batch
}

// pick chooses the micro batch and accumulation for a largest fitting micro
// batch maxFit ≥ 1. Without a configured global batch the micro batch is
// maxFit and the accumulation stays as configured. With one that the
// data-parallel degree divides, the micro batch is the largest divisor of
// global / dp up to maxFit, so micro × accumulation × dp equals it exactly
// (DeepSpeed asserts this identity, deepspeed.md §2). Otherwise no choice
// is exact; the pick comes closest to the configured global batch,
// preferring the larger micro batch on ties.
func (tp *trainPlanner) pick(maxFit int) batchPick {
	if tp.gb == 0 {
		return batchPick{micro: maxFit, accum: tp.ga, global: maxFit * tp.ga * tp.dp, exact: true}
	}
	if tp.gb%tp.dp == 0 {
		s := tp.gb / tp.dp
		for mb := min(maxFit, s); mb >= 1; mb-- {
			if s%mb == 0 {
				return batchPick{micro: mb, accum: s / mb, global: tp.gb, exact: true}
			}
		}
	}
	var best batchPick
	bestDev := -1
	for mb := maxFit; mb >= 1; mb-- {
		acc := max(1, int(math.Round(float64(tp.gb)/float64(mb*tp.dp))))
		g := mb * acc * tp.dp
		dev := g - tp.gb
		if dev < 0 {
			dev = -dev
		}
		if bestDev < 0 || dev < bestDev {
			best, bestDev = batchPick{micro: mb, accum: acc, global: g}, dev
		}
	}
	return best
}

func effectiveTrainPrecision(w Workload) Precision {
	if w.Precision == "" {
		return BF16
	}
	return w.Precision
}

// planTraining plans train, lora and qlora workloads.
func planTraining(req PlanRequest, headroom float64) (Plan, error) {
	m, g, cur := req.Model, req.GPU, req.Current
	tpDeg, ppDeg := max(cur.TensorParallel, 1), max(cur.PipelineParallel, 1)
	if req.GPUs%(tpDeg*ppDeg) != 0 {
		return Plan{}, fmt.Errorf("%d gpus are not a multiple of tensor × pipeline parallel size %d", req.GPUs, tpDeg*ppDeg)
	}
	dp := req.GPUs / (tpDeg * ppDeg)
	target := g.Target()
	tp := &trainPlanner{m: m, target: target, limit: planLimit(target.Capacity, headroom), dp: dp,
		gb: req.GlobalBatch, ga: max(req.GradientAccumulation, 1), maxMB: planMaxMicroBatch,
		optDev: CPU, paramDev: CPU}
	if cur.OffloadOptimizer == NVMe {
		tp.optDev = NVMe
	}
	if cur.OffloadParam == NVMe {
		tp.paramDev = NVMe
	}
	curMB := max(cur.MicroBatch, 1)
	tp.curMB, tp.gbStated, tp.gaStated = curMB, tp.gb > 0, req.GradientAccumulation > 0
	if tp.gb == 0 && tp.gaStated {
		// A stated accumulation fixes the global batch at micro ×
		// accumulation × data-parallel ranks (DeepSpeed derives
		// train_batch_size so and _batch_assertion refuses any other
		// value, microsoft/DeepSpeed deepspeed/runtime/config.py
		// _set_batch_related_parameters, commit 063108a9, deepspeed.md
		// §2; HF Trainer and the recipe tools step the
		// optimizer every gradient_accumulation_steps micro batches). A
		// larger micro batch with the same accumulation would train
		// with a larger global batch, changing the run's optimisation,
		// so the plan keeps the product.
		tp.gb = curMB * tp.ga * dp
	}
	if tp.gb > 0 {
		tp.maxMB = min(tp.maxMB, max(1, (tp.gb+dp-1)/dp))
	}
	curPrec := effectiveTrainPrecision(cur)
	prec, precWhy := choosePrecision(g, curPrec, true)

	// How the current configuration fares on the GPUs it is given.
	curW := cur
	curW.TensorParallel, curW.PipelineParallel, curW.DataParallel = tpDeg, ppDeg, dp
	if n := req.gpusPerNode(); n > 0 {
		curW.GPUsPerNode = n
	}
	curEst, err := EstimateMemory(m, target, curW)
	if err != nil {
		return Plan{}, fmt.Errorf("current workload: %w", err)
	}
	curFits := curEst.PerGPU.Total <= tp.limit

	tp.base = curW
	tp.base.Precision = prec

	var p Plan
	if req.MIGProfiles {
		p.Notes = append(p.Notes, "MIG slices are considered for serving and inference only; training uses whole GPUs")
	}
	// A configuration that fits already is never made worse: the search
	// starts at its micro batch and does not add checkpointing to it.
	floor, ckptOK := 1, true
	if curFits {
		floor, ckptOK = min(curMB, tp.maxMB), cur.Checkpointing
	}
	cands := trainCandidates(dp)
	fsdp := cur.Sharding.IsFSDP()
	if fsdp {
		cands = fsdpCandidates(dp, cur.Sharding, cur.HybridShard)
	}
	var rejected []string
	search := func() (int, int64, bool) {
		rejected = rejected[:0]
		for i, c := range cands {
			n, ckpt := tp.need(c, floor, false), false
			if n > tp.limit && ckptOK {
				n, ckpt = tp.need(c, floor, true), true
			}
			if n <= tp.limit {
				return i, n, ckpt
			}
			rejected = append(rejected, fmt.Sprintf("%s %s", c, gibs(n)))
		}
		return -1, 0, false
	}
	ci, stageNeed, stageCkpt := search()
	if ci < 0 && (floor > 1 || !ckptOK) {
		p.Notes = append(p.Notes, fmt.Sprintf("the current micro batch %d fits today but not with %s precision; the search starts again at micro batch 1", curMB, prec))
		floor, ckptOK = 1, true
		ci, stageNeed, stageCkpt = search()
	}
	if tp.err != nil {
		return Plan{}, tp.err
	}
	fits := ci >= 0
	var c trainCand
	var bp batchPick
	var ckpt bool
	var microWhy, ckptWhy string
	if fits {
		c = cands[ci]
		bp, ckpt, microWhy, ckptWhy = tp.chooseBatch(c, floor, ckptOK)
		if h, ok := tp.held(c, ckpt, bp); ok {
			p.Held = append(p.Held, h)
		}
	} else {
		c = cands[len(cands)-1]
		bp = batchPick{micro: 1, accum: 1, global: tp.dp}
		if tp.gb > 0 {
			bp = tp.pick(1)
		} else {
			bp.accum, bp.global = tp.ga, tp.ga*tp.dp
		}
		ckpt = true
		stageNeed = tp.need(c, 1, true)
		microWhy = fmt.Sprintf("1: nothing fits, the smallest micro batch needs %s of %s GiB", gibs(stageNeed), gibs(tp.limit))
		ckptWhy = fmt.Sprintf("on: nothing fits even with checkpointing (%s of %s GiB at micro batch 1)", gibs(stageNeed), gibs(tp.limit))
	}
	if !ckpt && cur.ActivationOffloading && cur.Checkpointing {
		// torchtune refuses offloading without checkpointing
		// (recipes/lora_finetune_single_device.py @ bd2a0fc: "should only
		// be True when enable_activation_checkpointing is True"). Keeping
		// it only lowers the need of a configuration that fits without it.
		ckpt = true
		ckptWhy = fmt.Sprintf("on: activation offloading runs with checkpointing (torchtune refuses it without); %s of %s GiB with both at micro batch %d",
			gibs(tp.need(c, bp.micro, true)), gibs(tp.limit), bp.micro)
	}
	w := tp.workload(c, bp.micro, ckpt)
	est, err := EstimateMemory(m, target, w)
	if err != nil {
		return Plan{}, err
	}
	p.Workload, p.Estimate = w, est
	p.GradientAccumulation, p.GlobalBatch = bp.accum, bp.global
	p.Limit, p.Need = tp.limit, est.PerGPU.Total
	p.Fits = fits && p.Need <= p.Limit

	stageWhy := tp.stageReason(c, fits, stageNeed, floor, stageCkpt, ckptOK, rejected, headroom)
	sharding := []Choice{
		{SettingZeroStage, strconv.Itoa(cur.ZeroStage), strconv.Itoa(c.stage), stageWhy},
		{SettingOffloadOptimizer, deviceString(cur.OffloadOptimizer), string(w.OffloadOptimizer), tp.offloadReason(c, false, stageNeed, est)},
		{SettingOffloadParam, deviceString(cur.OffloadParam), string(w.OffloadParam), tp.offloadReason(c, true, stageNeed, est)},
	}
	if fsdp {
		curOff := deviceString(cur.OffloadParam) != string(NoOffload) || deviceString(cur.OffloadOptimizer) != string(NoOffload)
		sharding = []Choice{
			{SettingFSDPSharding, FSDPStrategy(cur.ZeroStage, cur.HybridShard), FSDPStrategy(c.stage, c.hybrid), stageWhy},
			{SettingFSDPOffload, onOff(curOff), onOff(c.offParam), tp.offloadReason(c, true, stageNeed, est)},
		}
	}
	p.Choices = append([]Choice{{SettingPrecision, string(curPrec), string(prec), precWhy}}, sharding...)
	p.Choices = append(p.Choices, []Choice{
		{SettingMicroBatch, strconv.Itoa(curMB), strconv.Itoa(bp.micro), microWhy},
		{SettingGradAccumulation, strconv.Itoa(tp.ga), strconv.Itoa(bp.accum), tp.accumReason(bp)},
		{SettingCheckpointing, onOff(cur.Checkpointing), onOff(ckpt), ckptWhy},
	}...)
	p.Verdict = tp.verdict(p, c, headroom)
	return p, nil
}

// chooseBatch picks the micro batch, accumulation and checkpointing for a
// ZeRO configuration that fits at micro batch floor. Checkpointing is used
// only when the job does not fit without it or when it at least doubles the
// micro batch; !ckptOK forbids adding it to a configuration that fits
// today without it.
func (tp *trainPlanner) chooseBatch(c trainCand, floor int, ckptOK bool) (batchPick, bool, string, string) {
	offMax := tp.maxMicro(c, false)
	onMax := 0
	if ckptOK {
		onMax = tp.maxMicro(c, true)
	}
	offOK, onOK := offMax >= floor, onMax >= floor
	var off, on batchPick
	if offOK {
		off = tp.pick(offMax)
	}
	if onOK {
		on = tp.pick(onMax)
	}
	ckpt, maxFit, bp := false, offMax, off
	var ckptWhy string
	if !offOK && !onOK {
		// The configuration fits at micro batch floor within the plan's
		// limit, but not within the model's error band (bandLimit), which
		// bounds only how far the micro batch is raised: floor is kept
		// (the search's checkpointing with it), never lowered to 0.
		band, _ := bandLimit(tp.limit, tp.target.Capacity, tp.base.Kind)
		ckpt = ckptOK && tp.need(c, floor, false) > tp.limit
		bp = tp.pick(floor)
		ckptWhy = fmt.Sprintf("%s: micro batch %d needs %s of %s GiB with it", onOff(ckpt), floor, gibs(tp.need(c, floor, ckpt)), gibs(tp.limit))
		microWhy := fmt.Sprintf("%d kept: it needs %s of the %s GiB limit, above the %s GiB the error band allows a raised micro batch (capacity / %.2f: the memory model has under-predicted measured %s peaks by up to %.0f%%, docs/validation.md)",
			bp.micro, gibs(tp.need(c, bp.micro, ckpt)), gibs(tp.limit), gibs(band), 1+underPrediction[tp.base.Kind], tp.base.Kind, underPrediction[tp.base.Kind]*100)
		return bp, ckpt, microWhy, ckptWhy
	}
	switch {
	case offOK && onOK && on.micro >= 2*off.micro:
		ckpt, maxFit, bp = true, onMax, on
		ckptWhy = fmt.Sprintf("on: micro batch %d with it against %d without (at least twice as large)", on.micro, off.micro)
	case offOK && onOK:
		ckptWhy = fmt.Sprintf("off: micro batch %d fits without it; with it %d, less than twice as large", off.micro, on.micro)
	case offOK && !ckptOK:
		ckptWhy = fmt.Sprintf("off kept: the configuration fits at micro batch %d without it", floor)
	case offOK:
		ckptWhy = fmt.Sprintf("off: micro batch %d fits without it", off.micro)
	default:
		ckpt, maxFit, bp = true, onMax, on
		ckptWhy = fmt.Sprintf("on: needed to fit; micro batch %d without it needs %s of %s GiB", floor, gibs(tp.need(c, floor, false)), gibs(tp.limit))
	}
	return bp, ckpt, tp.microReason(c, ckpt, maxFit, bp), ckptWhy
}

func (tp *trainPlanner) microReason(c trainCand, ckpt bool, maxFit int, bp batchPick) string {
	limit, banded := bandLimit(tp.limit, tp.target.Capacity, tp.base.Kind)
	at := fmt.Sprintf("%d needs %s of %s GiB", maxFit, gibs(tp.need(c, maxFit, ckpt)), gibs(limit))
	if banded {
		at += fmt.Sprintf(" (capacity / %.2f: the memory model has under-predicted measured %s peaks by up to %.0f%%, docs/validation.md)",
			1+underPrediction[tp.base.Kind], tp.base.Kind, underPrediction[tp.base.Kind]*100)
	}
	var next string
	switch {
	case maxFit < tp.maxMB:
		next = fmt.Sprintf("%d would need %s", maxFit+1, gibs(tp.need(c, maxFit+1, ckpt)))
	case tp.maxMB == planMaxMicroBatch:
		next = "the search stops at 1024 (DeepSpeed autotuner's ceiling)"
	case !tp.gbStated:
		next = fmt.Sprintf("the stated accumulation keeps %d samples per GPU per step (%d micro × %d accumulation)", tp.maxMB, tp.curMB, tp.ga)
	default:
		next = fmt.Sprintf("the global batch %d gives at most %d samples per GPU per step", tp.gb, tp.maxMB)
	}
	if tp.gb == 0 && bp.micro != tp.curMB {
		// Nothing fixes the global batch: it moves with the micro batch.
		next += fmt.Sprintf("; no gradient accumulation stated, so the global batch grows with the micro batch: %d × %d accumulation × %d data-parallel = %d (was %d)",
			bp.micro, tp.ga, tp.dp, bp.global, tp.curMB*tp.ga*tp.dp)
	}
	if bp.micro == maxFit {
		return fmt.Sprintf("largest that fits: %s; %s", at, next)
	}
	if bp.exact {
		return fmt.Sprintf("%d: the largest divisor of %d samples per GPU per step up to the largest fitting micro batch (%s; %s)",
			bp.micro, tp.gb/tp.dp, at, next)
	}
	return fmt.Sprintf("%d: comes closest to global batch %d (largest fitting %s; %s)", bp.micro, tp.gb, at, next)
}

// held is the larger micro batch a stated accumulation rules out: when
// micro × accumulation has no divisor above today's micro batch that fits,
// the plan keeps the micro batch, and a larger one that fits is reported
// as held, with the global batch it would train with.
func (tp *trainPlanner) held(c trainCand, ckpt bool, bp batchPick) (Choice, bool) {
	if tp.gbStated || !tp.gaStated || bp.micro != tp.curMB {
		return Choice{}, false
	}
	capped := tp.maxMB
	tp.maxMB = planMaxMicroBatch
	fit := tp.maxMicro(c, ckpt)
	tp.maxMB = capped
	if fit <= bp.micro {
		return Choice{}, false
	}
	limit, _ := bandLimit(tp.limit, tp.target.Capacity, tp.base.Kind)
	why := fmt.Sprintf("%d fits (%s of %s GiB) but would change the global batch from %d to %d: gradient_accumulation_steps %d keeps micro × accumulation at %d per data-parallel rank per step, and no larger micro batch up to %d divides it",
		fit, gibs(tp.need(c, fit, ckpt)), gibs(limit), tp.gb, fit*tp.ga*tp.dp, tp.ga, tp.gb/tp.dp, fit)
	return Choice{SettingMicroBatch, strconv.Itoa(tp.curMB), strconv.Itoa(fit), why}, true
}

func (tp *trainPlanner) accumReason(bp batchPick) string {
	prod := fmt.Sprintf("%d micro × %d accumulation × %d data-parallel = %d", bp.micro, bp.accum, tp.dp, bp.global)
	switch {
	case tp.gb == 0:
		return fmt.Sprintf("no global batch set, accumulation kept: %s", prod)
	case !tp.gbStated && bp.exact:
		return fmt.Sprintf("keeps the global batch the stated accumulation gives, %d × %d = %d samples per data-parallel rank per step: %s",
			tp.curMB, tp.ga, tp.gb/tp.dp, prod)
	case bp.exact:
		return fmt.Sprintf("keeps global batch %d: %s", tp.gb, prod)
	case tp.gb%tp.dp != 0:
		return fmt.Sprintf("global batch %d is not a multiple of %d data-parallel ranks, so it cannot hold exactly; closest: %s", tp.gb, tp.dp, prod)
	}
	return fmt.Sprintf("global batch %d cannot hold exactly; closest: %s", tp.gb, prod)
}

func (tp *trainPlanner) stageReason(c trainCand, fits bool, need int64, floor int, ckpt, ckptOK bool, rejected []string, headroom float64) string {
	var single string
	switch {
	case tp.dp == 1 && c.fsdp:
		single = "one data-parallel rank: FSDP shards over data-parallel ranks, so sharding alone saves nothing; only CPU offload frees GPU memory"
	case tp.dp == 1:
		single = "one data-parallel rank: ZeRO partitions over data-parallel ranks, so stages 1-3 alone save nothing; DeepSpeed offloads the optimizer only at stage 1 or higher (stage 2 is its ZeRO-Offload setup) and parameters only at stage 3"
	}
	at := fmt.Sprintf("micro batch %d", floor)
	if ckpt {
		at += " with checkpointing"
	}
	var lower string
	if len(rejected) > 0 {
		lower = "lower settings need " + strings.Join(rejected, ", ") + " GiB"
		if ckptOK {
			lower += " even with checkpointing"
		}
	}
	if !fits {
		return joinReasons(fmt.Sprintf("nothing fits: %s at micro batch 1 with checkpointing still needs %s of %s",
			c, gibs(need), limitPhrase(tp.limit, tp.target.Capacity, headroom)), single)
	}
	head := fmt.Sprintf("%s fits: %s of %s at %s", c, gibs(need), limitPhrase(tp.limit, tp.target.Capacity, headroom), at)
	if !c.offOpt && (c.stage == 0 || (c.fsdp && tp.base.Sharding == FSDP2 && c.stage == 2)) {
		return joinReasons(head, "higher stages would only add communication", single)
	}
	return joinReasons(head, lower, single)
}

func (tp *trainPlanner) offloadReason(c trainCand, param bool, need int64, e Estimate) string {
	host := ""
	if e.Host > 0 {
		host = fmt.Sprintf("host RAM ≈ %s GiB per node (DeepSpeed's estimator)", gibs(e.Host))
	}
	at := fmt.Sprintf("%s needs %s of %s GiB", c, gibs(need), gibs(tp.limit))
	if c.fsdp {
		if e.Host > 0 {
			host = fmt.Sprintf("host RAM ≈ %s GiB per node for the offloaded parameters, gradients and optimizer states", gibs(e.Host))
		}
		if !c.offParam {
			return fmt.Sprintf("not needed: %s with the model states on the GPU", at)
		}
		return joinReasons("no FSDP sharding strategy fits on the GPU; CPUOffload(offload_params=True) moves parameters and gradients to the CPU and runs the optimizer step there, with full sharding", at, host)
	}
	switch {
	case !param && !c.offOpt:
		return fmt.Sprintf("not needed: %s with the optimizer on the GPU", at)
	case !param:
		return joinReasons("no ZeRO stage fits with the optimizer on the GPU; optimizer states and the step move to the CPU (DeepSpeed accepts offload_optimizer at stages 1-3)", at, host)
	case !c.offParam:
		return fmt.Sprintf("not needed: %s with the parameters on the GPU", at)
	}
	return joinReasons("optimizer offload is not enough; parameters move to the CPU too, which DeepSpeed supports only at ZeRO-3", at, host)
}

func (tp *trainPlanner) verdict(p Plan, c trainCand, headroom float64) string {
	if p.Fits {
		return fmt.Sprintf("fits: %s of %s per GPU", gibs(p.Need), limitPhrase(p.Limit, tp.target.Capacity, headroom))
	}
	var help string
	switch tp.base.Kind {
	case Train:
		help = "more GPUs, a shorter sequence, LoRA or QLoRA"
	case LoRA:
		help = "more GPUs, a shorter sequence or QLoRA"
	default:
		help = "more GPUs or a shorter sequence"
	}
	return fmt.Sprintf("does not fit: even %s at micro batch 1 with checkpointing needs %s of %s per GPU; try %s",
		c, gibs(p.Need), limitPhrase(p.Limit, tp.target.Capacity, headroom), help)
}
