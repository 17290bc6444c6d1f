package validation

import (
	"testing"

	"github.com/gpulint/gpulint/tuner"
)

// TestMaxSeqLenNotAbovePublished holds the tuner's "longest sequence that
// fits" (tuner.MaxFittingSeqLen, with the band margin it keeps) to the
// published maxima of cases_maxlen.go: at every headroom the tuner accepts,
// the proposal must lie at or below the longest length the source ran and
// be at least 1 where the source ran anything. Without PEFT's fp32 upcast
// (Workload.KbitFP32) the Unsloth rows proposed 1,600 (12 GB, published 932)
// up to 30,336 tokens (80 GB, published 28,454).
func TestMaxSeqLenNotAbovePublished(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name, model, gpu string
		capacity         int64
		w                tuner.Workload
		published        int // longest length that ran
	}
	var rows []row
	for _, r := range unslothLlama8B {
		rows = append(rows, row{name: "unsloth llama-3.1-8b " + tuner.Thousands(int64(r.vramGB)) + " GB", model: "meta-llama/Llama-3.1-8B-Instruct",
			gpu: "H100-80GB", capacity: int64(r.vramGB) * tuner.GiB, w: unslothHF(0), published: r.maxLen})
	}
	// LLaMA-Factory's table (32,768 ran, 65,536 did not) bounds nothing
	// here: Llama 2 has 4,096 positions, the tuner's ceiling, and the wiki
	// ran past it only with RoPE scaling.
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			m, ok := c.Model(r.model)
			g, ok2 := c.GPU(r.gpu)
			if !ok || !ok2 {
				t.Fatalf("model %s or GPU %s not in the catalog", r.model, r.gpu)
			}
			tg := g.Target()
			if r.capacity > 0 {
				tg.Capacity = r.capacity
			}
			for _, h := range []float64{tuner.MinPlanHeadroom, tuner.DefaultPlanHeadroom} {
				got := tuner.MaxFittingSeqLen(m, tg, r.w, h)
				t.Logf("headroom %.2f: longest fitting sequence %d (published %d)", h, got, r.published)
				if got > r.published || got < 1 {
					t.Errorf("headroom %.2f: proposes %d tokens; the source's longest was %d", h, got, r.published)
				}
			}
		})
	}
}

// TestServeMaxModelLenNotAboveRefusal holds the serving planner's proposed
// max_model_len to the published vLLM refusals: vLLM refuses a
// max_model_len above the KV cache it reports, so at the same or a lower
// gpu_memory_utilization no proposal may exceed those tokens.
func TestServeMaxModelLenNotAboveRefusal(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, vc := range allCases() {
		if vc.reported != "refused" || vc.metric != metricKVTokens || vc.measured == 0 {
			// A refusal that printed no token count states no maximum to
			// hold a proposal to (its verdict is checked with the others).
			continue
		}
		n++
		t.Run(vc.id, func(t *testing.T) {
			m, err := validationModel(c, vc.model)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := c.GPU(vc.gpu)
			if !ok {
				t.Fatalf("GPU %s not in the catalog", vc.gpu)
			}
			for _, h := range []float64{tuner.MinPlanHeadroom, tuner.DefaultPlanHeadroom} {
				p, err := tuner.MakePlan(tuner.PlanRequest{Model: m, GPU: g, GPUs: 1, Current: vc.workload, Headroom: h})
				if err != nil {
					t.Fatal(err)
				}
				util := vc.workload.GPUMemoryUtilization
				if util == 0 {
					util = 0.9 // vLLM's default in the versions these logs come from
				}
				got := p.Workload.MaxModelLen
				t.Logf("headroom %.2f: proposes max_model_len %d at utilization %.2f (published KV cache %.0f tokens at %.2f)",
					h, got, p.Workload.GPUMemoryUtilization, vc.measured, util)
				if p.Workload.GPUMemoryUtilization <= util && float64(got) > vc.measured {
					t.Errorf("headroom %.2f: proposes max_model_len %d; vLLM's KV cache held %.0f tokens", h, got, vc.measured)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no refused vLLM rows")
	}
}

// TestLargestBelowEveryPublishedOOM holds both "largest that fits"
// proposals to every training row a source reports out of memory, from
// any source: for that row's setup, the largest micro batch the tuner
// proposes must stay below the row's micro batch, and the longest sequence
// below the row's sequence length, at every headroom the tuner accepts.
func TestLargestBelowEveryPublishedOOM(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, vc := range allCases() {
		k := vc.workload.Kind
		if vc.reported != "oom" || (k != tuner.Train && k != tuner.LoRA && k != tuner.QLoRA) {
			continue
		}
		n++
		t.Run(vc.id, func(t *testing.T) {
			m, err := validationModel(c, vc.model)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := validationTarget(c, vc)
			if err != nil {
				t.Fatal(err)
			}
			mb := max(vc.workload.MicroBatch, 1)
			for _, h := range []float64{tuner.MinPlanHeadroom, tuner.DefaultPlanHeadroom} {
				if got := tuner.MaxFittingMicroBatch(m, tg, vc.workload, h); got >= mb {
					t.Errorf("headroom %.2f: proposes micro batch %d; the source ran out of memory at %d", h, got, mb)
				}
				if s := vc.workload.SeqLen; s > 0 {
					if got := tuner.MaxFittingSeqLen(m, tg, vc.workload, h); got >= s {
						t.Errorf("headroom %.2f: proposes %d tokens; the source ran out of memory at %d", h, got, s)
					}
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no out-of-memory training rows")
	}
}
