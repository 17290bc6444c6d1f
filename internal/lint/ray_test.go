package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
)

// A RayService's engine is sized with every input located where the file
// states it: the model inside the serveConfigV2 string, the GPU at the
// worker group's node selector, and the GPU count is the engine's TP x PP
// when its workers span the group's one-GPU pods.
func TestRayEngineEvidence(t *testing.T) {
	const manifest = `apiVersion: ray.io/v1
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
                model_id: meta-llama/Llama-3.1-70B-Instruct
              engine_kwargs:
                tensor_parallel_size: 2
                max_model_len: 8192
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
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            nodeSelector:
              cloud.google.com/gke-accelerator: nvidia-l4
            containers:
              - name: ray-worker
                image: rayproject/ray-llm:2.46.0-py311-cu124
                resources:
                  limits:
                    nvidia.com/gpu: 1
`
	p := filepath.Join(t.TempDir(), "rayservice.yaml")
	if err := os.WriteFile(p, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
	if err != nil {
		t.Fatal(err)
	}
	type input struct {
		Name, Value string
		Source      finding.Source
		Line, Col   int
	}
	var got []input
	for _, f := range res.Findings {
		if f.Rule != "GPU004" {
			continue
		}
		if f.Range.Start.Line != 13 || f.Severity != finding.SeverityError {
			t.Errorf("GPU004 at line %d (%s), want an error at the model, line 13", f.Range.Start.Line, f.Severity)
		}
		for _, e := range f.Evidence {
			in := input{Name: e.Name, Value: e.Value, Source: e.Source}
			if e.Range != nil {
				in.Line, in.Col = e.Range.Start.Line, e.Range.Start.Col
			}
			got = append(got, in)
		}
	}
	want := []input{
		{Name: "gpu", Value: "L4 (22.2 GiB usable, catalog)", Source: finding.SourceFile, Line: 32, Col: 15},
		{Name: "gpus", Value: "2", Source: finding.SourceFile},
		{Name: "model", Value: "meta-llama/Llama-3.1-70B-Instruct (70.6B parameters, catalog)", Source: finding.SourceFile, Line: 13, Col: 17},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPU004 evidence (-want +got):\n%s", diff)
	}
}
