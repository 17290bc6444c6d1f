package lint_test

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A file gets a memory verdict whenever gpulint knew its GPU, model and
// workload, whether or not a rule fired: a vLLM Deployment that fits its
// node's GPU carries a fitting sizing, one that cannot fit a failing one,
// and a manifest without a model none.
func TestFileSizing(t *testing.T) {
	manifest := l4VLLMDeployment
	_, paths := writeFiles(t, map[string]string{
		"fits.yaml":     manifest("google/gemma-3-4b-it", "1"),
		"too-big.yaml":  manifest("google/gemma-3-27b-it", "1"),
		"no-model.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n",
	})
	got := sizingsByName(t, paths)
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

// A multi-GPU full fine-tune whose recipe names no sharding is sized under
// each sharding its launcher may use: the sizing lists them, its figures
// are the least need, it fits only when every one fits, and its note says
// which fit. One that fits under every sharding fits.
func TestFileSizingShardingAlternatives(t *testing.T) {
	recipe := func(model string) string {
		return "# Config for 1 node of 8 x H100s (80GB)\nmodel_name_or_path: " + model +
			"\ntorch_dtype: bfloat16\nbf16: true\nper_device_train_batch_size: 2\nmax_length: 8192\ngradient_checkpointing: true\n"
	}
	_, paths := writeFiles(t, map[string]string{
		"8b.yaml":   recipe("meta-llama/Llama-3.1-8B"),
		"0.5b.yaml": recipe("Qwen/Qwen2.5-0.5B"),
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*lint.Sizing{}
	for _, fr := range res.Files {
		got[filepath.Base(fr.Path)] = fr.Sizing
	}
	s := got["8b.yaml"]
	if s == nil || s.Open != "sharding" || len(s.Alternatives) != 4 {
		t.Fatalf("8b.yaml: sizing %+v, want four sharding alternatives", s)
	}
	least, fits := s.Alternatives[0].PerGPUBytes, map[string]bool{}
	for _, a := range s.Alternatives {
		least = min(least, a.PerGPUBytes)
		fits[a.Value] = a.Fits
	}
	if want := map[string]bool{"unsharded (DDP)": false, "ZeRO-2": true, "ZeRO-3": true, "FSDP full shard": true}; !maps.Equal(fits, want) {
		t.Errorf("8b.yaml: fits by sharding %v, want %v", fits, want)
	}
	if s.Fits || s.PerGPUBytes != least || !strings.Contains(s.Note, "does not fit unsharded (DDP)") {
		t.Errorf("8b.yaml: sizing %+v, want the least need, not fitting overall, and a note naming what does not fit", s)
	}
	if s := got["0.5b.yaml"]; s == nil || !s.Fits || len(s.Alternatives) != 4 || !strings.Contains(s.Note, "fits 8× H100-80GB") {
		t.Errorf("0.5b.yaml: sizing %+v, want fitting under every sharding", s)
	}
	var infos int
	for _, f := range res.Findings {
		if f.Rule == "GPU004" {
			if filepath.Base(f.Range.File) != "8b.yaml" || f.Severity.String() != "info" {
				t.Errorf("GPU004 %s %s: want one info on 8b.yaml", f.Range.File, f.Severity)
			}
			infos++
		}
	}
	if infos != 1 {
		t.Errorf("%d GPU004 findings, want the one info on 8b.yaml", infos)
	}
}

// A DeepSpeed config never says how its script trains: the sizing is the
// full fine-tune the rules assume, with LoRA and QLoRA beside it, and no
// text note (vram-overcommit's message names them when it fires).
func TestFileSizingMethodAlternatives(t *testing.T) {
	_, paths := writeFiles(t, map[string]string{
		"ds.json": `{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}`,
	})
	res, err := newLinter(t, lint.Options{GPU: "H100-80GB", GPUs: 8, Model: "meta-llama/Llama-3.1-8B"}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Files[0].Sizing
	if s == nil || s.Open != "method" || len(s.Alternatives) != 3 || s.Note != "" {
		t.Fatalf("sizing %+v, want the method open with three alternatives and no note", s)
	}
	fits := map[string]bool{}
	for _, a := range s.Alternatives {
		fits[a.Value] = a.Fits
	}
	if want := map[string]bool{"full": false, "LoRA": true, "QLoRA": true}; !maps.Equal(fits, want) {
		t.Errorf("fits by method %v, want %v", fits, want)
	}
	if s.Fits || s.PerGPUBytes != s.Alternatives[0].PerGPUBytes {
		t.Errorf("sizing %+v, want the full fine-tune's need, not fitting", s)
	}
}

// l4VLLMDeployment is a vLLM Deployment on GKE L4 nodes serving model with
// tensor parallelism tp over tp GPUs and a 4096-token context.
func l4VLLMDeployment(model, tp string) string {
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
        args: ["--model=` + model + `", "--tensor-parallel-size=` + tp + `", "--max-model-len=4096"]
        resources:
          limits:
            nvidia.com/gpu: "` + tp + `"
`
}

// sizingsByName lints paths with no flags and returns each file's sizing
// by its base name (nil where it got none).
func sizingsByName(t *testing.T, paths []string) map[string]*lint.Sizing {
	t.Helper()
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*lint.Sizing{}
	for _, fr := range res.Files {
		got[filepath.Base(fr.Path)] = fr.Sizing
	}
	return got
}
