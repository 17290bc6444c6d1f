package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// gpulint lint passes $HOME as the repository walk's ceiling: a stray
// .gpulint.yaml in the home directory does not hand a Deployment below
// it the GPU of a Karpenter pool kept in another folder of home.
func TestLintHomeBoundsRepositoryWalk(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	write(t, home, ".gpulint.yaml", "fail-on: error\n")
	write(t, home, "pools/nodepool.yaml", `apiVersion: karpenter.sh/v1
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
`)
	deploy := write(t, home, "work/svc/k8s/vllm.yaml", `apiVersion: apps/v1
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
`)
	// The case shows something only if, with home elsewhere, the walk
	// reaches home/pools through the stray project file.
	out, errOut, _ := run(t, false, map[string]string{"HOME": filepath.Join(tmp, "elsewhere")}, "lint", deploy)
	if !strings.Contains(out, "pools/nodepool.yaml") {
		t.Fatalf("with HOME elsewhere the Deployment is not sized with home/pools; the case shows nothing:\n%s%s", out, errOut)
	}
	out, errOut, _ = run(t, false, map[string]string{"HOME": home}, "lint", deploy)
	if strings.Contains(out, "pools/nodepool.yaml") {
		t.Errorf("with HOME=%s the stray home .gpulint.yaml still widened the walk to home/pools:\n%s%s", home, out, errOut)
	}
}
