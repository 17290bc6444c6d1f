package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// A 70B server a Deployment sizes for 2 GPUs on H100 nodes: what the
// manifest states wins for it over flags, and each disagreement is
// reported with both values and sources.
const serve70BTwoGPUs = `apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: [meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=2, --max-model-len=8192]
          resources: {limits: {nvidia.com/gpu: 2}}
`

func TestFileStatedTargetWins(t *testing.T) {
	tests := []struct {
		name string
		opts lint.Options
		want []string // TARGET001 messages, in order
	}{
		{name: "no flags", want: nil},
		{name: "flags that agree", opts: lint.Options{GPU: "H100-80GB", GPUs: 2, Model: "meta-llama/Llama-3.1-70B-Instruct"}},
		{
			name: "flags that disagree",
			opts: lint.Options{GPU: "A100-80GB", GPUs: 1, Model: "meta-llama/Llama-3.1-8B"},
			want: []string{
				"this file states GPU H100-80GB, which is used for it; the --gpu flag gives A100-80GB",
				"this file states model meta-llama/Llama-3.1-70B-Instruct, which is used for it; the --model flag gives meta-llama/Llama-3.1-8B",
				"this file states GPU count 2, which is used for it; the --gpus flag gives 1",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := newLinter(t, tc.opts)
			fr, err := l.LintBytes(ctx, "deploy.yaml", []byte(serve70BTwoGPUs))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fr.Findings {
				if f.Rule == "TARGET001" {
					got = append(got, f.Message)
				}
				for _, e := range f.Evidence {
					if e.Name == "model" && !strings.HasPrefix(e.Value, "meta-llama/Llama-3.1-70B-Instruct") {
						t.Errorf("%s rests on model %s, not the file's", f.Slug, e.Value)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("TARGET001 messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// fix --tune sizes the file for what it states: the server
			// keeps its 2 GPUs.
			out, err := l.Fix(ctx, fr, true)
			if err != nil {
				t.Fatal(err)
			}
			fixed := string(out.New)
			if !out.Changed() {
				fixed = serve70BTwoGPUs
			}
			for _, keep := range []string{"--tensor-parallel-size=2", "nvidia.com/gpu: 2", "meta-llama/Llama-3.1-70B-Instruct"} {
				if !strings.Contains(fixed, keep) {
					t.Errorf("fix --tune dropped %q:\n%s", keep, fixed)
				}
			}
		})
	}
}

// A file that states no target takes the flags, and nothing is reported.
func TestFlagsFillWhatFileLeavesOpen(t *testing.T) {
	l := newLinter(t, lint.Options{GPU: "H100-80GB", GPUs: 8, Model: "meta-llama/Llama-3.1-8B"})
	fr, err := l.LintBytes(context.Background(), "ds.json", []byte(`{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fr.Findings {
		if f.Rule == "TARGET001" {
			t.Errorf("reported for a file that states no target: %s", f.Message)
		}
		for _, e := range f.Evidence {
			if e.Name == "gpu" && e.Source != "flag" {
				t.Errorf("%s: gpu from %s, want the flag", f.Slug, e.Source)
			}
		}
	}
}

// TestProjectTargetOverriddenNamesItsLine: when the project file's target
// is the side that loses to the file (or wins over a recipe comment),
// TARGET001 points at its key in .gpulint.yaml, as every other input the
// project file states is located.
func TestProjectTargetOverriddenNamesItsLine(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, ".gpulint.yaml")
	body := "targets:\n  - paths: [\"**\"]\n    gpu: A100-80GB\n    gpus: 1\n    model: meta-llama/Llama-3.1-8B\n"
	if err := os.WriteFile(pp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := config.Load(pp, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, data string
		want             map[string]string // message fragment -> related file:line
	}{
		{name: "the manifest wins", file: "deploy.yaml", data: serve70BTwoGPUs, want: map[string]string{
			"this file states GPU H100-80GB, which is used for it; the project file's targets gives A100-80GB":                                         ".gpulint.yaml:3",
			"this file states GPU count 2, which is used for it; the project file's targets gives 1":                                                   ".gpulint.yaml:4",
			"this file states model meta-llama/Llama-3.1-70B-Instruct, which is used for it; the project file's targets gives meta-llama/Llama-3.1-8B": ".gpulint.yaml:5",
		}},
		{name: "a recipe comment loses", file: "sft.yaml", data: sftRecipe("# Config for 1 node of 8 H100s with DeepSpeed ZeRO-3", "4096", "1"), want: map[string]string{
			"the comment states GPU H100-80GB, but the project file's targets gives A100-80GB": ".gpulint.yaml:3",
			"the comment states GPU count 8": ".gpulint.yaml:4",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := newLinter(t, lint.Options{Project: p}).LintBytes(context.Background(), filepath.Join(dir, tc.file), []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range fr.Findings {
				if f.Rule != "TARGET001" {
					continue
				}
				for frag := range tc.want {
					if !strings.Contains(f.Message, frag) {
						continue
					}
					var rel []string
					for _, r := range f.Related {
						rel = append(rel, fmt.Sprintf("%s:%d", filepath.Base(r.Range.File), r.Range.Start.Line))
					}
					got[frag] = strings.Join(rel, " ")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TARGET001 related locations (-want +got):\n%s", diff)
			}
		})
	}
}
