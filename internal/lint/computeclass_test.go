package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// TestComputeClassGPU: a pod that names its nodes only by a GKE custom
// ComputeClass runs on the GPU the repository's definition of the class
// states in every priority.
func TestComputeClassGPU(t *testing.T) {
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/compute-class: gpu-l4-x1
      containers:
        - name: server
          image: vllm/vllm-openai:v0.10.1
          args: ["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=8192"]
          resources:
            limits:
              nvidia.com/gpu: "1"
`
	class := func(name string, types ...string) string {
		s := "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata:\n  name: " + name + "\nspec:\n  priorities:\n"
		for _, ty := range types {
			s += "    - gpu:\n        type: " + ty + "\n        count: 1\n"
		}
		return s
	}
	tests := []struct {
		name    string
		files   map[string]string
		wantGPU string // "" when unsized
	}{
		{"a class defined elsewhere in the repository",
			map[string]string{"apps/serve/deploy.yaml": deploy, "infra/classes/l4.yaml": class("gpu-l4-x1", "nvidia-l4", "nvidia-l4")}, "L4"},
		{"the nearest definition wins",
			map[string]string{"apps/serve/deploy.yaml": deploy, "apps/serve/classes/l4.yaml": class("gpu-l4-x1", "nvidia-l4"),
				"infra/classes/h100.yaml": class("gpu-l4-x1", "nvidia-h100-80gb")}, "L4"},
		{"a class that falls back to another GPU",
			map[string]string{"apps/serve/deploy.yaml": deploy, "infra/classes/l4.yaml": class("gpu-l4-x1", "nvidia-l4", "nvidia-tesla-t4")}, ""},
		{"two definitions as near that disagree",
			map[string]string{"apps/serve/deploy.yaml": deploy, "infra/a/l4.yaml": class("gpu-l4-x1", "nvidia-l4"),
				"infra/b/h100.yaml": class("gpu-l4-x1", "nvidia-h100-80gb")}, ""},
		{"no class of that name",
			map[string]string{"apps/serve/deploy.yaml": deploy, "infra/classes/l4.yaml": class("gpu-other", "nvidia-l4")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			l := newLinter(t, lint.Options{})
			res, err := l.Run(context.Background(), []string{"apps/serve/deploy.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if z := res.Files[0].Sizing; z != nil {
				got = z.GPU
			}
			if got != tc.wantGPU {
				t.Errorf("sized on %q, want %q", got, tc.wantGPU)
			}
		})
	}
}
