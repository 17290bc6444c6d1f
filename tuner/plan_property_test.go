package tuner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// planOrder is the documented order of a plan's choices for a kind.
func planOrder(kind WorkloadKind, mig bool) []string {
	var out []string
	switch kind {
	case Train, LoRA, QLoRA:
		return []string{SettingPrecision, SettingZeroStage, SettingOffloadOptimizer, SettingOffloadParam,
			SettingMicroBatch, SettingGradAccumulation, SettingCheckpointing}
	case Serve:
		out = []string{SettingPrecision, SettingTensorParallel, SettingGPUMemoryUtilization, SettingMaxModelLen, SettingMaxNumSeqs}
	case Inference:
		out = []string{SettingPrecision, SettingMicroBatch}
	}
	if mig {
		out = append(out, SettingMIGProfile)
	}
	return out
}

// checkPlanInvariants checks what every plan must satisfy, recomputing the
// estimate from the plan's own workload.
func checkPlanInvariants(t testing.TB, req PlanRequest, p Plan) {
	t.Helper()
	name := fmt.Sprintf("%s/%s×%d/%s", req.Model.ID, req.GPU.Name, req.GPUs, req.Current.Kind)
	fail := func(format string, args ...any) { t.Errorf(name+": "+format, args...) }

	var order []string
	for _, c := range p.Choices {
		order = append(order, c.Setting)
		if !strings.ContainsAny(c.Reason, "0123456789") {
			fail("%s reason %q carries no number", c.Setting, c.Reason)
		}
	}
	if diff := cmp.Diff(planOrder(req.Current.Kind, req.MIGProfiles), order); diff != "" {
		fail("choice order (-want +got):\n%s", diff)
	}
	tg := req.GPU.Target()
	if p.MIG != nil {
		if !req.MIGProfiles {
			fail("MIG slice %s proposed without MIGProfiles", p.MIG.Name)
		}
		tg = req.GPU.MIGTarget(p.MIG)
	}
	h := req.Headroom
	if h == 0 {
		h = DefaultPlanHeadroom
	}
	if want := int64(float64(tg.Capacity) * (1 - h)); p.Limit != want {
		fail("limit %d, want capacity × (1 − %.2f) = %d", p.Limit, h, want)
	}
	e, err := EstimateMemory(req.Model, tg, p.Workload)
	if err != nil {
		fail("the proposed workload does not estimate: %v", err)
		return
	}
	if diff := cmp.Diff(e, p.Estimate); diff != "" {
		fail("plan estimate differs from EstimateMemory of its workload (-want +got):\n%s", diff)
	}
	w := p.Workload
	if w.Kind != req.Current.Kind {
		fail("kind %s, want %s kept", w.Kind, req.Current.Kind)
	}
	switch {
	case w.Precision == FP32:
		fail("fp32 compute proposed")
	case (w.Precision == BF16 || w.Precision == PureBF16) && !req.GPU.SupportsBF16():
		fail("bf16 proposed on %s", req.GPU.Name)
	case w.Precision == FP8 && !req.GPU.SupportsFP8():
		fail("fp8 proposed on %s", req.GPU.Name)
	}
	if p.Fits != strings.HasPrefix(p.Verdict, "fits: ") || !p.Fits != strings.HasPrefix(p.Verdict, "does not fit: ") {
		fail("Fits %v with verdict %q", p.Fits, p.Verdict)
	}
	switch w.Kind {
	case Train, LoRA, QLoRA:
		if p.Need != e.PerGPU.Total {
			fail("need %d, want the estimate's total %d", p.Need, e.PerGPU.Total)
		}
		if p.Fits != (e.PerGPU.Total <= p.Limit) {
			fail("Fits %v but total %d against limit %d", p.Fits, e.PerGPU.Total, p.Limit)
		}
		dp := w.DataParallel
		if dp*max(w.TensorParallel, 1)*max(w.PipelineParallel, 1) != req.GPUs {
			fail("data parallel %d does not use the %d GPUs", dp, req.GPUs)
		}
		if w.ZeroStage == 3 && dp == 1 && w.OffloadParam == NoOffload {
			fail("ZeRO-3 on one data-parallel rank without offload_param")
		}
		if w.OffloadParam != NoOffload && (w.ZeroStage != 3 || w.OffloadOptimizer == NoOffload) {
			fail("offload_param at stage %d with offload_optimizer %s", w.ZeroStage, w.OffloadOptimizer)
		}
		if p.GlobalBatch != w.MicroBatch*p.GradientAccumulation*dp {
			fail("global batch %d ≠ %d × %d × %d", p.GlobalBatch, w.MicroBatch, p.GradientAccumulation, dp)
		}
		if g := req.GlobalBatch; g > 0 && g%dp == 0 && p.GlobalBatch != g {
			fail("global batch %d, want %d kept", p.GlobalBatch, g)
		}
		// A stated accumulation fixes the global batch at today's micro ×
		// accumulation × dp; a plan keeps it.
		if ga := req.GradientAccumulation; req.GlobalBatch == 0 && ga > 0 {
			if g := max(req.Current.MicroBatch, 1) * ga * dp; p.GlobalBatch != g {
				fail("global batch %d, want %d kept (micro %d × stated accumulation %d × %d)", p.GlobalBatch, g, max(req.Current.MicroBatch, 1), ga, dp)
			}
		}
	case Serve:
		s := e.Serve
		if n := serveNeed(t, req.Model, tg, w); p.Need != n {
			fail("need %d, want %d", p.Need, n)
		}
		if p.Fits && (p.Need > p.Limit || !e.Fits || s.GraphHeadroom < 0) {
			fail("fits with need %d, limit %d, vLLM start-up %v, graph headroom %d", p.Need, p.Limit, e.Fits, s.GraphHeadroom)
		}
		if req.Model.Heads%w.TensorParallel != 0 || w.TensorParallel*max(w.PipelineParallel, 1) > req.GPUs {
			fail("tensor parallel %d on %d GPUs with %d heads", w.TensorParallel, req.GPUs, req.Model.Heads)
		}
		if p.MIG != nil && w.TensorParallel != 1 {
			fail("TP %d on a MIG slice", w.TensorParallel)
		}
		// Never above the planner's value, unless it keeps the configured one.
		if u := w.GPUMemoryUtilization; u <= 0 || u >= 1 || (u > planUtilization && u != req.Current.GPUMemoryUtilization) {
			fail("gpu_memory_utilization %.2f", w.GPUMemoryUtilization)
		}
		cfg := req.Current.MaxModelLen
		if cfg == 0 {
			cfg = req.Model.MaxPositions
		}
		if w.MaxModelLen > req.Model.MaxPositions || (w.MaxModelLen != cfg && w.MaxModelLen%1024 != 0) {
			fail("max_model_len %d (configured %d, max positions %d)", w.MaxModelLen, cfg, req.Model.MaxPositions)
		}
		if _, d := vllmBatchDefaults(tg); w.MaxNumSeqs < 1 || w.MaxNumSeqs > d {
			fail("max_num_seqs %d outside 1-%d", w.MaxNumSeqs, d)
		}
	case Inference:
		if p.Need != e.PerGPU.Total || p.Fits != (p.Need <= p.Limit) {
			fail("need %d, total %d, limit %d, fits %v", p.Need, e.PerGPU.Total, p.Limit, p.Fits)
		}
	}
}

// trainOrder is the documented candidate order of ZeRO settings.
func trainOrder(dp int) [][3]int { // stage, offload optimizer, offload param
	if dp == 1 {
		return [][3]int{{0, 0, 0}, {2, 1, 0}, {3, 1, 1}}
	}
	return [][3]int{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {2, 1, 0}, {3, 1, 0}, {3, 1, 1}}
}

// checkLowestSetting checks, for a request whose current micro batch is 1,
// that every ZeRO setting before the proposed one fails at micro batch 1:
// without checkpointing, and with it unless the current configuration
// already fits without it.
func checkLowestSetting(t testing.TB, req PlanRequest, p Plan) {
	t.Helper()
	w := p.Workload
	cur := req.Current
	cur.DataParallel = w.DataParallel
	keepOff := estimate(t, req.Model, req.GPU.Target(), cur).PerGPU.Total <= p.Limit && !cur.Checkpointing
	dev := func(b int) Device {
		if b == 1 {
			return CPU
		}
		return NoOffload
	}
	for _, s := range trainOrder(w.DataParallel) {
		if s[0] == w.ZeroStage && dev(s[1]) == w.OffloadOptimizer && dev(s[2]) == w.OffloadParam {
			return
		}
		off := trainNeed(t, req.Model, req.GPU, w, s[0], dev(s[1]), dev(s[2]), 1, false)
		on := trainNeed(t, req.Model, req.GPU, w, s[0], dev(s[1]), dev(s[2]), 1, true)
		if off <= p.Limit || (!keepOff && on <= p.Limit) {
			t.Errorf("%s on %d×%s: ZeRO-%d (offload %v/%v) fits at micro batch 1 (%d / %d ≤ %d) but the plan proposes %s",
				req.Model.ID, req.GPUs, req.GPU.Name, s[0], s[1], s[2], off, on, p.Limit, planZero(w))
		}
	}
	if p.Fits {
		t.Errorf("%s on %d×%s: proposed %s is not a candidate", req.Model.ID, req.GPUs, req.GPU.Name, planZero(w))
	}
}

func planZero(w Workload) string {
	return fmt.Sprintf("ZeRO-%d offload %s/%s", w.ZeroStage, w.OffloadOptimizer, w.OffloadParam)
}

// checkCheckpointRule checks, for a request without a global batch, that
// checkpointing is on only when the micro batch without it would be at most
// half as large, and off only when it would not double the micro batch (or
// may not be added).
func checkCheckpointRule(t testing.TB, req PlanRequest, p Plan) {
	t.Helper()
	w := p.Workload
	fits := func(mb int, ckpt bool) bool {
		return trainNeed(t, req.Model, req.GPU, w, w.ZeroStage, w.OffloadOptimizer, w.OffloadParam, mb, ckpt) <= p.Limit
	}
	cur := req.Current
	cur.DataParallel = w.DataParallel
	keepOff := estimate(t, req.Model, req.GPU.Target(), cur).PerGPU.Total <= p.Limit && !cur.Checkpointing
	switch {
	case w.Checkpointing && fits(w.MicroBatch/2+1, false) && !(cur.ActivationOffloading && cur.Checkpointing):
		// (offloading keeps checkpointing on: torchtune refuses it without)
		t.Errorf("%s on %d×%s %s: checkpointing at micro batch %d, but %d fits without it",
			req.Model.ID, req.GPUs, req.GPU.Name, cur.Kind, w.MicroBatch, w.MicroBatch/2+1)
	case !w.Checkpointing && !keepOff && 2*w.MicroBatch <= planMaxMicroBatch && fits(2*w.MicroBatch, true):
		t.Errorf("%s on %d×%s %s: no checkpointing at micro batch %d, but %d fits with it",
			req.Model.ID, req.GPUs, req.GPU.Name, cur.Kind, w.MicroBatch, 2*w.MicroBatch)
	}
}

// checkServeMinimal checks that no smaller tensor-parallel degree fits the
// proposed max_model_len, that a reduced max_model_len is the largest
// multiple of 1024 that fits, and that no smaller MIG slice fits.
func checkServeMinimal(t testing.TB, req PlanRequest, p Plan) {
	t.Helper()
	w := p.Workload
	name := fmt.Sprintf("%s on %d×%s", req.Model.ID, req.GPUs, req.GPU.Name)
	tg := req.GPU.Target()
	if p.MIG != nil {
		tg = req.GPU.MIGTarget(p.MIG)
	}
	cfg := req.Current.MaxModelLen
	if cfg == 0 {
		cfg = req.Model.MaxPositions
	}
	// A reduced max_model_len must also leave the KV cache the validated
	// over-prediction margin (kvHolds); the configured one is judged as is.
	fitsOn := func(tg Target, v Workload) bool {
		v.MaxNumSeqs = 0 // fits are judged at vLLM's default
		e, err := EstimateMemory(req.Model, tg, v)
		return err == nil && e.Fits && e.Serve.GraphHeadroom >= 0 &&
			serveNeed(t, req.Model, tg, v) <= planLimit(tg.Capacity, DefaultPlanHeadroom) &&
			(v.MaxModelLen == cfg || kvHolds(e.Serve))
	}
	for tp := 1; tp < w.TensorParallel; tp++ {
		v := w
		v.TensorParallel = tp
		if kv := req.Model.KVHeads; req.Model.Heads%tp == 0 && (kv%tp == 0 || tp%kv == 0) && fitsOn(tg, v) {
			t.Errorf("%s: TP %d fits max_model_len %d, the plan proposes TP %d", name, tp, w.MaxModelLen, w.TensorParallel)
		}
	}
	if v := w; w.MaxModelLen != cfg && w.MaxModelLen+1024 <= req.Model.MaxPositions {
		v.MaxModelLen += 1024
		if fitsOn(tg, v) {
			t.Errorf("%s: max_model_len %d fits too, the plan proposes %d", name, v.MaxModelLen, w.MaxModelLen)
		}
	}
	if p.MIG != nil {
		for _, prof := range req.GPU.MIGProfiles() {
			if prof.MemoryBytes >= p.MIG.MemoryBytes {
				continue
			}
			for _, util := range []float64{0.9, w.GPUMemoryUtilization} {
				v := w
				v.GPUMemoryUtilization = util
				if fitsOn(req.GPU.MIGTarget(prof), v) {
					t.Errorf("%s: smaller MIG profile %s fits at utilization %.2f, the plan proposes %s", name, prof.Name, util, p.MIG.Name)
				}
			}
		}
	}
}

// checkIdempotent re-plans the plan's own proposal: nothing may change.
func checkIdempotent(t testing.TB, req PlanRequest, p Plan) {
	t.Helper()
	again := req
	again.Current, again.GradientAccumulation, again.CurrentMIG = p.Workload, p.GradientAccumulation, p.MIG
	q, err := MakePlan(again)
	if err != nil {
		t.Errorf("%s on %d×%s: re-plan: %v", req.Model.ID, req.GPUs, req.GPU.Name, err)
		return
	}
	for _, c := range q.Choices {
		if c.Changed() {
			t.Errorf("%s on %d×%s %s: re-planning the proposal changes %s from %s to %s (%s)",
				req.Model.ID, req.GPUs, req.GPU.Name, req.Current.Kind, c.Setting, c.From, c.To, c.Reason)
		}
	}
	if diff := cmp.Diff(p.Workload, q.Workload); diff != "" || p.MIG != q.MIG {
		t.Errorf("%s on %d×%s: re-planned workload (-first +second):\n%s", req.Model.ID, req.GPUs, req.GPU.Name, diff)
	}
}

// planGridGPUs covers every capacity class, bf16-less (V100, T4), fp8
// (H100), MIG (A100, H100) and AMD parts.
var planGridGPUs = []string{"T4", "V100-16GB", "A10", "A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200", "MI300X"}

// Over catalog models × GPUs × GPU counts × workloads: every plan satisfies
// the invariants; a plan that fits stays under capacity minus headroom and
// is a fixed point; ZeRO settings below the proposal do not fit.
func TestPlanPropertiesGrid(t *testing.T) {
	c := testCatalog(t)
	counts := []struct{ gpus, nodes int }{{1, 0}, {8, 0}, {16, 2}}
	kinds := []WorkloadKind{Train, LoRA, QLoRA, Serve, Inference}
	fits, total := 0, 0
	for _, m := range c.Models() {
		for _, gname := range planGridGPUs {
			g := mustGPU(t, c, gname)
			for _, n := range counts {
				for _, k := range kinds {
					if k == Inference && n.gpus > 1 {
						continue
					}
					req := PlanRequest{Model: m, GPU: g, GPUs: n.gpus, Nodes: n.nodes, Current: Workload{Kind: k},
						MIGProfiles: (k == Serve || k == Inference) && n.gpus == 1}
					p, err := MakePlan(req)
					if m.Encoder && k == Serve {
						if err == nil {
							t.Errorf("%s: serving an encoder-only model planned without error", m.ID)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s on %d×%s %s: %v", m.ID, n.gpus, gname, k, err)
						continue
					}
					total++
					checkPlanInvariants(t, req, p)
					switch k {
					case Train, LoRA, QLoRA:
						checkLowestSetting(t, req, p)
						if p.Fits {
							checkCheckpointRule(t, req, p)
						}
					case Serve:
						if p.Fits {
							checkServeMinimal(t, req, p)
						}
					}
					if p.Fits {
						fits++
						checkIdempotent(t, req, p)
					}
					if t.Failed() {
						return
					}
				}
			}
		}
	}
	// The grid must exercise both outcomes.
	if fits == 0 || fits == total {
		t.Errorf("%d of %d plans fit; the grid should hold both outcomes", fits, total)
	}
}

// A configuration that already fits is never made worse: no higher ZeRO
// stage, no offload, no smaller micro batch, no checkpointing added, and a
// set global batch kept.
func TestPlanNeverMakesAFittingConfigWorse(t *testing.T) {
	c := testCatalog(t)
	models := []string{"meta-llama/Llama-3.2-1B", "Qwen/Qwen2.5-7B", "meta-llama/Llama-3.1-8B", "google/gemma-2-9b",
		"openai-community/gpt2-xl", "Qwen/Qwen2.5-14B", "mistralai/Mixtral-8x7B-v0.1"}
	gpus := []string{"T4", "V100-32GB", "A10", "A100-40GB", "H100-80GB"}
	checked := 0
	for _, id := range models {
		m := mustModel(t, c, id)
		for _, gname := range gpus {
			g := mustGPU(t, c, gname)
			prec := BF16
			if !g.SupportsBF16() {
				prec = FP16
			}
			for _, n := range []int{1, 8} {
				for _, k := range []WorkloadKind{Train, LoRA, QLoRA} {
					for _, stage := range []int{0, 2, 3} {
						for _, mb := range []int{1, 4} {
							for _, ckpt := range []bool{false, true} {
								for _, gb := range []int{0, mb * 2 * n} {
									cur := Workload{Kind: k, Precision: prec, ZeroStage: stage, MicroBatch: mb, Checkpointing: ckpt, DataParallel: n}
									if estimate(t, m, g.Target(), cur).PerGPU.Total > planLimit(g.UsableBytes, DefaultPlanHeadroom) {
										continue
									}
									req := PlanRequest{Model: m, GPU: g, GPUs: n, Current: cur, GlobalBatch: gb, GradientAccumulation: 2}
									p := makePlan(t, req)
									checkPlanInvariants(t, req, p)
									checked++
									w := p.Workload
									var worse []string
									if w.ZeroStage > stage {
										worse = append(worse, fmt.Sprintf("stage %d > %d", w.ZeroStage, stage))
									}
									if w.OffloadOptimizer != NoOffload || w.OffloadParam != NoOffload {
										worse = append(worse, "offload added")
									}
									if w.MicroBatch < mb {
										worse = append(worse, fmt.Sprintf("micro batch %d < %d", w.MicroBatch, mb))
									}
									if w.Checkpointing && !ckpt {
										worse = append(worse, "checkpointing added")
									}
									if gb > 0 && p.GlobalBatch != gb {
										worse = append(worse, fmt.Sprintf("global batch %d ≠ %d", p.GlobalBatch, gb))
									}
									if !p.Fits {
										worse = append(worse, "no longer fits")
									}
									if len(worse) > 0 {
										t.Fatalf("%s on %d×%s, current %+v (global %d): %s", id, n, gname, cur, gb, strings.Join(worse, ", "))
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d fitting configurations checked", checked)
	}
}

// The same request yields byte-identical output, also across separately
// loaded catalogs.
func TestPlanIsDeterministic(t *testing.T) {
	render := func() []byte {
		c := testCatalog(t)
		var buf bytes.Buffer
		for _, req := range []PlanRequest{
			{Model: mustModel(t, c, "meta-llama/Llama-3.1-70B"), GPU: mustGPU(t, c, "A100-80GB"), GPUs: 8, Current: Workload{Kind: Train}, GlobalBatch: 30},
			{Model: mustModel(t, c, "meta-llama/Llama-3.1-8B"), GPU: mustGPU(t, c, "H100-80GB"), GPUs: 1, Current: Workload{Kind: Serve}, MIGProfiles: true},
			{Model: mustModel(t, c, "deepseek-ai/DeepSeek-V3"), GPU: mustGPU(t, c, "H200"), GPUs: 16, Nodes: 2, Current: Workload{Kind: Serve}},
		} {
			if err := RenderPlanText(&buf, makePlan(t, req)); err != nil {
				t.Fatal(err)
			}
		}
		return buf.Bytes()
	}
	a, b := render(), render()
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n%s", cmp.Diff(string(a), string(b)))
	}
}

// BenchmarkMakePlan measures whole plans; the target is under 5 ms each.
func BenchmarkMakePlan(b *testing.B) {
	c := MustLoadCatalog()
	m8, _ := c.Model("meta-llama/Llama-3.1-8B")
	m70, _ := c.Model("meta-llama/Llama-3.1-70B")
	m7, _ := c.Model("meta-llama/Llama-2-7b-hf")
	h100, _ := c.GPU("H100-80GB")
	a100, _ := c.GPU("A100-80GB")
	a40, _ := c.GPU("A100-40GB")
	cases := []struct {
		name string
		req  PlanRequest
	}{
		{"train-8b-8xh100", PlanRequest{Model: m8, GPU: h100, GPUs: 8, Current: Workload{Kind: Train}, GlobalBatch: 512}},
		{"train-70b-8xa100-offload", PlanRequest{Model: m70, GPU: a100, GPUs: 8, Current: Workload{Kind: Train}}},
		{"train-7b-1xa100-40gb", PlanRequest{Model: m7, GPU: a40, GPUs: 1, Current: Workload{Kind: Train}}},
		{"serve-70b-8xh100", PlanRequest{Model: m70, GPU: h100, GPUs: 8, Current: Workload{Kind: Serve}}},
		{"serve-8b-mig", PlanRequest{Model: m8, GPU: h100, GPUs: 1, Current: Workload{Kind: Serve}, MIGProfiles: true}},
	}
	// grid: every catalog model on every catalog GPU, 1 and 8 GPUs, every
	// kind; ns/plan is the mean over the grid.
	b.Run("grid", func(b *testing.B) {
		var reqs []PlanRequest
		for _, m := range c.Models() {
			for _, g := range c.GPUs() {
				for _, n := range []int{1, 8} {
					for _, k := range []WorkloadKind{Train, LoRA, QLoRA, Serve, Inference} {
						reqs = append(reqs, PlanRequest{Model: m, GPU: g, GPUs: n, Current: Workload{Kind: k}, MIGProfiles: n == 1})
					}
				}
			}
		}
		for b.Loop() {
			for _, r := range reqs {
				_, _ = MakePlan(r) // encoder-only serving is an error by design
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(reqs)), "ns/plan")
	})
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := MakePlan(tc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
