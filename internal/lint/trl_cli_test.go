package lint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// trlJob is a Job whose container runs `trl sft` through bash -c with the
// recipe as its args (lines: the first flag is line 14, the GPU count
// four lines after the last flag).
func trlJob(gpu, gpus string, flags ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sft\nspec:\n  template:\n    spec:\n")
	b.WriteString("      nodeSelector:\n        cloud.google.com/gke-accelerator: " + gpu + "\n")
	b.WriteString("      containers:\n        - name: trl\n          command: [\"/bin/bash\", \"-c\", \"exec trl sft \\\"$@\\\"\", \"--\"]\n")
	b.WriteString("          args:\n")
	for _, f := range flags {
		b.WriteString("            - \"" + f + "\"\n")
	}
	b.WriteString("          resources:\n            limits:\n              nvidia.com/gpu: " + gpus + "\n")
	return b.String()
}

// TestTRLCommandLineIsTheRecipe: a container running `trl sft` with its
// recipe as options is sized as that Trainer recipe on the pod's GPUs,
// each input located at its flag; no fix writes recipe keys into the
// manifest.
func TestTRLCommandLineIsTheRecipe(t *testing.T) {
	l := newLinter(t, lint.Options{})
	// Full bf16 fine-tune of an 8B model on one L4: it cannot fit.
	doc := trlJob("nvidia-l4", "1", "--model_name_or_path=meta-llama/Llama-3.1-8B", "--bf16",
		"--per_device_train_batch_size=2", "--max_seq_length=1024", "--gradient_checkpointing")
	fr, err := l.LintBytes(context.Background(), "job.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fr.Sizing == nil || fr.Sizing.Fits || fr.Sizing.GPU != "L4" {
		t.Fatalf("sizing = %+v, want an L4 that does not fit", fr.Sizing)
	}
	want := map[string]int{"model": 14, "micro_batch": 16, "seq_len": 17, "gpus": 21, "gpu": 9}
	found := false
	for _, f := range fr.Findings {
		if len(f.Fixes) > 0 && f.Range.Start.Line > 13 && f.Range.Start.Line < 19 {
			t.Errorf("%s has a fix on the trl options: %+v", f.Rule, f.Fixes)
		}
		if f.Rule != "GPU004" {
			continue
		}
		found = true
		for _, in := range f.Evidence {
			if line, ok := want[in.Name]; ok && (in.Range == nil || in.Range.Start.Line != line) {
				t.Errorf("%s evidence = %+v (range %+v), want job.yaml:%d", in.Name, in, in.Range, line)
			}
		}
	}
	if !found {
		t.Errorf("no GPU004 finding: %+v", fr.Findings)
	}

	// LoRA of the same model, one sequence a step, fits the L4.
	doc = trlJob("nvidia-l4", "1", "--model_name_or_path=meta-llama/Llama-3.1-8B", "--bf16",
		"--per_device_train_batch_size=1", "--max_seq_length=1024", "--gradient_checkpointing", "--use_peft", "--lora_r=16")
	fr, err = l.LintBytes(context.Background(), "job.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fr.Sizing == nil || !fr.Sizing.Fits {
		t.Fatalf("LoRA sizing = %+v, want a fit", fr.Sizing)
	}
	for _, f := range fr.Findings {
		if f.Rule == "GPU004" {
			t.Errorf("LoRA on the L4 got %s: %s", f.Rule, f.Message)
		}
	}

	// An Accelerate config (here one the trl package ships) decides the
	// world size and sharding, which the pod's GPU count does not say: no
	// memory verdict.
	doc = trlJob("nvidia-l4", "4", "--model_name_or_path=meta-llama/Llama-3.1-8B", "--bf16",
		"--per_device_train_batch_size=1", "--accelerate_config", "zero3")
	fr, err = l.LintBytes(context.Background(), "job.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fr.Sizing != nil {
		t.Errorf("sizing with --accelerate_config = %+v, want none", fr.Sizing)
	}
}
