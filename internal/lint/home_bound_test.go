package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// The node-pool walk spans the repository; without .git that is the
// outermost project file's directory, but never the home directory: a
// stray .gpulint.yaml in home must not hand a Deployment the GPU of a
// Karpenter pool kept elsewhere in home, while a monorepo
// below home whose root holds the project file still links its k8s/ to
// its infra/.
func TestHomeProjectFileDoesNotWidenPoolWalk(t *testing.T) {
	const pool = `apiVersion: karpenter.sh/v1
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
	const deploy = `apiVersion: apps/v1
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
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	for p, text := range map[string]string{
		"home/.gpulint.yaml":            "fail-on: warning\n",
		"home/pools/nodepool.yaml":      pool,
		"home/work/svc/k8s/vllm.yaml":   deploy,
		"home/mono/.gpulint.yaml":       "fail-on: warning\n",
		"home/mono/train/.gpulint.yaml": "fail-on: warning\n",
		"home/mono/infra/nodepool.yaml": pool,
		"home/mono/serve/k8s/vllm.yaml": deploy,
	} {
		p = filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sized := func(file, home string) bool {
		t.Helper()
		res, err := newLinter(t, lint.Options{Home: home}).Run(context.Background(), []string{file})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			if f.Rule == "GPU004" {
				return true
			}
		}
		return false
	}
	stray := filepath.Join(home, "work", "svc", "k8s", "vllm.yaml")
	// The case shows something only if the widened walk reaches the pool.
	if !sized(stray, "") {
		t.Fatal("with no home ceiling the stray project file does not reach home/pools; the case shows nothing")
	}
	if sized(stray, home) {
		t.Error("the Deployment is sized with a pool outside its tree: the stray home .gpulint.yaml widened the walk")
	}
	if !sized(filepath.Join(home, "mono", "serve", "k8s", "vllm.yaml"), home) {
		t.Error("the monorepo's Deployment is not sized with its own infra/ pool: its root project file no longer bounds the walk")
	}
}
