package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"train/*.json", "train/ds.json", true},
		{"train/*.json", "train/sub/ds.json", false},
		{"**/ds.json", "ds.json", true},
		{"**/ds.json", "a/b/ds.json", true},
		{"a/**/x.yaml", "a/x.yaml", true},
		{"a/**/x.yaml", "b/x.yaml", false},
		{"k8s/**", "k8s/a/b.yaml", true},
	}
	for _, tc := range tests {
		if got := matchGlob(tc.glob, tc.path); got != tc.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

// writeProject writes a project file under dir and returns its path.
func writeProject(t *testing.T, dir, text string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".gpulint.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadTargetsAndApply(t *testing.T) {
	dir := t.TempDir()
	p, err := Load(writeProject(t, dir, `targets:
  - paths: ["train/**"]
    gpu: H100-80GB
    gpus: 8
rules:
  DS001: off
  train-batch-mismatch: warning
ignore:
  - {path: "serve/*.yaml", rule: VLLM001, reason: tested}
limits: {max-file-bytes: 1000, run-timeout: 2m}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Target(filepath.Join(dir, "train", "a", "ds.json")); got == nil || got.GPU != "H100-80GB" || got.GPUs != 8 {
		t.Errorf("target for train/a/ds.json = %+v, want H100-80GB × 8", got)
	}
	if got := p.Target(filepath.Join(dir, "serve", "v.yaml")); got != nil {
		t.Errorf("target for serve/v.yaml = %+v, want none", got)
	}
	fs := []finding.Finding{
		{Rule: "DS001", Slug: "x", Severity: finding.SeverityError},
		{Rule: "DS002", Slug: "train-batch-mismatch", Severity: finding.SeverityError},
		{Rule: "VLLM001", Slug: "y", Severity: finding.SeverityError},
	}
	var got []string
	for _, f := range p.Apply(filepath.Join(dir, "serve", "v.yaml"), fs) {
		got = append(got, f.Rule+" "+f.Severity.String())
	}
	if diff := cmp.Diff([]string{"DS002 warning"}, got); diff != "" {
		t.Errorf("applied findings (-want +got):\n%s", diff)
	}
	if p.Limits.MaxBytes != 1000 || p.Limits.RunTimeout.Minutes() != 2 {
		t.Errorf("limits = %+v", p.Limits)
	}
}

func TestLoadSetFindsNearestProject(t *testing.T) {
	dir := t.TempDir()
	outer := writeProject(t, dir, "fail-on: error\n")
	inner := writeProject(t, filepath.Join(dir, "sub"), "fail-on: warning\n")
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "sub", "deep", "b.json")}
	ps, err := LoadSet(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{{files[0], outer}, {files[1], inner}} {
		p := ps.Find(tc.file)
		if p == nil || p.Path != tc.want {
			t.Errorf("Find(%s) = %v, want %s", tc.file, p, tc.want)
		}
	}
}

// TestLoadTargetInputs: every memory-model input a target may state is read
// with where it is, so a verdict can cite the project file's line.
func TestLoadTargetInputs(t *testing.T) {
	dir := t.TempDir()
	path := writeProject(t, dir, `targets:
  - paths: ["**"]
    gpu: My-GPU
    gpu_memory: 24GiB
    params: 7.5B
    attention: eager
    cuda_context: 600
    optimizer: galore-adamw
    optimizer_in_backward: false
    loss: chunked
    lora_rank: 8
    lora_targets: [q, v]
    activation_offloading: true
    fsdp: shard_grad_op
    max_num_batched_tokens: 4096
    enforce_eager: true
    vllm_version: 0.11.1
    kbit_fp32: true
`)
	p, err := Load(path, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	got := p.Targets[0]
	f, tr := false, true
	want := TargetRule{Paths: []string{"**"}, GPU: "My-GPU", GPUMemory: "24GiB", Params: "7.5B",
		Attention: "eager", CUDAContextMiB: 600, Optimizer: "galore-adamw", OptimizerInBackward: &f,
		Loss: "chunked", LoRARank: 8, LoRATargets: []string{"q", "v"}, ActivationOffloading: &tr,
		FSDP: "shard_grad_op", MaxNumBatchedTokens: 4096, EnforceEager: &tr, VLLMVersion: "0.11.1", KbitFP32: &tr}
	ignore := cmpopts.IgnoreFields(TargetRule{}, "GPUAt", "ModelAt", "File", "At")
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
	if w, g := path+":8", got.Where("optimizer"); g != w {
		t.Errorf("Where(optimizer) = %q, want %q", g, w)
	}
	if g := got.Where("seq_len"); g != "" {
		t.Errorf("Where(seq_len) = %q for an unset key, want empty", g)
	}
}

// TestLoadRejectsBadTargetInputs: the new keys are as strict as the rest:
// a typo or a bad value is an error at its line, with a did-you-mean.
func TestLoadRejectsBadTargetInputs(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"typo", "    optimiser: adamw\n", `:3:16: `},
		{"unknown optimizer", "    optimizer: lion\n", `:3:16: `},
		{"bad size", "    gpu_memory: 24 gigs\n", `:3:17: `},
		{"bad strategy", "    fsdp: zero3\n", `:3:11: `},
		{"vllm release by name", "    vllm_version: latest\n", `:3:19: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeProject(t, t.TempDir(), "targets:\n  - paths: [\"**\"]\n"+tc.body)
			_, err := Load(path, normalize.NewValidator())
			if err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Fatalf("Load error = %v, want one at %s%s", err, path, tc.want)
			}
			if tc.name == "typo" && !strings.Contains(err.Error(), "optimizer") {
				t.Errorf("error %v has no did-you-mean", err)
			}
		})
	}
}

// TestLoadReadsVersionAsWritten: YAML reads an unquoted 0.10 as the number
// 0.1, another vLLM release; the project file keeps the text the user
// wrote, and a bad unquoted release is reported as written.
func TestLoadReadsVersionAsWritten(t *testing.T) {
	tests := []struct{ name, line, want, wantErr string }{
		{"unquoted minor with a trailing zero", "vllm_version: 0.10", "0.10", ""},
		{"unquoted patch release", "vllm_version: 0.10.1", "0.10.1", ""},
		{"quoted", `vllm_version: "0.20"`, "0.20", ""},
		{"unquoted whole number", "vllm_version: 1", "", `:3:19: vllm_version is "1";`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeProject(t, t.TempDir(), "targets:\n  - paths: [\"**\"]\n    "+tc.line+"\n")
			p, err := Load(path, normalize.NewValidator())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), path+tc.wantErr) {
					t.Fatalf("Load error = %v, want one containing %s%s", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Targets[0].VLLMVersion; got != tc.want {
				t.Errorf("VLLMVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// A file the run does not lint (a recipe a manifest launches) is governed
// by the nearest project file above it too, though LoadSet never saw its
// directory; a broken one found that way reads as none.
func TestSetFindsProjectOfUnlistedFile(t *testing.T) {
	dir := t.TempDir()
	root := writeProject(t, dir, "fail-on: error\n")
	train := writeProject(t, filepath.Join(dir, "train"), "fail-on: warning\n")
	writeProject(t, filepath.Join(dir, "broken"), "fail-on: [\n")
	ps, err := LoadSet([]string{filepath.Join(dir, "k8s", "job.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "k8s", "job.yaml"), root},
		{filepath.Join(dir, "train", "run.yaml"), train},
		{filepath.Join(dir, "train", "sub", "ds.json"), train},
		{filepath.Join(dir, "other", "ds.json"), root},
	} {
		p := ps.Find(tc.file)
		if p == nil || p.Path != tc.want {
			t.Errorf("Find(%s) = %v, want %s", tc.file, p, tc.want)
		}
	}
	for range 2 {
		if p := ps.Find(filepath.Join(dir, "broken", "ds.json")); p != nil {
			t.Errorf("Find under a project file that does not load = %s, want none", p.Path)
		}
	}
	if got := len(ps.Projects()); got != 2 {
		t.Errorf("Projects() holds %d project files, want the 2 that loaded", got)
	}
}
