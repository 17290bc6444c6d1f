package lint_test

import (
	"context"
	"encoding/json"
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

// The result cache's promise: a warm run answers what a cold run would,
// also when a file that the result was looked up from - a context file
// beside or above the linted one, not the linted file itself - appears,
// changes or goes away. Each case is a small repository (with .git, as a
// clone has): lint it into a real cache, change one context file, and
// lint again with a new Linter (a new process) over the same cache. The
// answer must be a cold run's; each change must change that cold answer
// (else the case shows nothing).

// deployOnPool is a vLLM Deployment that names its GPU only by the label
// of a Karpenter pool.
const deployOnPool = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        NodeGroupType: g5-gpu
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
`

// nodePoolYAML is a Karpenter NodePool of the instance family family
// that labels its nodes NodeGroupType: g5-gpu.
func nodePoolYAML(family string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    metadata:
      labels:
        NodeGroupType: g5-gpu
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["` + family + `"]
`
}

// nodePoolTF is the karpenter-resources chart's values for the same pool,
// in a Terraform heredoc.
const nodePoolTF = `module "karpenter_resources" {
  values = [<<-EOT
    name: g5-gpu
    nodePool:
      labels:
        - NodeGroupType: g5-gpu
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g5"]
  EOT
  ]
}
`

const deployOnClass = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/compute-class: gpu-x1
      containers:
        - name: server
          image: vllm/vllm-openai:v0.10.1
          args: ["--model=meta-llama/Llama-3.1-70B-Instruct", "--max-model-len=8192"]
          resources:
            limits:
              nvidia.com/gpu: "1"
`

func computeClass(gpuType string) string {
	return "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata:\n  name: gpu-x1\nspec:\n  priorities:\n    - gpu:\n        type: " + gpuType + "\n        count: 1\n"
}

// trainJob runs launch/run.sh on two V100s.
const trainJob = `apiVersion: batch/v1
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
`

const rayServiceModule = `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llama
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: "serve_llm:deployment"
        runtime_env:
          env_vars:
            MODEL_ID: "meta-llama/Llama-3.1-70B-Instruct"
            MAX_MODEL_LEN: "8192"
` + rayL4Cluster

const serveModulePy = `import os
from vllm.engine.arg_utils import AsyncEngineArgs

class Deployment:
    def __init__(self):
        args = AsyncEngineArgs(
            model=os.getenv("MODEL_ID", "facebook/opt-125m"),
            max_model_len=int(os.getenv("MAX_MODEL_LEN", "4096")),
            tensor_parallel_size=1,
        )
`

// change is one edit of the repository between the warm runs: write
// data at path, or remove path when data is "". In files and changes,
// {{dir}} is the repository's absolute path.
type change struct{ path, data string }

func TestCacheContextLookups(t *testing.T) {
	const recipe = "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: true\n"
	tests := []struct {
		name   string
		files  map[string]string
		lint   string
		change []change
	}{
		{
			name:   "a Karpenter NodePool appears for the pod's selector",
			files:  map[string]string{"k8s/vllm.yaml": deployOnPool},
			lint:   "k8s/vllm.yaml",
			change: []change{{"infra/nodepool.yaml", nodePoolYAML("g5")}},
		},
		{
			name:   "a Terraform file declares the pool",
			files:  map[string]string{"k8s/vllm.yaml": deployOnPool},
			lint:   "k8s/vllm.yaml",
			change: []change{{"infra/terraform/karpenter.tf", nodePoolTF}},
		},
		{
			name:   "a second pool for the selector makes the GPU ambiguous",
			files:  map[string]string{"k8s/vllm.yaml": deployOnPool, "infra/nodepool.yaml": nodePoolYAML("g5")},
			lint:   "k8s/vllm.yaml",
			change: []change{{"k8s/pools/nodepool.yaml", nodePoolYAML("p4d")}},
		},
		{
			name:   "the pool's file goes away",
			files:  map[string]string{"k8s/vllm.yaml": deployOnPool, "infra/nodepool.yaml": nodePoolYAML("g5")},
			lint:   "k8s/vllm.yaml",
			change: []change{{"infra/nodepool.yaml", ""}},
		},
		{
			name:   "a ComputeClass of the selected name appears",
			files:  map[string]string{"apps/deploy.yaml": deployOnClass},
			lint:   "apps/deploy.yaml",
			change: []change{{"infra/classes/x1.yaml", computeClass("nvidia-l4")}},
		},
		{
			name:   "a nearer ComputeClass of the same name states another GPU",
			files:  map[string]string{"apps/deploy.yaml": deployOnClass, "infra/classes/x1.yaml": computeClass("nvidia-l4")},
			lint:   "apps/deploy.yaml",
			change: []change{{"apps/classes/x1.yaml", computeClass("nvidia-h100-80gb")}},
		},
		{
			name: "a launch script naming the DeepSpeed file appears",
			files: map[string]string{
				"deploy/job.yaml": trainJob,
				"conf/ds.json":    `{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}` + "\n",
			},
			lint:   "conf/ds.json",
			change: []change{{"launch/run.sh", "torchrun --nproc_per_node 2 train.py --deepspeed /app/conf/ds.json --model_name_or_path Qwen/Qwen2.5-7B\n"}},
		},
		{
			name: "an earlier launch script names the file with another process count",
			files: map[string]string{
				"deploy/job.yaml": trainJob,
				"conf/ds.json":    `{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}` + "\n",
				"launch/run.sh":   "torchrun --nproc_per_node 2 train.py --deepspeed /app/conf/ds.json --model_name_or_path Qwen/Qwen2.5-7B\n",
			},
			lint:   "conf/ds.json",
			change: []change{{"launch/a.sh", "torchrun --nproc_per_node 4 train.py --deepspeed /app/conf/ds.json --model_name_or_path Qwen/Qwen2.5-7B\n"}},
		},
		{
			name: "the DeepSpeed file a recipe names appears",
			files: map[string]string{
				"sft.yaml": "model_name_or_path: m\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed: ds.json\n",
			},
			lint:   "sft.yaml",
			change: []change{{"ds.json", `{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": false}, "zero_optimization": {"stage": 2}}`}},
		},
		{
			name: "the Chart.yaml that names the values' chart appears",
			files: map[string]string{
				"chart/examples/values.yaml": "model: meta-llama/Llama-3.1-70B-Instruct\nresources:\n  limits:\n    nvidia.com/gpu: 1\nnodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n",
			},
			lint:   "chart/examples/values.yaml",
			change: []change{{"chart/Chart.yaml", "apiVersion: v2\nname: vllm\nversion: 0.1.0\n"}},
		},
		{
			name:   "the Serve application's module appears beside the manifest",
			files:  map[string]string{"ray/rayservice.yaml": rayServiceModule},
			lint:   "ray/rayservice.yaml",
			change: []change{{"ray/serve_llm.py", serveModulePy}},
		},
		{
			name: "a kustomization comes to compose the patch",
			files: map[string]string{
				"base/kustomization.yaml":    "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":       kustomizeBase,
				"overlays/l4/patch-gpu.yaml": kustomizePatch,
				"overlays/l4/runtime.env":    "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=131072\n",
			},
			lint: "overlays/l4/patch-gpu.yaml",
			change: []change{{"overlays/l4/kustomization.yaml",
				"resources:\n  - ../../base\nconfigMapGenerator:\n  - name: runtime\n    envs:\n      - runtime.env\npatches:\n  - path: patch-gpu.yaml\n"}},
		},
		{
			name: "the recipe a Job launches appears",
			files: map[string]string{
				"k8s/job.yaml": runJob("cd /app && python -m axolotl.cli.train config/run.yaml", false),
			},
			lint:   "k8s/job.yaml",
			change: []change{{"config/run.yaml", recipe}},
		},
		{
			name: "the ConfigMap a Job reads its recipe from comes to be packed",
			files: map[string]string{
				"k8s/job.yaml":    runJob("cd /workspace/axolotl && python -m axolotl.cli.train /workspace/configs/run.yaml", true),
				"config/run.yaml": recipe,
			},
			lint:   "k8s/job.yaml",
			change: []change{{"scripts/deploy.sh", "kubectl create configmap axolotl-config --from-file=run.yaml=config/run.yaml\n"}},
		},
		{
			name: "the recipe a Job launches comes to name a DeepSpeed file",
			files: map[string]string{
				"k8s/job.yaml":    runJob("cd /app && python -m axolotl.cli.train config/run.yaml", false),
				"config/run.yaml": recipe + "deepspeed: ds.json\n",
			},
			lint:   "k8s/job.yaml",
			change: []change{{"config/ds.json", `{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "bf16": {"enabled": true}}`}},
		},
		{
			name: "the local model directory a manifest names appears",
			files: map[string]string{
				"k8s/vllm.yaml": strings.NewReplacer("cloud.google.com/compute-class: gpu-x1", "cloud.google.com/gke-accelerator: nvidia-l4",
					"meta-llama/Llama-3.1-70B-Instruct", "{{dir}}/models/llama").Replace(deployOnClass),
			},
			lint: "k8s/vllm.yaml",
			change: []change{{"models/llama/config.json", `{"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
				"num_hidden_layers": 80, "num_key_value_heads": 8, "max_position_embeddings": 131072,
				"vocab_size": 128256, "tie_word_embeddings": false, "torch_dtype": "bfloat16"}`}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) {
				t.Helper()
				p := filepath.Join(dir, filepath.FromSlash(name))
				if data == "" {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				data = strings.ReplaceAll(data, "{{dir}}", filepath.ToSlash(dir))
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(".git/HEAD", "ref: refs/heads/main\n")
			for name, data := range tc.files {
				write(name, data)
			}

			target := filepath.Join(dir, filepath.FromSlash(tc.lint))
			cache := lint.NewCache(t.TempDir(), []byte("test"))
			run := func(c *lint.Cache) string {
				t.Helper()
				res, err := newLinter(t, lint.Options{Cache: c}).Run(context.Background(), []string{target})
				if err != nil {
					t.Fatal(err)
				}
				return resultText(t, dir, res)
			}
			before := run(nil)
			if got := run(cache); got != before {
				t.Fatalf("first run with the cache differs from a cold run:\n%s", cmp.Diff(before, got))
			}
			if got := run(cache); got != before {
				t.Fatalf("warm run differs from a cold run before the change:\n%s", cmp.Diff(before, got))
			}
			for _, c := range tc.change {
				write(c.path, c.data)
			}
			after := run(nil)
			if after == before {
				t.Fatalf("the change leaves a cold run's answer as it was; the case shows nothing:\n%s", before)
			}
			if got := run(cache); got != after {
				t.Errorf("warm run after the change is stale (-cold +warm):\n%s", cmp.Diff(after, got))
			}
		})
	}
}

// resultText renders what a run says about its files: every finding
// with its place, severity, message and evidence, and each file's
// sizing.
func resultText(t *testing.T, dir string, res *lint.Result) string {
	t.Helper()
	var b strings.Builder
	rel := func(p string) string { return strings.TrimPrefix(p, dir+string(filepath.Separator)) }
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%s:%d:%d %s %s %s\n", rel(f.Range.File), f.Range.Start.Line, f.Range.Start.Col, f.Rule, f.Severity, f.Message)
		for _, e := range f.Evidence {
			at := ""
			if e.Range != nil {
				at = fmt.Sprintf("%s:%d", rel(e.Range.File), e.Range.Start.Line)
			}
			fmt.Fprintf(&b, "  %s=%s %s %s\n", e.Name, e.Value, e.Source, at)
		}
	}
	for _, fr := range res.Files {
		z, err := json.Marshal(fr.Sizing)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s sizing %s\n", rel(fr.Path), strings.ReplaceAll(string(z), dir+string(filepath.Separator), ""))
	}
	return b.String()
}

// The cache key holds the linted file's project file only; a result that
// also linted another file (the recipe a Job launches) rests on that
// file's project file too. Warm, then change the recipe's project file:
// the warm run must equal a cold one.
func TestCacheOtherFilesProject(t *testing.T) {
	// The recipe's project file states the CUDA context per process,
	// which sizes the recipe, and the Job's sizing is the recipe's.
	const recipe = "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\nbf16: true\n"
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	project := func(mib int) string {
		return fmt.Sprintf("targets:\n  - paths: [\"*.yaml\"]\n    cuda_context: %d\n", mib)
	}
	write(".git/HEAD", "ref: refs/heads/main\n")
	write("k8s/job.yaml", runJob("cd /app && python -m axolotl.cli.train config/run.yaml", false))
	write("config/run.yaml", recipe)
	write("config/.gpulint.yaml", project(500))
	files := []string{filepath.Join(dir, "k8s", "job.yaml"), filepath.Join(dir, "config", "run.yaml")}

	cache := lint.NewCache(t.TempDir(), []byte("test"))
	run := func(c *lint.Cache) string {
		t.Helper()
		ps, err := config.LoadSet(files, normalize.NewValidator())
		if err != nil {
			t.Fatal(err)
		}
		res, err := newLinter(t, lint.Options{Cache: c, Projects: ps, Root: dir}).Run(context.Background(), files[:1])
		if err != nil {
			t.Fatal(err)
		}
		return resultText(t, dir, res)
	}
	before := run(nil)
	if got := run(cache); got != before {
		t.Fatalf("first run with the cache differs from a cold run:\n%s", cmp.Diff(before, got))
	}
	if got := run(cache); got != before {
		t.Fatalf("warm run differs from a cold run before the change:\n%s", cmp.Diff(before, got))
	}
	write("config/.gpulint.yaml", project(4000))
	after := run(nil)
	if after == before {
		t.Fatalf("the recipe's project file leaves a cold run's answer as it was; the case shows nothing:\n%s", before)
	}
	if got := run(cache); got != after {
		t.Errorf("warm run after the recipe's project file changed is stale (-cold +warm):\n%s", cmp.Diff(after, got))
	}
}
