package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The JSON output's files[].sizing says which catalog model a verdict
// assumed from a name, so a reader can tell it from one on a stated model.
func TestJSONSizingAssumedModel(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "isvc.yaml", `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llama-31-8b-instruct
spec:
  predictor:
    nodeSelector:
      cloud.google.com/gke-accelerator: nvidia-l4
    model:
      modelFormat:
        name: huggingface
      storageUri: pvc://models/llama-31-8b-instruct
      args: ["--tensor-parallel-size=1", "--max-model-len=4096"]
      resources:
        limits:
          nvidia.com/gpu: "1"
`)
	s := onlySizing(t, dir)
	got := map[string]any{"gpu": s["gpu"], "model": s["model"], "assumed_model": s["assumed_model"]}
	want := map[string]any{"gpu": "L4", "model": "pvc://models/llama-31-8b-instruct", "assumed_model": "meta-llama/Llama-3.1-8B"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sizing (-want +got):\n%s", diff)
	}
}

// A served checkpoint named for its base plus one weight format ("-FP8")
// is sized as the base with those weights: both guesses are named.
func TestJSONSizingAssumedWeights(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          args: ["--model=acme/Llama-3.1-8B-Instruct-FP8", "--max-model-len=4096"]
          resources:
            limits:
              nvidia.com/gpu: "1"
`)
	s := onlySizing(t, dir)
	got := map[string]any{"model": s["model"], "assumed_model": s["assumed_model"], "assumed_weights": s["assumed_weights"]}
	want := map[string]any{"model": "acme/Llama-3.1-8B-Instruct-FP8", "assumed_model": "meta-llama/Llama-3.1-8B", "assumed_weights": "fp8 (8-bit)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sizing (-want +got):\n%s", diff)
	}
}

// A verdict resting on a weight format read from a name is info, without
// fixes, and its model evidence names the format and what the name
// cannot say.
func TestAssumedWeightsVerdict(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          args: ["--model=acme/Llama-3.1-405B-Instruct-FP8", "--tensor-parallel-size=4", "--max-model-len=4096"]
          resources:
            limits:
              nvidia.com/gpu: "4"
`)
	stdout, _, _ := run(t, false, nil, "lint", "--format", "json", dir)
	var doc struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Fixes    []any  `json:"fixes"`
			Evidence []struct {
				Name, Value, Source string
			} `json:"evidence"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	found := false
	for _, f := range doc.Findings {
		if f.Rule != "GPU004" {
			continue
		}
		found = true
		if f.Severity != "info" || len(f.Fixes) != 0 {
			t.Errorf("GPU004 severity %s with %d fixes, want info without fixes", f.Severity, len(f.Fixes))
		}
		var model string
		for _, e := range f.Evidence {
			if e.Name == "model" && e.Source == "assumed" {
				model = e.Value
			}
		}
		if !strings.Contains(model, "with fp8 weights (8-bit) from the name acme/Llama-3.1-405B-Instruct-FP8") || !strings.Contains(model, "lower bound") {
			t.Errorf("assumed model evidence %q: want the fp8 weights from the name and the lower bound", model)
		}
	}
	if !found {
		t.Fatalf("no GPU004 for 405B at 1 byte a weight over 4 H100s (about 95 GiB each): %s", stdout)
	}
}

// onlySizing lints dir, which holds one file, as JSON and returns that
// file's sizing object.
func onlySizing(t *testing.T, dir string) map[string]any {
	t.Helper()
	stdout, stderr, _ := run(t, false, nil, "lint", "--format", "json", dir)
	if stderr != "" {
		t.Fatalf("stderr %q", stderr)
	}
	var doc struct {
		Files []struct {
			Sizing map[string]any `json:"sizing"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	if len(doc.Files) != 1 || doc.Files[0].Sizing == nil {
		t.Fatalf("no sizing: %s", stdout)
	}
	return doc.Files[0].Sizing
}
