package kube

import (
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// KubeAIModel is what a KubeAI Model (kubeai.org/v1) with the VLLM engine
// states about the vLLM server KubeAI runs for it (substratusai/kubeai
// api/k8s/v1/model_types.go at 0c67b3ba903f): the model from spec.url
// ("hf://<repo>/<model>"; pvc://, s3:// and other URLs name a path, not a
// model), the GPU from spec.resourceProfile ("<profile>:<count>", e.g.
// nvidia-gpu-l4:2, a profile of the KubeAI chart's resourceProfiles,
// hardware.tsv kubeai-profile), and spec.args, added to vLLM's command
// line.
type KubeAIModel struct {
	Model   string
	ModelAt []any
	// Profile is the resource profile as written; GPUs the catalog GPUs
	// its name maps to (none when the table does not know it) and Count
	// the GPUs per server pod (0 when not a whole number).
	Profile   string
	ProfileAt []any
	GPUs      []string
	Count     int64
	ArgsAt    []any
}

// ReadKubeAIModel reads a KubeAI Model document; false for any other
// document or another engine.
func ReadKubeAIModel(doc any) (KubeAIModel, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "Model" || !strings.HasPrefix(value.String(m["apiVersion"]), "kubeai.org/") {
		return KubeAIModel{}, false
	}
	spec, _ := m["spec"].(map[string]any)
	if !strings.EqualFold(value.String(spec["engine"]), "VLLM") {
		return KubeAIModel{}, false
	}
	out := KubeAIModel{ArgsAt: []any{"spec", "args"}}
	if u, ok := strings.CutPrefix(value.String(spec["url"]), "hf://"); ok && strings.Count(u, "/") == 1 && !IsPlaceholder(u) {
		out.Model, out.ModelAt = u, []any{"spec", "url"}
	}
	if p := value.String(spec["resourceProfile"]); p != "" {
		out.Profile, out.ProfileAt = p, []any{"spec", "resourceProfile"}
		name, count, _ := strings.Cut(p, ":")
		if n, err := strconv.ParseInt(strings.TrimSpace(count), 10, 64); err == nil && n > 0 {
			out.Count = n
		}
		seen := map[string]bool{}
		for _, r := range LookupHardware("kubeai-profile", name) {
			if !seen[r.GPU] {
				seen[r.GPU] = true
				out.GPUs = append(out.GPUs, r.GPU)
			}
		}
	}
	return out, true
}
