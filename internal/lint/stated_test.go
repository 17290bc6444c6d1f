package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// A ZeRO-3 DeepSpeed config that leaves its optimizer, attention kernel
// and loss to the training script.
const zero3MB16 = `{
  "train_micro_batch_size_per_gpu": 16,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 3}
}`

const projectBase = `targets:
  - paths: ["**"]
    gpu: H100-80GB
    gpus: 8
    model: meta-llama/Llama-3.1-8B
    method: full
    seq_len: 2048
`

// lintWithProject lints file (named ds.json) under a project file with
// body and returns the vram-overcommit finding, or nil, and the project
// file's path.
func lintWithProject(t *testing.T, body, file string) (*finding.Finding, string) {
	t.Helper()
	dir := t.TempDir()
	pp := filepath.Join(dir, ".gpulint.yaml")
	if err := os.WriteFile(pp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := config.Load(pp, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	l := newLinter(t, lint.Options{Project: p})
	fr, err := l.LintBytes(context.Background(), filepath.Join(dir, "ds.json"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fr.Findings {
		if fr.Findings[i].Slug == "vram-overcommit" {
			return &fr.Findings[i], pp
		}
	}
	return nil, pp
}

// statedEvidence returns a finding's evidence by name.
func statedEvidence(f *finding.Finding) map[string]finding.Input {
	out := map[string]finding.Input{}
	for _, e := range f.Evidence {
		out[e.Name] = e
	}
	return out
}

// TestProjectStatesMemoryInputs: the memory model's inputs a project file
// states change the estimate, and the verdict names each with the project
// file's line.
func TestProjectStatesMemoryInputs(t *testing.T) {
	base, _ := lintWithProject(t, projectBase, zero3MB16)
	if base == nil {
		t.Fatal("no vram-overcommit without the stated inputs")
	}
	body := projectBase + `    optimizer: adam8bit
    attention: eager
    loss: chunked
    cuda_context: 900
`
	got, pp := lintWithProject(t, body, zero3MB16)
	if got == nil {
		t.Fatal("no vram-overcommit with the stated inputs")
	}
	if got.Message == base.Message {
		t.Errorf("stated inputs did not change the estimate: %s", got.Message)
	}
	if got.Severity != finding.SeverityError {
		t.Errorf("severity %s, want error: every input is stated", got.Severity)
	}
	ev := statedEvidence(got)
	for name, line := range map[string]int{"optimizer": 8, "attention": 9, "loss": 10, "cuda_context": 11} {
		e, ok := ev[name]
		switch {
		case !ok:
			t.Errorf("evidence has no %s", name)
		case e.Source != finding.SourceProject || e.Range == nil || e.Range.File != pp || e.Range.Start.Line != line:
			t.Errorf("evidence %s = %+v, want source project at %s:%d", name, e, pp, line)
		}
	}
	// 8-bit Adam's two 1-byte states replace AdamW's two fp32 ones, and
	// eager attention stores the s×s scores.
	for _, part := range []string{"optimizer states 15.0 GiB", "activations 244.3 GiB"} {
		if !strings.Contains(base.Message, part) {
			t.Errorf("base message %q lacks %q", base.Message, part)
		}
	}
	for _, part := range []string{"optimizer states 9.3 GiB", "activations 589.1 GiB"} {
		if !strings.Contains(got.Message, part) {
			t.Errorf("message %q lacks %q", got.Message, part)
		}
	}
}

// TestProjectGaLoreIsAssumed: GaLore is sized as the optimizer it wraps;
// a verdict resting on that stand-in says so and is at most info.
func TestProjectGaLoreIsAssumed(t *testing.T) {
	got, _ := lintWithProject(t, projectBase+"    optimizer: galore-adamw\n", zero3MB16)
	if got == nil {
		t.Fatal("no vram-overcommit")
	}
	e := statedEvidence(got)["optimizer"]
	if e.Source != finding.SourceAssumed || !strings.Contains(e.Settle, "sized as adamw") {
		t.Errorf("optimizer evidence %+v, want assumed, sized as adamw", e)
	}
	if got.Severity != finding.SeverityInfo || !strings.Contains(got.Message, "assumes optimizer galore-adamw (sized as adamw") {
		t.Errorf("finding %s %q, want info naming the stand-in", got.Severity, got.Message)
	}
}

// TestProjectActivationOffloadingFeedsTheEstimate: activation_offloading
// in the project file sizes the verdict with activations in host memory
// (tuner.Workload.ActivationOffloading) instead of withholding it, and the
// verdict names the project's line.
func TestProjectActivationOffloadingFeedsTheEstimate(t *testing.T) {
	base, _ := lintWithProject(t, projectBase+"    activation_offloading: false\n", zero3MB16)
	got, pp := lintWithProject(t, projectBase+"    activation_offloading: true\n", zero3MB16)
	if base == nil || got == nil {
		t.Fatalf("vram-overcommit: without offloading %v, with %v; want both", base, got)
	}
	e := statedEvidence(got)["activation_offloading"]
	if e.Value != "true" || e.Source != finding.SourceProject || e.Range == nil || e.Range.File != pp || e.Range.Start.Line != 8 {
		t.Errorf("evidence %+v, want true from %s:8", e, pp)
	}
	act := func(f *finding.Finding) float64 {
		t.Helper()
		var v float64
		i := strings.Index(f.Message, "activations ")
		if i < 0 {
			t.Fatalf("no activations in %q", f.Message)
		}
		if _, err := fmt.Sscanf(f.Message[i:], "activations %f GiB", &v); err != nil {
			t.Fatalf("%q: %v", f.Message[i:], err)
		}
		return v
	}
	if a, b := act(got), act(base); a >= b/2 {
		t.Errorf("activations offloaded %.1f GiB, on the GPU %.1f GiB: want under half", a, b)
	}
}

// TestProjectGPUMemoryReplacesCapacity: gpu_memory gives the usable memory
// of the project's GPU, and the verdict names it with its line.
func TestProjectGPUMemoryReplacesCapacity(t *testing.T) {
	got, pp := lintWithProject(t, projectBase+"    gpu_memory: 40GiB\n", zero3MB16)
	if got == nil {
		t.Fatal("no vram-overcommit")
	}
	if !strings.Contains(got.Message, "exceeds H100-80GB's 40.0 GiB") {
		t.Errorf("message %q does not use the stated 40 GiB", got.Message)
	}
	want := finding.Input{Name: "gpu_memory", Value: "40GiB", Source: finding.SourceProject,
		Range: &finding.Range{File: pp, Start: finding.Pos{Line: 8, Col: 17, Offset: 0}, End: finding.Pos{Line: 8, Col: 17}}}
	e := statedEvidence(got)["gpu_memory"]
	if e.Range != nil {
		want.Range.Start.Offset, want.Range.End.Offset = e.Range.Start.Offset, e.Range.End.Offset
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("gpu_memory evidence (-want +got):\n%s", diff)
	}
}

// TestProjectFSDPSizesARecipe: a multi-GPU full fine-tune whose recipe
// leaves sharding to its launcher is not sized; the project file's fsdp
// states it, and the verdict names that line.
func TestProjectFSDPSizesARecipe(t *testing.T) {
	const recipe = "model_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\nper_device_train_batch_size: 64\n"
	lintRecipe := func(body string) (*finding.Finding, string) {
		t.Helper()
		dir := t.TempDir()
		pp := filepath.Join(dir, ".gpulint.yaml")
		if err := os.WriteFile(pp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := config.Load(pp, normalize.NewValidator())
		if err != nil {
			t.Fatal(err)
		}
		fr, err := newLinter(t, lint.Options{Project: p}).LintBytes(context.Background(), filepath.Join(dir, "sft.yaml"), []byte(recipe))
		if err != nil {
			t.Fatal(err)
		}
		for i := range fr.Findings {
			if fr.Findings[i].Slug == "vram-overcommit" {
				return &fr.Findings[i], pp
			}
		}
		return nil, pp
	}
	if got, _ := lintRecipe(projectBase); got != nil && !strings.Contains(got.Message, "the least of every sharding") {
		t.Fatalf("sized without a sharding as if one were stated: %s", got.Message)
	}
	got, pp := lintRecipe(projectBase + "    fsdp: full_shard\n")
	if got == nil {
		t.Fatal("targets.fsdp did not size the recipe")
	}
	if strings.Contains(got.Message, "every sharding") {
		t.Errorf("targets.fsdp left the sharding open: %s", got.Message)
	}
	e := statedEvidence(got)["fsdp"]
	if e.Source != finding.SourceProject || e.Range == nil || e.Range.File != pp || e.Range.Start.Line != 8 {
		t.Errorf("fsdp evidence %+v, want project at %s:8", e, pp)
	}
}

// TestRecipeActivationOffloadingIsEvidence: a recipe that offloads its
// activations gets a sized verdict (it had none before), and the verdict
// names the recipe's line among its inputs.
func TestRecipeActivationOffloadingIsEvidence(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, ".gpulint.yaml")
	if err := os.WriteFile(pp, []byte("targets:\n  - paths: [\"**\"]\n    gpu: L4\n    gpus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := config.Load(pp, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	l := newLinter(t, lint.Options{Project: p})
	recipe := "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nsequence_len: 8192\nmicro_batch_size: 16\nbf16: true\n" +
		"gradient_checkpointing: true\nactivation_offloading: true\n"
	fr, err := l.LintBytes(context.Background(), filepath.Join(dir, "axolotl.yaml"), []byte(recipe))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fr.Findings, func(f finding.Finding) bool { return f.Slug == "vram-overcommit" })
	if i < 0 {
		t.Fatalf("no vram-overcommit for an offloading recipe: %v", fr.Findings)
	}
	e := statedEvidence(&fr.Findings[i])["activation_offloading"]
	if e.Value != "true" || e.Source != finding.SourceFile || e.Range == nil || e.Range.Start.Line != 7 {
		t.Errorf("evidence %+v, want true from the recipe's line 7", e)
	}
}
