package lint_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A file gets a memory verdict whenever gpulint knew its GPU, model and
// workload, whether or not a rule fired: a vLLM Deployment that fits its
// node's GPU carries a fitting sizing, one that cannot fit a failing one,
// and a manifest without a model none.
func TestFileSizing(t *testing.T) {
	manifest := func(model, gpus string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.0
        args: ["--model=` + model + `", "--tensor-parallel-size=` + gpus + `", "--max-model-len=4096"]
        resources:
          limits:
            nvidia.com/gpu: "` + gpus + `"
`
	}
	_, paths := writeFiles(t, map[string]string{
		"fits.yaml":     manifest("google/gemma-3-4b-it", "1"),
		"too-big.yaml":  manifest("google/gemma-3-27b-it", "1"),
		"no-model.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n",
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*lint.Sizing{}
	for _, fr := range res.Files {
		got[filepath.Base(fr.Path)] = fr.Sizing
	}
	if s := got["fits.yaml"]; s == nil || !s.Fits || s.GPU != "L4" || s.Model != "google/gemma-3-4b-it" || s.PerGPUBytes <= 0 || s.PerGPUBytes > s.CapacityBytes {
		t.Errorf("fits.yaml: sizing %+v, want gemma-3-4b-it fitting on L4", s)
	}
	if s := got["too-big.yaml"]; s == nil || s.Fits || s.PerGPUBytes <= s.CapacityBytes {
		t.Errorf("too-big.yaml: sizing %+v, want a 27B model not fitting one L4", s)
	}
	if s := got["no-model.yaml"]; s != nil {
		t.Errorf("no-model.yaml: sizing %+v, want none", s)
	}
}
