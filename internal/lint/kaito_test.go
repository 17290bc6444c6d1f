package lint_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/lint"
)

// A KAITO Workspace is sized as KAITO runs it: the preset's model over the
// node count KAITO's estimator picks (TP = GPUs per node, PP = nodes), or
// one copy a GPU for a model under half a GPU, with the vLLM options of
// the inference config it names; no verdict for the transformers runtime
// or a preset gpulint cannot map.
func TestKAITOWorkspaceSizing(t *testing.T) {
	ws := func(preset, instance, annotations, config string) string {
		return `apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: w` + annotations + `
resource:
  count: 1
  instanceType: ` + instance + `
inference:
  preset:
    name: ` + preset + config
	}
	const params = `
  config: params
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: params
data:
  inference_config.yaml: |
    vllm:
      gpu-memory-utilization: 0.95
      max-model-len: 16384
`
	_, paths := writeFiles(t, map[string]string{
		// 70B bf16 on 2 A100-80GB a node: KAITO picks 2 nodes whatever
		// resource.count says, TP 2 x PP 2, about 37 GiB a GPU.
		"big.yaml": ws("llama-3.3-70b-instruct", "Standard_NC48ads_A100_v4", "", params),
		// 8B under half an 80 GB GPU: one copy a GPU.
		"small.yaml":        ws("llama-3.1-8b-instruct", "Standard_NC48ads_A100_v4", "", "\n"),
		"transformers.yaml": ws("llama-3.1-8b-instruct", "Standard_NC48ads_A100_v4", "\n  annotations:\n    kaito.sh/runtime: transformers", "\n"),
		"unknown.yaml":      ws("my-model", "Standard_NC48ads_A100_v4", "", "\n"),
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]lint.FileResult{}
	for _, fr := range res.Files {
		files[filepath.Base(fr.Path)] = fr
	}
	const gib = 1 << 30
	for name, want := range map[string][2]int64{"big.yaml": {30 * gib, 45 * gib}, "small.yaml": {15 * gib, 22 * gib}} {
		s := files[name].Sizing
		if s == nil || !s.Fits || s.GPU != "A100-80GB-PCIe" || s.PerGPUBytes < want[0] || s.PerGPUBytes > want[1] {
			t.Errorf("%s: sizing %+v, want A100-80GB-PCIe, fitting, %d to %d GiB a GPU", name, s, want[0]/gib, want[1]/gib)
		}
		if len(files[name].Findings) > 0 {
			t.Errorf("%s: findings %+v, want none on what KAITO derives", name, files[name].Findings)
		}
	}
	if s := files["big.yaml"].Sizing; s != nil && s.CapacityBytes < 74*gib {
		t.Errorf("big.yaml: capacity %d, want the config's gpu-memory-utilization 0.95 of the GPU", s.CapacityBytes)
	}
	for _, name := range []string{"transformers.yaml", "unknown.yaml"} {
		if s := files[name].Sizing; s != nil {
			t.Errorf("%s: sizing %+v, want none", name, s)
		}
	}
}
