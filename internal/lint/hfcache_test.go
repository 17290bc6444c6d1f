package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/policies"
)

// A model the catalog does not know is read from the Hugging Face cache
// the cli found (HF_HUB_CACHE, HF_HOME or ~/.cache): the manifest gets a
// memory verdict, and the finding's evidence names the config.json it
// rests on. Without the cache the same manifest gets none.
func TestModelFromHuggingFaceCache(t *testing.T) {
	cache := t.TempDir()
	snap := filepath.Join(cache, "models--acme--llama-70b-sft-v2", "snapshots", "5eed")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	// Llama-3.1-70B's shapes under a fine-tune's name.
	cfg := `{"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
		"num_hidden_layers": 80, "num_key_value_heads": 8, "max_position_embeddings": 131072,
		"vocab_size": 128256, "tie_word_embeddings": false, "torch_dtype": "bfloat16"}`
	if err := os.WriteFile(filepath.Join(snap, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "models--acme--llama-70b-sft-v2", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "models--acme--llama-70b-sft-v2", "refs", "main"), []byte("5eed"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, paths := writeFiles(t, map[string]string{"serve.yaml": `apiVersion: apps/v1
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
        args: ["--model=acme/llama-70b-sft-v2", "--max-model-len=4096"]
        resources:
          limits:
            nvidia.com/gpu: "1"
`})
	run := func(hfCache string) lint.FileResult {
		t.Helper()
		deps, err := lint.BuildDepsWith(lint.DepsOptions{HFCache: hfCache}, policies.FS)
		if err != nil {
			t.Fatal(err)
		}
		res, err := lint.New(deps, lint.Options{HFCache: hfCache}).Run(context.Background(), paths)
		if err != nil {
			t.Fatal(err)
		}
		return res.Files[0]
	}

	without := run("")
	if without.Sizing != nil {
		t.Errorf("without a cache: sizing %+v, want none (the catalog has no acme/llama-70b-sft-v2)", without.Sizing)
	}

	with := run(cache)
	if s := with.Sizing; s == nil || s.Fits || s.Model != "acme/llama-70b-sft-v2" {
		t.Fatalf("with the cache: sizing %+v, want a 70B model not fitting one L4", s)
	}
	wantSource := filepath.Join(snap, "config.json")
	found := false
	for _, f := range with.Findings {
		for _, in := range f.Evidence {
			if in.Name == "model" {
				found = true
				if !strings.Contains(in.Value, wantSource) || !strings.Contains(in.Value, "70.6B parameters") {
					t.Errorf("%s: model evidence %q, want the 70.6B parameters read from %s", f.Rule, in.Value, wantSource)
				}
			}
		}
	}
	if !found {
		t.Errorf("no finding carries the model as evidence: %+v", with.Findings)
	}
}
