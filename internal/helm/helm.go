// Package helm reads the values files of LLM serving Helm charts: what
// each model the chart deploys runs (model, vLLM options, GPUs, node
// placement), as plain data with the paths that state it. Rendering a
// chart is not attempted; the values the chart's templates turn into a
// vLLM command line are read directly.
package helm

import (
	"github.com/gpulint/gpulint/internal/value"
)

// Option is one vLLM option a values file states: its vLLM name, value
// and path.
type Option struct {
	Name  string
	Value any
	Path  []any
}

// ModelSpec is one model a vLLM production-stack values file deploys
// (servingEngineSpec.modelSpec[i]).
type ModelSpec struct {
	Path []any
	Name string
	// Options are the vLLM options the chart writes from the model spec,
	// the model first; ExtraArgs (a list of flags) follows them on the
	// command line, so a flag there wins.
	Options   []Option
	ExtraArgs []any
	// GPUs is requestGPU (the container's GPU request and limit) at
	// GPUsAt, when it is a whole number; GPUType is requestGPUType
	// (default nvidia.com/gpu).
	GPUs    int64
	GPUsAt  []any
	GPUType string
	// Terms are nodeSelectorTerms, at TermsAt: the chart writes them as the
	// pod's required node affinity.
	Terms   []any
	TermsAt []any
	// Unread names memory-sizing options the chart takes from the model
	// spec in a way this reader does not follow (pipelineParallelSize,
	// which only the Ray template uses, in a start script): their values
	// are unknown here.
	Unread []string
}

// vllmConfigFlags maps the vllmConfig keys the chart's Deployment template
// turns into flags, in the order it writes them (vllm-project/
// production-stack helm/templates/deployment-vllm-multi.yaml at
// 010004eea56f: `vllm serve <modelURL>` then --max-model-len, --dtype,
// --tensor-parallel-size, --max-num-seqs, --gpu_memory_utilization,
// --max_loras, then vllmConfig.extraArgs).
var vllmConfigFlags = []struct{ key, flag string }{
	{"maxModelLen", "max-model-len"},
	{"dtype", "dtype"},
	{"tensorParallelSize", "tensor-parallel-size"},
	{"maxNumSeqs", "max-num-seqs"},
	{"gpuMemoryUtilization", "gpu-memory-utilization"},
	{"maxLoras", "max-loras"},
}

// ProductionStack reads the model specs of a vLLM production-stack values
// file (helm/values.yaml: servingEngineSpec.modelSpec[] with modelURL,
// requestGPU, requestGPUType, vllmConfig and nodeSelectorTerms); nil for
// any other document.
func ProductionStack(doc any) []ModelSpec {
	m, _ := doc.(map[string]any)
	se, _ := m["servingEngineSpec"].(map[string]any)
	var out []ModelSpec
	for i, x := range value.List(se["modelSpec"]) {
		ms, ok := x.(map[string]any)
		if !ok {
			continue
		}
		at := []any{"servingEngineSpec", "modelSpec", i}
		spec := ModelSpec{Path: at, Name: value.String(ms["name"]), GPUType: "nvidia.com/gpu"}
		if u := value.String(ms["modelURL"]); u != "" {
			spec.Options = append(spec.Options, Option{"model", u, append(clone(at), "modelURL")})
		}
		vc, _ := ms["vllmConfig"].(map[string]any)
		for _, f := range vllmConfigFlags {
			if v, ok := vc[f.key]; ok && v != nil {
				spec.Options = append(spec.Options, Option{f.flag, v, append(clone(at), "vllmConfig", f.key)})
			}
		}
		if _, ok := vc["extraArgs"].([]any); ok {
			spec.ExtraArgs = append(clone(at), "vllmConfig", "extraArgs")
		}
		if n, ok := value.Int(ms["requestGPU"]); ok && n >= 0 {
			spec.GPUs, spec.GPUsAt = n, append(clone(at), "requestGPU")
		}
		if t := value.String(ms["requestGPUType"]); t != "" {
			spec.GPUType = t
		}
		if _, ok := vc["pipelineParallelSize"]; ok {
			spec.Unread = append(spec.Unread, "pipeline-parallel-size")
		}
		// nodeName, then affinity, win over nodeSelectorTerms (values.yaml
		// modelSpec comments; the Deployment template's affinity block).
		aff, _ := ms["affinity"].(map[string]any)
		if terms, ok := ms["nodeSelectorTerms"].([]any); ok && len(terms) > 0 && value.String(ms["nodeName"]) == "" && len(aff) == 0 {
			spec.Terms, spec.TermsAt = terms, append(clone(at), "nodeSelectorTerms")
		}
		out = append(out, spec)
	}
	return out
}

func clone(p []any) []any { return append([]any(nil), p...) }
