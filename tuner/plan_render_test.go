package tuner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/golden"
)

func TestRenderPlanText(t *testing.T) {
	c := testCatalog(t)
	llama8, llama70 := mustModel(t, c, "meta-llama/Llama-3.1-8B"), mustModel(t, c, "meta-llama/Llama-3.1-70B")
	h100, a100 := mustGPU(t, c, "H100-80GB"), mustGPU(t, c, "A100-80GB")
	tests := []struct {
		name   string
		req    PlanRequest
		golden string
	}{
		{"train with offload and a global batch", PlanRequest{Model: llama70, GPU: a100, GPUs: 8, GlobalBatch: 256, GradientAccumulation: 8,
			Current: Workload{Kind: Train, ZeroStage: 2, MicroBatch: 4, SeqLen: 4096}}, "plan_train_offload.golden"},
		{"serve on a mig slice", PlanRequest{Model: llama8, GPU: h100, GPUs: 1, MIGProfiles: true,
			Current: Workload{Kind: Serve, MaxModelLen: 32768, GPUMemoryUtilization: 0.95}}, "plan_serve_mig.golden"},
		{"serve with tp 4", PlanRequest{Model: llama70, GPU: h100, GPUs: 8, Current: Workload{Kind: Serve}}, "plan_serve_tp.golden"},
		{"training that does not fit", PlanRequest{Model: mustModel(t, c, "meta-llama/Llama-3.1-405B"), GPU: mustGPU(t, c, "T4"), GPUs: 1,
			Current: Workload{Kind: Train, Precision: FP32}}, "plan_train_nofit.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := makePlan(t, tc.req)
			var buf bytes.Buffer
			if err := RenderPlanText(&buf, p); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), buf.Bytes())
			// Every choice appears with its reason, changed ones marked.
			for _, ch := range p.Choices {
				mark := "  " + map[bool]string{true: "*", false: " "}[ch.Changed()] + " " + ch.Setting
				if !strings.Contains(buf.String(), mark) || !strings.Contains(buf.String(), ch.Reason) {
					t.Errorf("row for %s (changed %v) or its reason is missing", ch.Setting, ch.Changed())
				}
			}
			if !strings.Contains(buf.String(), p.Verdict) {
				t.Errorf("verdict %q missing", p.Verdict)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestRenderPlanTextWriteError(t *testing.T) {
	c := testCatalog(t)
	p := makePlan(t, PlanRequest{Model: mustModel(t, c, "meta-llama/Llama-3.1-8B"), GPU: mustGPU(t, c, "H100-80GB"), GPUs: 1, Current: Workload{Kind: Serve}})
	if err := RenderPlanText(failWriter{}, p); err == nil {
		t.Error("write error not returned")
	}
}
