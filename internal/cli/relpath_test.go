package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small repository linted from one of its subdirectories: every file a
// finding or a sizing points to - the finding's own, its related
// locations, its evidence and the sizing's related files - is written the
// way the run's paths were given (relative to the working directory), in
// every output format. The launch graph reads the repository's files by
// their absolute paths; none of those may leak.
func TestRelatedPathsRelativeInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "deploy/job.yaml", `apiVersion: batch/v1
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
`)
	write(t, dir, "launch/run.sh", "torchrun --nproc_per_node 2 train.py --deepspeed /app/conf/ds.json --model_name_or_path Qwen/Qwen2.5-7B\n")
	write(t, dir, "conf/ds.json", `{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}`+"\n")
	write(t, dir, "k8s/axolotl.yaml", `apiVersion: batch/v1
kind: Job
metadata: {name: lora}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: train
          image: example/axolotl:1
          command: ["python", "-m", "axolotl.cli.train", "config/run.yaml"]
          resources: {limits: {nvidia.com/gpu: 1}}
      restartPolicy: Never
`)
	write(t, dir, "config/run.yaml", "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: true\n")
	// The project file states the sequence length the DeepSpeed file
	// leaves to its script: its line is evidence too.
	write(t, dir, ".gpulint.yaml", "targets:\n  - paths: [\"conf/**\"]\n    seq_len: 1024\n")
	t.Chdir(filepath.Join(dir, "deploy"))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "sarif", "markdown", "github"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, _ := run(t, false, nil, "lint", "--format", format, "--verbose", "--fail-on", "never", "..")
			if stderr != "" {
				t.Fatalf("stderr %q", stderr)
			}
			for _, want := range []string{"../deploy/job.yaml", "../launch/run.sh", "../.gpulint.yaml"} {
				// A workflow annotation carries the finding's own file only.
				if format != "github" && !strings.Contains(stdout, want) {
					t.Errorf("no %q in\n%s", want, stdout)
				}
			}
			if format == "json" && !strings.Contains(stdout, `"file": "../config/run.yaml"`) {
				t.Errorf("the axolotl Job's sizing does not name ../config/run.yaml:\n%s", stdout)
			}
			for _, abs := range []string{dir, real} {
				if strings.Contains(stdout, abs) {
					t.Errorf("an absolute path %s in\n%s", abs, stdout)
				}
			}
		})
	}
}
