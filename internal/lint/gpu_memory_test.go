package lint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A pod that selects its nodes by nvidia.com/gpu.memory alone: the
// verdict's GPU input names every candidate the total matches and sits at
// the label's line, and the count of candidates follows the value.
func TestGPUMemorySelectorEvidence(t *testing.T) {
	manifest := func(mib string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.memory: "` + mib + `"
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: [meta-llama/Llama-3.1-70B-Instruct, --max-model-len=8192]
          resources: {limits: {nvidia.com/gpu: 1}}
`
	}
	tests := []struct {
		mib, gpu, value string // value: what the gpu input must contain
	}{
		{"81559", "H800", "the least of the GPUs the node selector nvidia.com/gpu.memory 81559 MiB may mean (H800, H100-80GB, H100-PCIe; each is estimated)"},
		{"23034", "L4", "L4 ("},
	}
	l := newLinter(t, lint.Options{})
	for _, tc := range tests {
		t.Run(tc.mib, func(t *testing.T) {
			fr, err := l.LintBytes(context.Background(), "deploy.yaml", []byte(manifest(tc.mib)))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range fr.Findings {
				if f.Slug != "vram-overcommit" {
					continue
				}
				found = true
				if f.Severity.String() != "error" {
					t.Errorf("severity %s, want error: the memory is stated, not assumed", f.Severity)
				}
				seen := false
				for _, in := range f.Evidence {
					if in.Name != "gpu" {
						continue
					}
					seen = true
					if !strings.HasPrefix(in.Value, tc.gpu+" ") || !strings.Contains(in.Value, tc.value) {
						t.Errorf("gpu input %q, want %s and %q", in.Value, tc.gpu, tc.value)
					}
					if in.Range == nil || in.Range.Start.Line != 8 {
						t.Errorf("gpu input at %+v, want the label's line 8", in.Range)
					}
				}
				if !seen {
					t.Errorf("no gpu input in %+v", f.Evidence)
				}
			}
			if !found {
				t.Fatalf("no vram-overcommit: %+v", fr.Findings)
			}
		})
	}
}
