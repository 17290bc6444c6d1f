package tuner

import (
	"fmt"
	"math"
	"strconv"
)

// planInference plans plain inference (Hugging Face generate): the
// precision, the batch and optionally a MIG slice. The batch is the
// application's concurrency, so it is kept when it fits and lowered to the
// largest that fits otherwise; tensor and pipeline degrees are kept.
func planInference(req PlanRequest, headroom float64) (Plan, error) {
	m, g, cur := req.Model, req.GPU, req.Current
	curPrec := cur.Precision
	if curPrec == "" {
		curPrec = effectiveServePrecision(m, cur)
	}
	prec, precWhy := choosePrecision(g, curPrec, false)
	base := cur
	base.Precision = prec
	curMB := max(cur.MicroBatch, 1)

	var firstErr error
	need := func(t Target, mb int) int64 {
		w := base
		w.MicroBatch = mb
		e, err := EstimateMemory(m, t, w)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return math.MaxInt64
		}
		return e.PerGPU.Total
	}
	full := g.Target()
	limit := planLimit(full.Capacity, headroom)
	mb := curMB
	var microWhy string
	if n := need(full, curMB); n <= limit {
		microWhy = fmt.Sprintf("%d kept: needs %s of %s", curMB, gibs(n), limitPhrase(limit, full.Capacity, headroom))
	} else {
		lo, hi := 0, curMB // lo fits (0 trivially), hi does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if need(full, mid) <= limit {
				lo = mid
			} else {
				hi = mid
			}
		}
		mb = max(lo, 1)
		microWhy = fmt.Sprintf("%d needs %s of %s", curMB, gibs(n), limitPhrase(limit, full.Capacity, headroom))
		if lo > 0 {
			microWhy = fmt.Sprintf("%d: the largest that fits (%s GiB); %s", lo, gibs(need(full, lo)), microWhy)
		} else {
			microWhy = "1: nothing fits; " + microWhy
		}
	}
	if firstErr != nil {
		return Plan{}, firstErr
	}
	target := full
	var p Plan
	var migWhy string
	if req.MIGProfiles {
		switch {
		case !g.MIGCapable():
			migWhy = fmt.Sprintf("%s has no MIG profiles: whole GPU", g.Name)
		case max(cur.TensorParallel, 1)*max(cur.PipelineParallel, 1) > 1:
			migWhy = fmt.Sprintf("the job uses %d whole GPUs: no MIG slice", max(cur.TensorParallel, 1)*max(cur.PipelineParallel, 1))
		case need(full, mb) > limit:
			migWhy = fmt.Sprintf("the job does not fit one whole GPU (%s of %s GiB): no MIG slice", gibs(need(full, mb)), gibs(limit))
		default:
			var tried []string
			for _, prof := range migOrder(g) {
				t := g.MIGTarget(prof)
				l := planLimit(t.Capacity, headroom)
				if n := need(t, mb); n <= l {
					p.MIG, target = prof, t
					migWhy = joinReasons(fmt.Sprintf("%s: %s of %s at batch %d", prof.Name, gibs(n), limitPhrase(l, t.Capacity, headroom), mb),
						smallerPhrase(tried), fmt.Sprintf("up to %d per GPU", prof.MaxCount))
					break
				} else {
					tried = appendTried(tried, prof, n, l)
				}
			}
			if p.MIG == nil {
				migWhy = joinReasons("no MIG slice smaller than the whole GPU fits: whole GPU", smallerPhrase(tried))
			}
		}
	}
	w := base
	w.MicroBatch = mb
	est, err := EstimateMemory(m, target, w)
	if err != nil {
		return Plan{}, err
	}
	p.Workload, p.Estimate = w, est
	p.Limit, p.Need = planLimit(target.Capacity, headroom), est.PerGPU.Total
	p.Fits = p.Need <= p.Limit
	p.Choices = []Choice{
		{SettingPrecision, string(curPrec), string(prec), precWhy},
		{SettingMicroBatch, strconv.Itoa(curMB), strconv.Itoa(mb), microWhy},
	}
	if req.MIGProfiles {
		to := "none"
		if p.MIG != nil {
			to = p.MIG.Name
		}
		p.Choices = append(p.Choices, Choice{SettingMIGProfile, req.currentMIGName(), to, migWhy})
	}
	if p.Fits {
		p.Verdict = fmt.Sprintf("fits: %s of %s per GPU", gibs(p.Need), limitPhrase(p.Limit, target.Capacity, headroom))
	} else {
		p.Verdict = fmt.Sprintf("does not fit: batch 1 needs %s of %s per GPU; try more GPUs (tensor parallelism), a quantized checkpoint or shorter sequences",
			gibs(p.Need), limitPhrase(p.Limit, target.Capacity, headroom))
	}
	return p, nil
}
