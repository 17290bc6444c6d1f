package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// TestStatedReleaseSizesTheServer: the release a vLLM container's image
// states reaches the serving estimate, and the verdicts that rest on it
// show it as evidence located at the image. Llama 3.1 8B at 32768 tokens
// on one L4 fits the current engine's profile (a warning, tight), but
// v0.11.1 sorts the vocabulary of 256 dummy requests in its profiled
// sampler run (FlashInfer's sampler off by default from
// vllm-project/vllm#26859), which leaves too little KV cache for one
// request. v0.10.1's image ships flashinfer, whose sampler does not sort.
func TestStatedReleaseSizesTheServer(t *testing.T) {
	doc := func(tag string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\nspec:\n  template:\n    spec:\n" +
			"      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n" +
			"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:" + tag + "\n" +
			"          args: [\"--model\", \"meta-llama/Llama-3.1-8B-Instruct\", \"--max-model-len\", \"32768\"]\n" +
			"          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
	}
	tests := []struct {
		tag       string
		wantRules []string
		release   string // the vllm_version evidence, "" for none
	}{
		{tag: "latest", wantRules: []string{"GPU004"}},
		{tag: "v0.10.1", wantRules: []string{"GPU004"}, release: "v0.10.1 (image vllm/vllm-openai:v0.10.1)"},
		{tag: "v0.11.1", wantRules: []string{"VLLM003"}, release: "v0.11.1 (image vllm/vllm-openai:v0.11.1)"},
	}
	for _, tc := range tests {
		t.Run(tc.tag, func(t *testing.T) {
			l := newLinter(t, lint.Options{})
			fr, err := l.LintBytes(context.Background(), "deploy.yaml", []byte(doc(tc.tag)))
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			located := false
			for _, f := range fr.Findings {
				rules = append(rules, f.Rule)
				for _, in := range f.Evidence {
					if in.Name != "vllm_version" {
						continue
					}
					if in.Value != tc.release || in.Range == nil || in.Range.Start.Line != 12 {
						t.Errorf("%s: vllm_version evidence %+v (range %+v), want %q at deploy.yaml:12", f.Rule, in, in.Range, tc.release)
					}
					located = true
				}
			}
			for _, r := range tc.wantRules {
				if !slices.Contains(rules, r) {
					t.Errorf("findings %v lack %s: %+v", rules, r, fr.Findings)
				}
			}
			if located != (tc.release != "") {
				t.Errorf("vllm_version evidence present %v, want %v: %+v", located, tc.release != "", fr.Findings)
			}
		})
	}
}

// TestProjectStatesVLLMRelease: a project file's targets.vllm_version sizes
// a container that states no release, named as evidence at its line; the
// container's own image tag wins over it.
func TestProjectStatesVLLMRelease(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, ".gpulint.yaml")
	body := "targets:\n  - paths: [\"**\"]\n    gpu: L4\n    vllm_version: 0.11.1\n"
	if err := os.WriteFile(pp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := config.Load(pp, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(tag string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: m\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:" + tag + "\n" +
			"      args: [\"--model\", \"meta-llama/Llama-3.1-8B-Instruct\", \"--max-model-len\", \"32768\"]\n" +
			"      resources:\n        limits:\n          nvidia.com/gpu: 1\n"
	}
	for _, tc := range []struct {
		tag      string
		overflow bool
		from     finding.Source
		line     int
	}{
		{tag: "latest", overflow: true, from: finding.SourceProject, line: 4},
		{tag: "v0.10.1", overflow: false, from: finding.SourceFile, line: 8},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			l := newLinter(t, lint.Options{Project: p})
			fr, err := l.LintBytes(context.Background(), filepath.Join(dir, "pod.yaml"), []byte(manifest(tc.tag)))
			if err != nil {
				t.Fatal(err)
			}
			overflow, evidence := false, false
			for _, f := range fr.Findings {
				overflow = overflow || f.Rule == "VLLM003"
				for _, in := range f.Evidence {
					if in.Name != "vllm_version" {
						continue
					}
					evidence = true
					if in.Source != tc.from || in.Range == nil || in.Range.Start.Line != tc.line {
						t.Errorf("%s: vllm_version evidence %+v (range %+v), want source %s at line %d", f.Rule, in, in.Range, tc.from, tc.line)
					}
				}
			}
			if overflow != tc.overflow || !evidence {
				t.Errorf("kv-cache-overflow %v (want %v), vllm_version evidence %v: %+v", overflow, tc.overflow, evidence, fr.Findings)
			}
		})
	}
}
