package tuner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func makePlan(t testing.TB, req PlanRequest) Plan {
	t.Helper()
	p, err := MakePlan(req)
	if err != nil {
		t.Fatalf("MakePlan: %v", err)
	}
	return p
}

// proposed maps each planned setting to its proposed value.
func proposed(p Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Choices {
		out[c.Setting] = c.To
	}
	return out
}

// trainNeed estimates w with a changed ZeRO setting, micro batch and
// checkpointing, independently of the planner.
func trainNeed(t testing.TB, m *Model, g *GPU, w Workload, stage int, opt, param Device, mb int, ckpt bool) int64 {
	t.Helper()
	w.ZeroStage, w.OffloadOptimizer, w.OffloadParam, w.MicroBatch, w.Checkpointing = stage, opt, param, mb, ckpt
	return estimate(t, m, g.Target(), w).PerGPU.Total
}

// serveNeed is the serving need as Plan.Need documents it: everything but
// the KV pool beyond one max_model_len request.
func serveNeed(t testing.TB, m *Model, tg Target, w Workload) int64 {
	t.Helper()
	e := estimate(t, m, tg, w)
	return e.PerGPU.Total - e.PerGPU.KVCache + e.Serve.OneRequestKVBytes
}

func TestMakePlanCases(t *testing.T) {
	c := testCatalog(t)
	llama8 := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	llama70 := mustModel(t, c, "meta-llama/Llama-3.1-70B")
	llama2 := mustModel(t, c, "meta-llama/Llama-2-7b-hf")
	h100, a100, a100s, v100 := mustGPU(t, c, "H100-80GB"), mustGPU(t, c, "A100-80GB"), mustGPU(t, c, "A100-40GB"), mustGPU(t, c, "V100-32GB")
	tests := []struct {
		name string
		req  PlanRequest
		want map[string]string // settings to check → proposed value
		// check verifies the decision against EstimateMemory directly.
		check func(t *testing.T, p Plan)
		// reasons lists substrings the named choices' reasons must contain.
		reasons map[string]string
	}{
		{
			name: "llama-3.1-8b full fine-tune on 8 h100: zero-1, the lowest stage that fits",
			req:  PlanRequest{Model: llama8, GPU: h100, GPUs: 8, Current: Workload{Kind: Train}},
			want: map[string]string{SettingPrecision: "bf16", SettingZeroStage: "1", SettingOffloadOptimizer: "none", SettingOffloadParam: "none"},
			check: func(t *testing.T, p Plan) {
				w := p.Workload
				if n := trainNeed(t, llama8, h100, w, 0, NoOffload, NoOffload, 1, true); n <= p.Limit {
					t.Errorf("ZeRO-0 at micro batch 1 with checkpointing needs %d ≤ limit %d: stage 1 is not the lowest", n, p.Limit)
				}
				if n := trainNeed(t, llama8, h100, w, 1, NoOffload, NoOffload, w.MicroBatch+1, w.Checkpointing); n <= p.Limit {
					t.Errorf("micro batch %d is not the largest: %d fits too", w.MicroBatch, w.MicroBatch+1)
				}
			},
			reasons: map[string]string{SettingZeroStage: "ZeRO-0 169."},
		},
		{
			name: "global batch 512 kept on 8 gpus: micro divides 64 per gpu",
			req: PlanRequest{Model: llama8, GPU: h100, GPUs: 8, GlobalBatch: 512, GradientAccumulation: 16,
				Current: Workload{Kind: Train, MicroBatch: 4, SeqLen: 4096}},
			check: func(t *testing.T, p Plan) {
				if got := p.Workload.MicroBatch * p.GradientAccumulation * 8; got != 512 || p.GlobalBatch != 512 {
					t.Errorf("micro %d × accumulation %d × 8 = %d (GlobalBatch %d), want 512", p.Workload.MicroBatch, p.GradientAccumulation, got, p.GlobalBatch)
				}
				if 64%p.Workload.MicroBatch != 0 {
					t.Errorf("micro batch %d does not divide 64", p.Workload.MicroBatch)
				}
			},
			reasons: map[string]string{SettingGradAccumulation: "keeps global batch 512"},
		},
		{
			name: "global batch 30 on 8 gpus cannot hold exactly and says so",
			req:  PlanRequest{Model: llama8, GPU: h100, GPUs: 8, GlobalBatch: 30, Current: Workload{Kind: LoRA}},
			check: func(t *testing.T, p Plan) {
				if p.GlobalBatch != 32 {
					t.Errorf("global batch %d, want 32 (the multiple of 8 closest to 30)", p.GlobalBatch)
				}
			},
			reasons: map[string]string{SettingGradAccumulation: "cannot hold exactly"},
		},
		{
			name: "llama-3.1-70b full fine-tune on 8 a100-80gb needs zero-3 and optimizer offload",
			req:  PlanRequest{Model: llama70, GPU: a100, GPUs: 8, Current: Workload{Kind: Train, ZeroStage: 2}},
			want: map[string]string{SettingZeroStage: "3", SettingOffloadOptimizer: "cpu", SettingOffloadParam: "none"},
			check: func(t *testing.T, p Plan) {
				if n := trainNeed(t, llama70, a100, p.Workload, 3, NoOffload, NoOffload, 1, true); n <= p.Limit {
					t.Errorf("ZeRO-3 without offload needs %d ≤ limit %d: offload was not needed", n, p.Limit)
				}
			},
		},
		{
			name: "llama-3.1-70b lora on 8 a100-80gb needs zero-3 to shard the frozen base",
			req:  PlanRequest{Model: llama70, GPU: a100, GPUs: 8, Current: Workload{Kind: LoRA}},
			want: map[string]string{SettingZeroStage: "3", SettingOffloadOptimizer: "none", SettingOffloadParam: "none"},
			check: func(t *testing.T, p Plan) {
				if n := trainNeed(t, llama70, a100, p.Workload, 2, NoOffload, NoOffload, 1, true); n <= p.Limit {
					t.Errorf("ZeRO-2 needs %d ≤ limit %d", n, p.Limit)
				}
			},
		},
		{
			name: "llama-2-7b full fine-tune on one a100-40gb: optimizer offload, still full fine-tuning",
			req:  PlanRequest{Model: llama2, GPU: a100s, GPUs: 1, Current: Workload{Kind: Train}},
			want: map[string]string{SettingZeroStage: "2", SettingOffloadOptimizer: "cpu", SettingOffloadParam: "none"},
			check: func(t *testing.T, p Plan) {
				if p.Workload.Kind != Train {
					t.Errorf("kind %s, want train", p.Workload.Kind)
				}
				if n := trainNeed(t, llama2, a100s, p.Workload, 0, NoOffload, NoOffload, 1, true); n <= p.Limit {
					t.Errorf("ZeRO-0 needs %d ≤ limit %d", n, p.Limit)
				}
			},
			reasons: map[string]string{SettingZeroStage: "optimizer only at stage 1 or higher", SettingOffloadOptimizer: "host RAM"},
		},
		{
			name:    "precision on a v100: bf16 becomes fp16",
			req:     PlanRequest{Model: llama2, GPU: v100, GPUs: 8, Current: Workload{Kind: LoRA, Precision: BF16}},
			want:    map[string]string{SettingPrecision: "fp16"},
			reasons: map[string]string{SettingPrecision: "compute capability 7.0"},
		},
		{
			name:    "precision: fp32 is never proposed",
			req:     PlanRequest{Model: llama2, GPU: a100, GPUs: 8, Current: Workload{Kind: Train, Precision: FP32}},
			want:    map[string]string{SettingPrecision: "bf16"},
			reasons: map[string]string{SettingPrecision: "never fp32"},
		},
		{
			name: "precision: fp8 kept on an h100",
			req:  PlanRequest{Model: llama8, GPU: h100, GPUs: 8, Current: Workload{Kind: Train, Precision: FP8}},
			want: map[string]string{SettingPrecision: "fp8"},
		},
		{
			name:    "precision: fp8 on an a100 falls back to bf16",
			req:     PlanRequest{Model: llama8, GPU: a100, GPUs: 8, Current: Workload{Kind: Train, Precision: FP8}},
			want:    map[string]string{SettingPrecision: "bf16"},
			reasons: map[string]string{SettingPrecision: "no fp8 tensor cores"},
		},
		{
			name: "checkpointing stays off when it would not double the micro batch",
			req: PlanRequest{Model: mustModel(t, c, "google-bert/bert-base-uncased"), GPU: mustGPU(t, c, "H200"), GPUs: 8,
				Current: Workload{Kind: Train, SeqLen: 512, MicroBatch: 1024}},
			want:    map[string]string{SettingCheckpointing: "off"},
			reasons: map[string]string{SettingCheckpointing: "less than twice as large", SettingMicroBatch: "largest that fits"},
		},
		{
			name: "checkpointing stays on under activation offloading, which torchtune runs only with it",
			req: PlanRequest{Model: mustModel(t, c, "google-bert/bert-base-uncased"), GPU: mustGPU(t, c, "H200"), GPUs: 8,
				Current: Workload{Kind: Train, SeqLen: 512, MicroBatch: 1024, Checkpointing: true, ActivationOffloading: true}},
			want:    map[string]string{SettingCheckpointing: "on"},
			reasons: map[string]string{SettingCheckpointing: "activation offloading"},
		},
		{
			name:    "serving: a configured 0.95 that leaves room for the context and graphs is kept",
			req:     PlanRequest{Model: llama8, GPU: a100, GPUs: 1, Current: Workload{Kind: Serve, GPUMemoryUtilization: 0.95}},
			want:    map[string]string{SettingGPUMemoryUtilization: "0.95"},
			reasons: map[string]string{SettingGPUMemoryUtilization: "the configured 0.95 leaves"},
		},
		{
			name:    "serving: a configured 0.98 that leaves less than the graphs' top figure is lowered",
			req:     PlanRequest{Model: llama8, GPU: h100, GPUs: 1, Current: Workload{Kind: Serve, GPUMemoryUtilization: 0.98}},
			want:    map[string]string{SettingGPUMemoryUtilization: "0.90"},
			reasons: map[string]string{SettingGPUMemoryUtilization: "the configured 0.98 would leave only"},
		},
		{
			name:    "serving: v0.21 profiles the graphs inside the budget, so a configured 0.98 is kept",
			req:     PlanRequest{Model: llama8, GPU: h100, GPUs: 1, Current: Workload{Kind: Serve, GPUMemoryUtilization: 0.98, VLLMVersion: "0.21.0"}},
			want:    map[string]string{SettingGPUMemoryUtilization: "0.98"},
			reasons: map[string]string{SettingGPUMemoryUtilization: "room for the CUDA context ("},
		},
		{
			name: "llama-3.1-70b serving on 8 h100: tp 4",
			req:  PlanRequest{Model: llama70, GPU: h100, GPUs: 8, Current: Workload{Kind: Serve, TensorParallel: 2}},
			want: map[string]string{SettingTensorParallel: "4", SettingGPUMemoryUtilization: "0.90", SettingMaxModelLen: "131072"},
			check: func(t *testing.T, p Plan) {
				w := p.Workload
				w.TensorParallel = 2
				if n := serveNeed(t, llama70, h100.Target(), w); n <= p.Limit {
					t.Errorf("TP 2 needs %d ≤ limit %d", n, p.Limit)
				}
				w.TensorParallel = 3
				if _, err := EstimateMemory(llama70, h100.Target(), w); err == nil || !strings.Contains(err.Error(), "does not divide 64") {
					t.Errorf("TP 3: err = %v, want a head-divisibility error", err)
				}
			},
			reasons: map[string]string{SettingTensorParallel: "TP 3 does not divide 64 attention heads"},
		},
		{
			name: "llama-3.1-8b on a mig-capable h100 takes a 3g.40gb slice",
			req: PlanRequest{Model: llama8, GPU: h100, GPUs: 1, MIGProfiles: true,
				Current: Workload{Kind: Serve, MaxModelLen: 32768}},
			want: map[string]string{SettingMIGProfile: "3g.40gb", SettingTensorParallel: "1", SettingMaxModelLen: "32768"},
			check: func(t *testing.T, p Plan) {
				p2, _ := h100.MIGProfile("2g.20gb")
				w := p.Workload
				w.MaxNumSeqs = 0
				if n, l := serveNeed(t, llama8, h100.MIGTarget(p2), w), planLimit(p2.MemoryBytes, 0.15); n <= l {
					t.Errorf("2g.20gb needs %d ≤ its limit %d", n, l)
				}
			},
		},
		{
			name: "serving a model that fits nowhere",
			req:  PlanRequest{Model: mustModel(t, c, "meta-llama/Llama-3.1-405B"), GPU: h100, GPUs: 8, Current: Workload{Kind: Serve}},
			want: map[string]string{SettingTensorParallel: "8", SettingMaxModelLen: "1024"},
			check: func(t *testing.T, p Plan) {
				if p.Fits || !strings.HasPrefix(p.Verdict, "does not fit") {
					t.Errorf("Fits %v, verdict %q; want a does-not-fit verdict", p.Fits, p.Verdict)
				}
			},
		},
		{
			name: "training that fits nowhere",
			req:  PlanRequest{Model: mustModel(t, c, "meta-llama/Llama-3.1-405B"), GPU: mustGPU(t, c, "T4"), GPUs: 1, Current: Workload{Kind: Train}},
			want: map[string]string{SettingZeroStage: "3", SettingOffloadOptimizer: "cpu", SettingOffloadParam: "cpu", SettingMicroBatch: "1", SettingCheckpointing: "on"},
			check: func(t *testing.T, p Plan) {
				if p.Fits || !strings.Contains(p.Verdict, "LoRA or QLoRA") || p.Need <= p.Limit {
					t.Errorf("Fits %v, need %d, limit %d, verdict %q", p.Fits, p.Need, p.Limit, p.Verdict)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := makePlan(t, tc.req)
			got := proposed(p)
			for k := range got {
				if _, ok := tc.want[k]; !ok {
					delete(got, k)
				}
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("proposed settings (-want +got):\n%s", diff)
				}
			}
			for setting, sub := range tc.reasons {
				ch, ok := p.Choice(setting)
				if !ok || !strings.Contains(ch.Reason, sub) {
					t.Errorf("%s reason %q, want it to contain %q", setting, ch.Reason, sub)
				}
			}
			if tc.check != nil {
				tc.check(t, p)
			}
			checkPlanInvariants(t, tc.req, p)
			if k := tc.req.Current.Kind; p.Fits && tc.req.GlobalBatch == 0 && (k == Train || k == LoRA || k == QLoRA) {
				checkCheckpointRule(t, tc.req, p)
			}
		})
	}
}

// A configuration that already is what the planner would propose comes back
// unchanged, choice by choice.
func TestMakePlanLeavesFittingConfigUntouched(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		name string
		req  PlanRequest
	}{
		{"lora 8b, micro batch pinned by the global batch", PlanRequest{
			Model: mustModel(t, c, "meta-llama/Llama-3.1-8B"), GPU: mustGPU(t, c, "H100-80GB"), GPUs: 8,
			GlobalBatch: 8, GradientAccumulation: 1,
			Current: Workload{Kind: LoRA, Precision: BF16, MicroBatch: 1}}},
		{"fp16 qlora on a t4, micro batch pinned", PlanRequest{
			Model: mustModel(t, c, "meta-llama/Llama-2-7b-hf"), GPU: mustGPU(t, c, "T4"), GPUs: 1,
			GlobalBatch: 1, GradientAccumulation: 1,
			Current: Workload{Kind: QLoRA, Precision: FP16, MicroBatch: 1, SeqLen: 512}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := makePlan(t, tc.req)
			for _, ch := range p.Choices {
				if ch.Changed() {
					t.Errorf("%s changed from %s to %s: %s", ch.Setting, ch.From, ch.To, ch.Reason)
				}
			}
			if !p.Fits {
				t.Errorf("does not fit: %s", p.Verdict)
			}
		})
	}
}

func TestMakePlanHeadroom(t *testing.T) {
	c := testCatalog(t)
	m, g := mustModel(t, c, "meta-llama/Llama-3.1-8B"), mustGPU(t, c, "H100-80GB")
	prev := 0
	for _, h := range []float64{0.50, 0.30, 0.20, 0.15, 0.10, 0.05} {
		p := makePlan(t, PlanRequest{Model: m, GPU: g, GPUs: 8, Current: Workload{Kind: Train}, Headroom: h})
		if want := int64(float64(g.UsableBytes) * (1 - h)); p.Limit != want || p.Headroom != h {
			t.Errorf("headroom %.2f: limit %d (headroom %.2f), want %d", h, p.Limit, p.Headroom, want)
		}
		if p.Workload.MicroBatch < prev {
			t.Errorf("headroom %.2f: micro batch %d, smaller than %d at a larger headroom", h, p.Workload.MicroBatch, prev)
		}
		prev = p.Workload.MicroBatch
	}
	if p := makePlan(t, PlanRequest{Model: m, GPU: g, GPUs: 8, Current: Workload{Kind: Train}}); p.Headroom != DefaultPlanHeadroom {
		t.Errorf("default headroom %.2f, want %.2f", p.Headroom, DefaultPlanHeadroom)
	}
}

func TestMakePlanErrors(t *testing.T) {
	c := testCatalog(t)
	m, g := mustModel(t, c, "meta-llama/Llama-3.1-8B"), mustGPU(t, c, "H100-80GB")
	ok := PlanRequest{Model: m, GPU: g, GPUs: 8, Current: Workload{Kind: Train}}
	tests := []struct {
		name string
		edit func(r *PlanRequest)
		want string
	}{
		{"no model", func(r *PlanRequest) { r.Model = nil }, "no model"},
		{"no gpu", func(r *PlanRequest) { r.GPU = nil }, "no gpu"},
		{"no gpus", func(r *PlanRequest) { r.GPUs = 0 }, "gpus must be at least 1"},
		{"nodes do not divide", func(r *PlanRequest) { r.Nodes = 3 }, "do not divide evenly over 3 nodes"},
		{"no kind", func(r *PlanRequest) { r.Current.Kind = "" }, "no kind"},
		{"headroom too small", func(r *PlanRequest) { r.Headroom = 0.04 }, "headroom 0.04 is outside 0.05-0.50"},
		{"headroom too large", func(r *PlanRequest) { r.Headroom = 0.6 }, "outside"},
		{"negative global batch", func(r *PlanRequest) { r.GlobalBatch = -1 }, "must not be negative"},
		{"bad precision", func(r *PlanRequest) { r.Current.Precision = "fp4" }, `unknown precision "fp4"`},
		{"tp does not divide the gpus", func(r *PlanRequest) { r.Current.TensorParallel = 16 }, "not a multiple"},
		{"encoder serving", func(r *PlanRequest) {
			r.Model = mustModel(t, c, "google-bert/bert-base-uncased")
			r.Current = Workload{Kind: Serve}
		}, "encoder-only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			_, err := MakePlan(r)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "make plan: ") {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := MakePlan(ok); err != nil {
		t.Errorf("valid request: %v", err)
	}
}

// TestMaxFittingMicroBatch holds the exported search to its definition:
// the answer fits under capacity × (1 − headroom), one more does not (or
// the answer is the ceiling), and 0 means micro batch 1 does not fit.
func TestMaxFittingMicroBatch(t *testing.T) {
	c := testCatalog(t)
	llama8 := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	llama70 := mustModel(t, c, "meta-llama/Llama-3.1-70B")
	h100 := mustGPU(t, c, "H100-80GB")
	tests := []struct {
		name     string
		m        *Model
		w        Workload
		headroom float64
		wantZero bool
	}{
		{name: "8b zero-3 seq 4096 fits a batch", m: llama8, w: Workload{Kind: Train, ZeroStage: 3, SeqLen: 4096, DataParallel: 8, Checkpointing: true}, headroom: 0.1},
		{name: "8b lora seq 512 reaches a larger batch", m: llama8, w: Workload{Kind: LoRA, SeqLen: 512, Checkpointing: true}, headroom: 0.15},
		{name: "70b full fine-tune on one gpu fits nothing", m: llama70, w: Workload{Kind: Train, SeqLen: 2048}, headroom: 0.1, wantZero: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := h100.Target()
			limit := int64(float64(tg.Capacity) * (1 - tc.headroom))
			got := MaxFittingMicroBatch(tc.m, tg, tc.w, tc.headroom)
			need := func(mb int) int64 {
				w := tc.w
				w.MicroBatch = mb
				return estimate(t, tc.m, tg, w).PerGPU.Total
			}
			if tc.wantZero {
				if got != 0 {
					t.Fatalf("got %d, want 0: micro batch 1 needs %d > limit %d", got, need(1), limit)
				}
				return
			}
			if got < 1 {
				t.Fatalf("got %d, want ≥ 1 (micro batch 1 needs %d of limit %d)", got, need(1), limit)
			}
			if n := need(got); n > limit {
				t.Errorf("micro batch %d needs %d > limit %d", got, n, limit)
			}
			if got < planMaxMicroBatch {
				if n := need(got + 1); n <= limit {
					t.Errorf("micro batch %d is not the largest: %d needs %d ≤ limit %d", got, got+1, n, limit)
				}
			}
		})
	}
}

// TestMakePlanKeepsMicroBatchBelowErrorBand: a QLoRA run that fits at
// micro batch 1 within the plan's limit (capacity less 10% headroom) but above the
// error band (capacity / 1.14) keeps micro batch 1; the band bounds how
// far a micro batch is raised, and a plan never proposes 0.
func TestMakePlanKeepsMicroBatchBelowErrorBand(t *testing.T) {
	c := testCatalog(t)
	m := mustModel(t, c, "meta-llama/Llama-3.1-8B")
	g := *mustGPU(t, c, "H100-80GB")
	w := Workload{Kind: QLoRA, MicroBatch: 1, SeqLen: 2048}
	req := PlanRequest{Model: m, GPU: &g, GPUs: 1, Current: w, GradientAccumulation: 1, GlobalBatch: 1, Headroom: 0.1}
	// The plan's own need at micro batch 1, then a capacity it is 89% of:
	// inside the 90% limit (10% headroom), outside the band's 1/1.14 ≈ 87.7%.
	need := makePlan(t, req).Need
	g.UsableBytes = int64(float64(need) / 0.89)
	p := makePlan(t, req)
	if got := proposed(p)[SettingMicroBatch]; got != "1" {
		t.Errorf("micro batch → %s, want 1 kept", got)
	}
	for _, ch := range p.Choices {
		if ch.Setting == SettingMicroBatch && !strings.Contains(ch.Reason, "error band") {
			t.Errorf("micro batch reason %q does not name the error band", ch.Reason)
		}
	}
	if !p.Fits {
		t.Errorf("plan does not fit: need %d, limit %d", p.Need, p.Limit)
	}
}
