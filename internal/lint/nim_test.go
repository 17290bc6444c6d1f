package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpulint/gpulint/internal/lint"
)

// nimService is a NIM Operator NIMService for the NIM image of model with
// gpus GPUs on nodes of the given GPU product, and env entries.
func nimService(model, product string, gpus int, env string) string {
	return `apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: nim
spec:
  image:
    repository: nvcr.io/nim/` + model + `
    tag: 1.3.3
  authSecret: ngc-api-secret` + env + `
  nodeSelector:
    nvidia.com/gpu.product: ` + product + `
  resources:
    limits:
      nvidia.com/gpu: ` + string(rune('0'+gpus)) + "\n"
}

// A NIM is sized as NIM starts it: the catalog model its image names
// (assumed), tensor parallelism over the GPUs it gets, the context
// NIM_MAX_MODEL_LEN states or the model's own. On a GPU with FP8, where
// NIM may pick an fp8 profile, a NIM that fits with fp8 weights but not
// with bf16 ones is sized under both (open "profile"). A pinned profile
// name fixes precision and TP; a retrieval NIM, an unmapped name, a
// multi-node NIMService and a hash profile with an unknown precision are
// not sized as something else.
func TestNIMSizing(t *testing.T) {
	maxLen := func(n string) string {
		return "\n  env:\n    - name: NIM_MAX_MODEL_LEN\n      value: \"" + n + "\""
	}
	_, paths := writeFiles(t, map[string]string{
		// 8B over two L40S at 8192 tokens: fits as fp8 and as bf16.
		"fits.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L40S", 2, maxLen("8192")),
		// 8B on one L4 at 65536 tokens: about 16 GiB as fp8, 24 GiB as bf16.
		"open.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L4", 1, maxLen("65536")),
		// The profile pinned by name: bf16 over two GPUs.
		"pinned.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L4", 2,
			maxLen("65536")+"\n  storage:\n    nimCache:\n      name: c\n      profile: vllm-bf16-tp2-pp1"),
		"embed.yaml":     nimService("nvidia/llama-3.2-nv-embedqa-1b-v2", "NVIDIA-L4", 1, ""),
		"unknown.yaml":   nimService("acme/frobnicator-instruct", "NVIDIA-L4", 1, ""),
		"multinode.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L4", 1, "\n  multiNode:\n    parallelism:\n      tensor: 8"),
		"int4.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L4", 1,
			"\n  storage:\n    nimCache:\n      name: c\n      profile: tensorrt_llm-l4-int4_awq-tp1-throughput"),
	})
	got := sizingsByName(t, paths)
	const gib = 1 << 30
	if s := got["fits.yaml"]; s == nil || !s.Fits || s.GPU != "L40S" || s.AssumedModel != "meta-llama/Llama-3.1-8B" || s.Open != "" {
		t.Errorf("fits.yaml: sizing %+v, want Llama-3.1-8B assumed, fitting two L40S", s)
	}
	if s := got["open.yaml"]; s == nil || s.Fits || s.Open != "profile" || len(s.Alternatives) != 2 {
		t.Errorf("open.yaml: sizing %+v, want the fp8 and bf16 profiles, not both fitting", s)
	} else {
		fits := map[string]bool{}
		for _, a := range s.Alternatives {
			fits[a.Value] = a.Fits
		}
		if diff := cmp.Diff(map[string]bool{"fp8": true, "bf16": false}, fits); diff != "" {
			t.Errorf("open.yaml: alternatives (-want +got):\n%s", diff)
		}
	}
	if s := got["pinned.yaml"]; s == nil || s.Open != "" || s.PerGPUBytes < 12*gib || s.PerGPUBytes > 16*gib {
		t.Errorf("pinned.yaml: sizing %+v, want bf16 weights and 65536 tokens over TP 2 (about 14 GiB a GPU)", s)
	}
	for _, name := range []string{"embed.yaml", "unknown.yaml", "multinode.yaml", "int4.yaml"} {
		if s := got[name]; s != nil {
			t.Errorf("%s: sizing %+v, want none", name, s)
		}
	}
}

// A model stated by flag replaces the name mapping: the sizing is no
// longer assumed.
func TestNIMSizingModelFlag(t *testing.T) {
	_, paths := writeFiles(t, map[string]string{
		"nim.yaml": nimService("meta/llama-3.1-8b-instruct", "NVIDIA-L40S", 1, ""),
	})
	res, err := newLinter(t, lint.Options{Model: "meta-llama/Llama-3.1-8B-Instruct"}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Files[0].Sizing; s == nil || s.AssumedModel != "" || s.Model != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("sizing %+v, want the flag's model, not assumed", s)
	}
}

// The nim-llm chart's values are the NIM its pod runs: sized as a
// NIMService with the same fields is.
func TestNIMLLMChartValuesSizing(t *testing.T) {
	_, paths := writeFiles(t, map[string]string{
		"values.yaml": `image:
  repository: nvcr.io/nim/meta/llama-3.1-70b-instruct
  tag: 1.3.3
model:
  ngcAPISecret: ngc-api
  name: meta/llama-3.1-70b-instruct
env:
  - name: NIM_MAX_MODEL_LEN
    value: "8192"
nodeSelector:
  node.kubernetes.io/instance-type: p5.48xlarge
resources:
  limits:
    nvidia.com/gpu: 8
`,
		"other.yaml": "image:\n  repository: ghcr.io/org/app\nresources:\n  limits:\n    nvidia.com/gpu: 1\n",
	})
	got := sizingsByName(t, paths)
	if s := got["values.yaml"]; s == nil || !s.Fits || s.GPU != "H100-80GB" || s.AssumedModel != "meta-llama/Llama-3.1-70B" {
		t.Errorf("values.yaml: sizing %+v, want Llama-3.1-70B assumed, fitting eight H100s", s)
	}
	if s := got["other.yaml"]; s != nil {
		t.Errorf("other.yaml: sizing %+v, want none", s)
	}
}

// A model-free NIM pointed at a Hugging Face model by NIM_MODEL_PATH
// serves a stated model: the sizing names it and assumes none.
func TestNIMModelPathSizing(t *testing.T) {
	_, paths := writeFiles(t, map[string]string{
		"nim.yaml": nimService("nvidia/llm-nim", "NVIDIA-L40S", 1,
			"\n  env:\n    - name: NIM_MODEL_PATH\n      value: hf://meta-llama/Llama-3.1-8B-Instruct\n    - name: NIM_MAX_MODEL_LEN\n      value: \"8192\""),
		"s3.yaml": nimService("nvidia/llm-nim", "NVIDIA-L40S", 1,
			"\n  env:\n    - name: NIM_MODEL_PATH\n      value: s3://bucket/org/model"),
	})
	got := sizingsByName(t, paths)
	if s := got["nim.yaml"]; s == nil || s.Model != "meta-llama/Llama-3.1-8B-Instruct" || s.AssumedModel != "" || !s.Fits {
		t.Errorf("nim.yaml: sizing %+v, want the stated Llama-3.1-8B-Instruct fitting an L40S", s)
	}
	if s := got["s3.yaml"]; s != nil {
		t.Errorf("s3.yaml: sizing %+v, want none for a model in a bucket", s)
	}
}

// A NIMService whose node selector names a label of the repository's own
// Karpenter NodePool runs on that pool's GPU, as a pod does: the NIM
// reader hands its scheduling fields to the same resolution.
func TestNIMServiceNodePoolGPU(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"infra/nodepool.yaml": `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: g6e-gpu
spec:
  template:
    metadata:
      labels:
        instanceType: g6e-gpu-karpenter
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g6e"]
`,
		"k8s/nim.yaml": `apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: nim
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
    tag: 1.3.3
  nodeSelector:
    instanceType: g6e-gpu-karpenter
  resources:
    limits:
      nvidia.com/gpu: 1
`,
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := newLinter(t, lint.Options{Root: dir}).Run(context.Background(), []string{filepath.Join(dir, "k8s/nim.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Files[0].Sizing; s == nil || s.GPU != "L40S" || s.AssumedModel != "meta-llama/Llama-3.1-8B" {
		t.Errorf("sizing %+v, want Llama-3.1-8B assumed on the pool's L40S", s)
	}
}
