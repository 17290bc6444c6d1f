package lint_test

import (
	"context"
	"strings"
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
					// The GPU count is located at the container's limits.
					if in.Name == "gpus" && (in.Range == nil || in.Range.Start.Line != 15) {
						t.Errorf("gpus evidence = %+v (range %+v), want deploy.yaml:15", in, in.Range)
					}
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

// TestMIGSliceWithoutParentIsLocatedEvidence: with no node label, the MIG
// resource alone states the slice; a model larger than that slice on every
// catalog GPU with the profile is reported, the GPU evidence located at the
// resource and naming every candidate parent. TGI containers read the same
// way. A slice the model fits gets no verdict: that one rests on the parent.
func TestMIGSliceWithoutParentIsLocatedEvidence(t *testing.T) {
	pod := func(container string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n" + container +
			"      resources:\n        limits:\n          nvidia.com/mig-3g.40gb: 1\n"
	}
	tests := []struct {
		name, doc string
		fires     bool
	}{
		{"vllm 70B", pod("    - name: s\n      image: vllm/vllm-openai:v0.10.1\n      args: [\"meta-llama/Llama-3.1-70B-Instruct\", \"--max-model-len\", \"4096\"]\n"), true},
		{"tgi 70B", pod("    - name: s\n      image: ghcr.io/huggingface/text-generation-inference:2.4.1\n      env:\n        - {name: MODEL_ID, value: meta-llama/Llama-3.1-70B-Instruct}\n        - {name: MAX_TOTAL_TOKENS, value: \"4096\"}\n"), true},
		{"vllm 8B fits", pod("    - name: s\n      image: vllm/vllm-openai:v0.10.1\n      args: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--max-model-len\", \"4096\"]\n"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := newLinter(t, lint.Options{}).LintBytes(context.Background(), "pod.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fr.Findings {
				if f.Rule != "GPU003" {
					continue
				}
				got = append(got, f.Message)
				for _, in := range f.Evidence {
					if in.Name == "gpu" && (in.Range == nil || in.Range.Start.Line != strings.Count(tc.doc, "\n") ||
						!strings.Contains(in.Value, "A100-80GB") || !strings.Contains(in.Value, "H100-80GB")) {
						t.Errorf("gpu evidence = %+v (range %+v), want every parent, at the MIG resource", in, in.Range)
					}
				}
			}
			if (len(got) > 0) != tc.fires {
				t.Errorf("GPU003 findings %q, want fires=%v (all: %+v)", got, tc.fires, fr.Findings)
			}
		})
	}
}
