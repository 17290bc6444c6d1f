package lint_test

import (
	"context"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// TestGPUFromNodeLabelIsLocatedEvidence: a GPU read from a manifest's node
// selector or instance-type affinity appears in the verdict's evidence
// with the file and line of the label it came from.
func TestGPUFromNodeLabelIsLocatedEvidence(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		wantLine int
		wantGPU  string
	}{
		{"gke accelerator", "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-tesla-t4\n", 9, "T4 (14.8 GiB usable, catalog)"},
		{"instance type", "      nodeSelector:\n        node.kubernetes.io/instance-type: Standard_NC4as_T4_v3\n", 9, "T4 (14.8 GiB usable, catalog)"},
		{"karpenter gpu name", "      nodeSelector:\n        karpenter.k8s.aws/instance-gpu-name: l4\n", 9, "L4 (22.2 GiB usable, catalog)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\nspec:\n  template:\n    spec:\n" + tc.selector +
				"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n" +
				"          args: [\"--model\", \"meta-llama/Llama-3.1-70B-Instruct\"]\n" +
				"          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
			l := newLinter(t, lint.Options{})
			fr, err := l.LintBytes(context.Background(), "deploy.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range fr.Findings {
				if f.Rule != "GPU004" {
					continue
				}
				for _, in := range f.Evidence {
					if in.Name != "gpu" {
						continue
					}
					found = true
					if in.Value != tc.wantGPU || in.Range == nil || in.Range.File != "deploy.yaml" || in.Range.Start.Line != tc.wantLine {
						t.Errorf("gpu evidence = %+v (range %+v), want %s at deploy.yaml:%d", in, in.Range, tc.wantGPU, tc.wantLine)
					}
				}
			}
			if !found {
				t.Errorf("no GPU004 finding with gpu evidence: %+v", fr.Findings)
			}
		})
	}
}
