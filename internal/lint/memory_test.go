package lint_test

import (
	"context"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// A 70B vLLM server sized for one GPU: the memory finding carries the
// estimate it rests on as data, and its long message is split into a
// summary that fits one line and details.
const serve70BOneGPU = `apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: [meta-llama/Llama-3.1-70B-Instruct, --max-model-len=32768]
          resources: {limits: {nvidia.com/gpu: 1}}
`

func TestMemoryFindingCarriesEstimate(t *testing.T) {
	l := newLinter(t, lint.Options{})
	fr, err := l.LintBytes(context.Background(), "deploy.yaml", []byte(serve70BOneGPU))
	if err != nil {
		t.Fatal(err)
	}
	var got *finding.Finding
	for i, f := range fr.Findings {
		if f.Slug == "vram-overcommit" {
			got = &fr.Findings[i]
		}
		if f.Slug == "dev-shm-too-small" && f.Memory != nil {
			t.Errorf("%s carries a memory estimate it does not rest on", f.Slug)
		}
	}
	if got == nil {
		t.Fatalf("no vram-overcommit finding: %+v", fr.Findings)
	}
	m := got.Memory
	if m == nil || m.Capacity <= 0 || m.Total <= m.Capacity || len(m.Parts) == 0 || m.Parts[0].Name != "weights" || m.Parts[0].Bytes < 120<<30 {
		t.Errorf("memory = %+v, want the 70B weights over one H100's capacity", m)
	}
	var sum int64
	for _, p := range m.Parts {
		sum += p.Bytes
	}
	if sum != m.Total {
		t.Errorf("parts sum to %d, total %d", sum, m.Total)
	}
	if got.Summary == "" || len([]rune(got.Summary)) > finding.LineWidth || len(got.Details) == 0 {
		t.Errorf("summary %q, details %q: want a one-line summary and details", got.Summary, got.Details)
	}
}
