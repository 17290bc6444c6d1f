package tuner

import (
	"strconv"
	"strings"
	"testing"
)

// A stated gradient accumulation fixes the global batch (micro ×
// accumulation × data-parallel ranks): the plan keeps that product, names
// a larger micro batch it cannot reach as held, and with no accumulation
// stated says that the global batch grows with the micro batch.
func TestMakePlanKeepsStatedAccumulation(t *testing.T) {
	c := testCatalog(t)
	llama8, h100 := mustModel(t, c, "meta-llama/Llama-3.1-8B"), mustGPU(t, c, "H100-80GB")
	lora := func(mb int) Workload { return Workload{Kind: LoRA, Precision: BF16, MicroBatch: mb, SeqLen: 2048} }
	tests := []struct {
		name       string
		req        PlanRequest
		wantMicro  int
		wantAccum  int
		wantGlobal int
		reason     string // in the micro batch or accumulation reason
		held       string // in the held micro batch's reason; "" = none held
	}{
		{"accumulation 4: micro 2, accumulation 2",
			PlanRequest{Model: llama8, GPU: h100, GPUs: 1, GradientAccumulation: 4, Current: lora(1)},
			2, 2, 4, "keeps the global batch the stated accumulation gives", ""},
		{"accumulation 4 on 8 GPUs: the global batch 32 stays",
			PlanRequest{Model: llama8, GPU: h100, GPUs: 8, GradientAccumulation: 4, Current: lora(1)},
			2, 2, 32, "1 × 4 = 4 samples per data-parallel rank", ""},
		{"accumulation 1: no divisor, the larger micro batch is held",
			PlanRequest{Model: llama8, GPU: h100, GPUs: 1, GradientAccumulation: 1, Current: lora(1)},
			1, 1, 1, "", "would change the global batch from 1 to 2"},
		{"accumulation 3 from micro 1: 2 fits but does not divide 3",
			PlanRequest{Model: llama8, GPU: h100, GPUs: 1, GradientAccumulation: 3, Current: lora(1)},
			1, 3, 3, "", "would change the global batch from 3 to 6"},
		{"no accumulation stated: the global batch grows",
			PlanRequest{Model: llama8, GPU: h100, GPUs: 1, Current: lora(1)},
			2, 1, 2, "the global batch grows with the micro batch: 2 × 1 accumulation × 1 data-parallel = 2 (was 1)", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := makePlan(t, tc.req)
			if !p.Fits {
				t.Fatalf("does not fit: %s", p.Verdict)
			}
			if got := p.Workload.MicroBatch; got != tc.wantMicro || p.GradientAccumulation != tc.wantAccum || p.GlobalBatch != tc.wantGlobal {
				t.Errorf("micro %d, accumulation %d, global %d; want %d, %d, %d",
					got, p.GradientAccumulation, p.GlobalBatch, tc.wantMicro, tc.wantAccum, tc.wantGlobal)
			}
			if tc.reason != "" {
				mb, _ := p.Choice(SettingMicroBatch)
				ga, _ := p.Choice(SettingGradAccumulation)
				if !strings.Contains(mb.Reason+" | "+ga.Reason, tc.reason) {
					t.Errorf("reasons %q | %q, want %q in one", mb.Reason, ga.Reason, tc.reason)
				}
			}
			switch {
			case tc.held == "" && len(p.Held) > 0:
				t.Errorf("held %+v, want none", p.Held)
			case tc.held != "" && (len(p.Held) != 1 || !strings.Contains(p.Held[0].Reason, tc.held)):
				t.Errorf("held %+v, want one micro batch with %q", p.Held, tc.held)
			case tc.held != "" && p.Held[0].From != strconv.Itoa(tc.wantMicro):
				t.Errorf("held from %s, want %d", p.Held[0].From, tc.wantMicro)
			}
		})
	}
}
