package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A Job on nodes selected by nvidia.com/gpu.memory alone launches a recipe
// by its repository path. A total only one catalog GPU has (23034 MiB: L4)
// gives the recipe that GPU, its evidence at the Job's label; a total
// several GPUs share (81559 MiB) settles no one GPU for the recipe.
func TestGPUMemoryLabelReachesLaunchedRecipe(t *testing.T) {
	job := func(mib string) string {
		return `apiVersion: batch/v1
kind: Job
metadata: {name: sft}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.memory: "` + mib + `"
      restartPolicy: Never
      containers:
        - name: train
          image: axolotlai/axolotl:main-latest
          command: ["/bin/bash", "-c"]
          args:
            - |
              cd /workspace/axolotl && python -m axolotl.cli.train config/run.yaml
          resources: {limits: {nvidia.com/gpu: 1}}
`
	}
	const recipe = "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: true\n"
	tests := []struct {
		mib, wantGPU string // wantGPU: the recipe's sizing GPU, "" for none
	}{
		{"23034", "L4"},
		{"81559", ""},
	}
	for _, tc := range tests {
		t.Run(tc.mib, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{".git/HEAD": "", "k8s/job.yaml": job(tc.mib), "config/run.yaml": recipe} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{"config/run.yaml", "k8s/job.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, f := range res.Files {
				if filepath.ToSlash(f.Path) == "config/run.yaml" && f.Sizing != nil {
					got = f.Sizing.GPU
				}
			}
			if got != tc.wantGPU {
				t.Fatalf("recipe sized on %q, want %q", got, tc.wantGPU)
			}
			if tc.wantGPU == "" {
				return
			}
			seen := false
			for _, f := range res.Findings {
				if filepath.ToSlash(f.Range.File) != "config/run.yaml" {
					continue
				}
				for _, e := range f.Evidence {
					if e.Name != "gpu" {
						continue
					}
					seen = true
					if !strings.HasPrefix(e.Value, tc.wantGPU+" ") {
						t.Errorf("gpu evidence %q, want %s", e.Value, tc.wantGPU)
					}
					if e.Range == nil || filepath.ToSlash(e.Range.File) != "k8s/job.yaml" || e.Range.Start.Line != 8 {
						t.Errorf("gpu evidence at %+v, want the Job's label, k8s/job.yaml:8", e.Range)
					}
				}
			}
			if !seen {
				t.Errorf("no gpu evidence on the recipe's findings: %+v", res.Findings)
			}
		})
	}
}

// A Ray Serve LLM engine's accelerator_type against a GPU worker group
// selected by nvidia.com/gpu.memory alone: a total only one catalog GPU
// has (23034 MiB: L4) is the group's GPU, so accelerator_type L40S is
// flagged at the label and does not replace the group's GPU; a total
// several GPUs share settles none and raises nothing.
func TestRayAcceleratorAgainstGPUMemoryLabel(t *testing.T) {
	manifest := func(mib string) string {
		return `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llama
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: ray.serve.llm:build_openai_app
        args:
          llm_configs:
            - model_loading_config:
                model_id: meta-llama/Llama-3.1-8B-Instruct
              accelerator_type: L40S
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray-llm:2.46.0-py311-cu124
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        rayStartParams: {}
        template:
          spec:
            nodeSelector:
              nvidia.com/gpu.memory: "` + mib + `"
            containers:
              - name: ray-worker
                image: rayproject/ray-llm:2.46.0-py311-cu124
                resources:
                  limits:
                    nvidia.com/gpu: 1
`
	}
	tests := []struct {
		mib      string
		mismatch bool
		gpu      string // the sizing's GPU
	}{
		{"23034", true, "L4"},
		{"81559", false, "L40S"},
	}
	for _, tc := range tests {
		t.Run(tc.mib, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "rayservice.yaml")
			if err := os.WriteFile(p, []byte(manifest(tc.mib)), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
			if err != nil {
				t.Fatal(err)
			}
			mismatch := false
			for _, f := range res.Findings {
				if f.Slug != "ray-gpu-mismatch" {
					continue
				}
				mismatch = true
				if len(f.Related) != 1 || f.Related[0].Range.Start.Line != 30 {
					t.Errorf("related %+v, want the worker group's label at line 30", f.Related)
				}
			}
			if mismatch != tc.mismatch {
				t.Errorf("ray-gpu-mismatch %v, want %v: %+v", mismatch, tc.mismatch, res.Findings)
			}
			got := ""
			for _, f := range res.Files {
				if f.Sizing != nil {
					got = f.Sizing.GPU
				}
			}
			if got != tc.gpu {
				t.Errorf("sized on %q, want %q", got, tc.gpu)
			}
		})
	}
}
