package cli_test

import (
	"encoding/json"
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
	s := doc.Files[0].Sizing
	got := map[string]any{"gpu": s["gpu"], "model": s["model"], "assumed_model": s["assumed_model"]}
	want := map[string]any{"gpu": "L4", "model": "pvc://models/llama-31-8b-instruct", "assumed_model": "meta-llama/Llama-3.1-8B"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sizing (-want +got):\n%s", diff)
	}
}
