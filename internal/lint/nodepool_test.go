package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A pod that picks its nodes by the labels of the repository's own
// Karpenter NodePool runs on the GPU that pool's requirements state; the
// GPU is located at the requirement, in the NodePool's file. A selector
// no pool matches resolves nothing.
func TestNodePoolGPU(t *testing.T) {
	const pools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: g5-gpu
spec:
  template:
    metadata:
      labels:
        NodeGroupType: g5-gpu
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["g5"]
`
	deploy := func(group string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        NodeGroupType: ` + group + `
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
`
	}
	for _, tc := range []struct {
		group string
		want  int
	}{{"g5-gpu", 1}, {"other", 0}} {
		dir := t.TempDir()
		for p, text := range map[string]string{"infra/nodepool.yaml": pools, "k8s/vllm.yaml": deploy(tc.group)} {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := newLinter(t, lint.Options{Root: dir}).Run(context.Background(), []string{filepath.Join(dir, "k8s/vllm.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range res.Findings {
			if f.Rule != "GPU004" {
				continue
			}
			n++
			for _, e := range f.Evidence {
				if e.Name == "gpu" && (e.Range == nil || filepath.Base(e.Range.File) != "nodepool.yaml" || e.Range.Start.Line != 14) {
					t.Errorf("gpu evidence %+v, want the NodePool's requirement, nodepool.yaml:14", e)
				}
			}
		}
		if n != tc.want {
			t.Errorf("nodeSelector NodeGroupType %s: %d GPU004 findings, want %d", tc.group, n, tc.want)
		}
	}
}
