package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// A Serve application of its own (import_path "module:attr", vLLM from
// the image) is read through the module beside the manifest: the engine
// AsyncEngineArgs builds there, its keywords bound to the application's
// env_vars. The module is found by name only, so the model is an assumed
// input and the memory verdict is at most info; without the module
// nothing is sized.
func TestRayServeModuleEngine(t *testing.T) {
	const manifest = `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llama
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: "serve_llm:deployment"
        runtime_env:
          env_vars:
            MODEL_ID: "meta-llama/Llama-3.1-70B-Instruct"
            MAX_MODEL_LEN: "8192"
` + rayL4Cluster
	const module = `import os
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine

class Deployment:
    def __init__(self):
        args = AsyncEngineArgs(
            model=os.getenv("MODEL_ID", "facebook/opt-125m"),
            max_model_len=int(os.getenv("MAX_MODEL_LEN", "4096")),
            tensor_parallel_size=1,
        )
        self.engine = AsyncLLMEngine.from_engine_args(args)
`
	gpu004 := func(withModule bool) []finding.Finding {
		dir := t.TempDir()
		p := filepath.Join(dir, "rayservice.yaml")
		if err := os.WriteFile(p, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		if withModule {
			if err := os.WriteFile(filepath.Join(dir, "serve_llm.py"), []byte(module), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
		if err != nil {
			t.Fatal(err)
		}
		var out []finding.Finding
		for _, f := range res.Findings {
			if f.Rule == "GPU004" {
				out = append(out, f)
			}
		}
		return out
	}
	if fs := gpu004(false); len(fs) != 0 {
		t.Errorf("sized without the module beside the manifest: %v", fs)
	}
	fs := gpu004(true)
	if len(fs) != 1 {
		t.Fatalf("GPU004 findings = %d, want 1 (70B on one L4)", len(fs))
	}
	if fs[0].Severity != finding.SeverityInfo {
		t.Errorf("GPU004 severity %s, want info: the module is found by name only", fs[0].Severity)
	}
	var model *finding.Input
	for i, e := range fs[0].Evidence {
		if e.Name == "model" {
			model = &fs[0].Evidence[i]
		}
	}
	if model == nil || model.Source != finding.SourceAssumed || model.Range == nil || model.Range.Start.Line != 12 {
		t.Errorf("model evidence %+v, want assumed, at MODEL_ID on line 12", model)
	}
}

// The module may live in a ConfigMap the manifest mounts into its pods,
// read as the bind keywords pass the env_vars to the engine.
func TestRayServeModuleInConfigMap(t *testing.T) {
	const manifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: serve-script
data:
  serve_llm.py: |
    import os
    class D:
        def __init__(self, model, max_model_len):
            self.args = AsyncEngineArgs(model=model, max_model_len=max_model_len)
    deployment = D.bind(model=os.environ.get("MODEL_ID"), max_model_len=int(os.environ.get("MAX_MODEL_LEN", "8192")))
---
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llama
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: serve_llm:deployment
        runtime_env:
          env_vars:
            MODEL_ID: "meta-llama/Llama-3.1-70B-Instruct"
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: example.com/ray-vllm:1
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        rayStartParams: {}
        template:
          spec:
            nodeSelector:
              cloud.google.com/gke-accelerator: nvidia-l4
            containers:
              - name: ray-worker
                image: example.com/ray-vllm:1
                resources:
                  limits:
                    nvidia.com/gpu: 1
                volumeMounts:
                  - name: script
                    mountPath: /home/ray/serve_llm.py
                    subPath: serve_llm.py
            volumes:
              - name: script
                configMap:
                  name: serve-script
`
	p := filepath.Join(t.TempDir(), "rayservice.yaml")
	if err := os.WriteFile(p, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range res.Findings {
		if f.Rule != "GPU004" {
			continue
		}
		n++
		if f.Severity != finding.SeverityInfo {
			t.Errorf("GPU004 severity %s, want info (model assumed)", f.Severity)
		}
		for _, e := range f.Evidence {
			if e.Name == "model" && (e.Source != finding.SourceAssumed || e.Range == nil || e.Range.Start.Line != 24) {
				t.Errorf("model evidence %+v, want assumed at MODEL_ID, line 24", e)
			}
		}
	}
	if n != 1 {
		t.Errorf("GPU004 findings = %d, want 1 (70B on one L4)", n)
	}
}

// TestRayModuleEnvFallbackIsAssumed: an engine argument the module reads
// as os.getenv("X", default), where the application's env_vars leave X
// unset, is the code's default, which the image or the pod may replace:
// a finding on it is at most info and names it as assumed. The same value
// set in env_vars is stated, and the warning stands.
func TestRayModuleEnvFallbackIsAssumed(t *testing.T) {
	manifest := func(env string) string {
		return `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: mistral
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: "serve_llm:deployment"
        runtime_env:
          env_vars:
            MODEL_ID: "mistralai/Mistral-7B-Instruct-v0.2"
` + env + rayL4Cluster
	}
	const module = `import os
from vllm.engine.arg_utils import AsyncEngineArgs

class Deployment:
    def __init__(self):
        args = AsyncEngineArgs(
            model=os.getenv("MODEL_ID", "facebook/opt-125m"),
            max_model_len=4096,
            max_num_seqs=int(os.getenv("MAX_NUM_SEQ", "4")),
        )
`
	tests := []struct {
		name, env string
		want      finding.Severity
		assumed   bool
		line      int
	}{
		{name: "set in env_vars", env: "            MAX_NUM_SEQ: \"4\"\n", want: finding.SeverityWarning, line: 13},
		{name: "the code's default", env: "", want: finding.SeverityInfo, assumed: true, line: 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "rayservice.yaml")
			if err := os.WriteFile(p, []byte(manifest(tc.env)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "serve_llm.py"), []byte(module), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := newLinter(t, lint.Options{}).Run(context.Background(), []string{p})
			if err != nil {
				t.Fatal(err)
			}
			var got []finding.Finding
			for _, f := range res.Findings {
				if f.Rule == "GPU002" {
					got = append(got, f)
				}
			}
			if len(got) != 1 {
				t.Fatalf("GPU002 findings %+v, want 1 (max-num-seqs 4)", got)
			}
			f := got[0]
			if f.Severity != tc.want {
				t.Errorf("GPU002 %s, want %s: %s", f.Severity, tc.want, f.Message)
			}
			if f.Range.Start.Line != tc.line || (f.Range.File != p) != tc.assumed {
				t.Errorf("GPU002 at %s:%d, want line %d of the %s", f.Range.File, f.Range.Start.Line, tc.line, map[bool]string{true: "module", false: "manifest"}[tc.assumed])
			}
			var in *finding.Input
			for i, e := range f.Evidence {
				if e.Name == "max-num-seqs" {
					in = &f.Evidence[i]
				}
			}
			if (in != nil) != tc.assumed || (in != nil && (in.Source != finding.SourceAssumed || !strings.Contains(in.Value, "MAX_NUM_SEQ") || !strings.Contains(f.Message, "assumes max-num-seqs"))) {
				t.Errorf("max-num-seqs evidence %+v in %q, want assumed %v naming MAX_NUM_SEQ", in, f.Message, tc.assumed)
			}
		})
	}
}

// rayL4Cluster is a RayService's rayClusterConfig: a head and one worker
// group of one L4 GPU (a GKE accelerator selector) running a custom
// vLLM image, whose Serve app the manifest's serveConfigV2 names.
const rayL4Cluster = `  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: example.com/ray-vllm:1
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        rayStartParams: {}
        template:
          spec:
            nodeSelector:
              cloud.google.com/gke-accelerator: nvidia-l4
            containers:
              - name: ray-worker
                image: example.com/ray-vllm:1
                resources:
                  limits:
                    nvidia.com/gpu: 1
`
