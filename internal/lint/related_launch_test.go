package lint_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
)

// A small repository - a Job, the script it runs, a recipe-less Trainer
// command and its DeepSpeed file - linted with no flags: the DeepSpeed
// file is sized on the Job's GPU with the script's process count and
// model, and every renderer points at the manifest and the script.
func TestLaunchGraphEvidenceInEveryRenderer(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"deploy/job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: sft}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: Tesla-V100-SXM2-32GB
      containers:
        - name: train
          image: example/train:1
          command: ["/bin/sh", "-c", "cd /app && ./launch/run.sh"]
          resources: {limits: {nvidia.com/gpu: 2}}
      restartPolicy: Never
`,
		"launch/run.sh": "torchrun --nproc_per_node 2 train.py --deepspeed /app/conf/ds.json --model_name_or_path Qwen/Qwen2.5-7B\n",
		"conf/ds.json":  `{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}` + "\n",
		// A script naming another file links nothing to ds.json.
		"launch/other.sh": "deepspeed --num_gpus 8 x.py --deepspeed other/ds.json\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := newLinter(t, lint.Options{Root: dir})
	res, err := l.Run(context.Background(), []string{filepath.Join(dir, "conf/ds.json")})
	if err != nil {
		t.Fatal(err)
	}
	in := report.Input{Findings: res.Findings}
	for _, f := range res.Findings {
		if f.Rule != "GPU005" {
			continue
		}
		in.Findings = append(in.Findings[:0:0], f)
	}
	if len(in.Findings) != 1 || in.Findings[0].Rule != "GPU005" {
		t.Fatalf("want the precision finding sized by the Job's V100, got %v", res.Findings)
	}
	renderers := map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return report.Text(b, in, report.Options{}) },
		"json":     func(b *bytes.Buffer) error { return report.JSON(b, in, report.Options{}) },
		"sarif":    func(b *bytes.Buffer) error { return report.SARIF(b, in, report.Options{}) },
		"markdown": func(b *bytes.Buffer) error { return report.Markdown(b, in, report.Options{}) },
	}
	for name, render := range renderers {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"deploy/job.yaml", "8"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", name, want, out)
			}
		}
		if name == "sarif" && !strings.Contains(out, `"relatedLocations"`) {
			t.Errorf("sarif: no relatedLocations in\n%s", out)
		}
	}
	// The memory finding rests on the script's process count and model.
	var ev []string
	for _, f := range res.Findings {
		for _, e := range f.Evidence {
			if e.Range != nil {
				ev = append(ev, e.Name+"@"+filepath.ToSlash(strings.TrimPrefix(e.Range.File, dir+string(filepath.Separator))))
			}
		}
	}
	got := strings.Join(ev, " ")
	for _, want := range []string{"gpu@deploy/job.yaml", "gpus@launch/run.sh", "model@launch/run.sh"} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence %q lacks %s", got, want)
		}
	}
	if strings.Contains(got, "other.sh") {
		t.Errorf("evidence %q took a script that names another file", got)
	}
}
