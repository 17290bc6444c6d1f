package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gpulint estimate and lint find a model id in the Hugging Face cache
// HF_HOME names, say where they read it, and accept it for --model.
func TestModelFromHFCacheFlag(t *testing.T) {
	home := t.TempDir()
	snap := filepath.Join(home, "hub", "models--acme--llama-8b-sft", "snapshots", "1234")
	write(t, snap, "config.json", `{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
		"num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
		"max_position_embeddings": 131072, "vocab_size": 128256, "torch_dtype": "bfloat16"}`)
	if err := os.MkdirAll(filepath.Join(home, "hub", "models--acme--llama-8b-sft", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "hub", "models--acme--llama-8b-sft", "refs"), "main", "1234")
	env := map[string]string{"HF_HOME": home}

	out, errOut, code := run(t, false, env, "estimate", "--model", "acme/llama-8b-sft", "--gpu", "H100-80GB", "--workload", "serve")
	if code != 0 {
		t.Fatalf("estimate: exit %d: %s", code, errOut)
	}
	if want := "Hugging Face cache, " + filepath.Join(snap, "config.json"); !strings.Contains(out, want) {
		t.Errorf("estimate output does not say %q:\n%s", want, out)
	}
	// Without the cache the same id is unknown: a usage error.
	if _, errOut, code := run(t, false, nil, "estimate", "--model", "acme/llama-8b-sft", "--gpu", "H100-80GB"); code != 2 || !strings.Contains(errOut, "unknown model") {
		t.Errorf("without a cache: exit %d, stderr %q; want 2 and unknown model", code, errOut)
	}
	dir := t.TempDir()
	cfg := write(t, dir, "ds.json", `{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}`)
	if _, errOut, code := run(t, false, env, "lint", "--model", "acme/llama-8b-sft", "--gpu", "H100-80GB", cfg); code == 2 {
		t.Errorf("lint --model with a cached id: usage error %s", errOut)
	}
}
