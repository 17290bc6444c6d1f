package helm

import (
	"github.com/gpulint/gpulint/internal/kube"
)

// NIMLLM reads the values of NVIDIA's nim-llm chart (NVIDIA/nim-deploy
// helm/nim-llm/values.yaml @ 23a592cb): image.repository (the NIM image,
// nvcr.io/nim/<publisher>/<model>), resources.limits nvidia.com/gpu ("number
// of GPUs to present to the running service"), nodeSelector and affinity
// (the NIM pod's), and env (added to the NIM container), laid out as a
// NIMService's spec at the document root. false for values of another
// chart.
func NIMLLM(doc any) (kube.NIM, bool) {
	m, _ := doc.(map[string]any)
	if m == nil {
		return kube.NIM{}, false
	}
	return kube.ReadNIMSpec(m, nil)
}
