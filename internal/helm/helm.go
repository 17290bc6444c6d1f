// Package helm reads the values files of LLM serving Helm charts: what
// each model the chart deploys runs (model, vLLM options, GPUs, node
// placement), as plain data with the paths that state it. Rendering a
// chart is not attempted; the values the chart's templates turn into a
// vLLM command line are read directly.
package helm

import (
	"strconv"
	"strings"

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
// any other document. A spec the chart does not deploy is left out: one
// with enabled: false, or every spec when servingEngineSpec.enableEngine
// is false (helm/templates/deployment-vllm-multi.yaml and ray-cluster.yaml
// at a6c01db05f65: `if .Values.servingEngineSpec.enableEngine`, then `if ne
// $modelSpec.enabled false` around each spec; an unset enabled deploys, and
// an unset enableEngine takes the chart's default, true).
func ProductionStack(doc any) []ModelSpec {
	m, _ := doc.(map[string]any)
	se, _ := m["servingEngineSpec"].(map[string]any)
	if on, ok := se["enableEngine"].(bool); ok && !on {
		return nil
	}
	var out []ModelSpec
	for i, x := range value.List(se["modelSpec"]) {
		ms, ok := x.(map[string]any)
		if !ok {
			continue
		}
		if on, ok := ms["enabled"].(bool); ok && !on {
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

// Chart names (Chart.yaml name) of substratusai/helm's serving charts.
const (
	ChartSubstratusVLLM = "vllm"
	ChartSubstratusTGI  = "text-generation-inference"
)

// substratusVLLMKeys are top-level values only substratusai's vllm chart
// defines (charts/vllm/values.yaml at aca799410e55; the Deployment
// template turns each into an env var of the substratusai/vllm image).
var substratusVLLMKeys = []string{"quantization", "maxModelLen", "gpuMemoryUtilization", "servedModelName", "readManyPVC", "chatTemplate"}

// substratusVLLMEnv maps the values substratusai's vllm chart passes to
// the image as env vars to the vLLM flags the image's entrypoint writes
// from them. Sources: substratusai/helm charts/vllm/templates/
// deployment.yaml at aca799410e55 (MODEL, QUANTIZATION, DTYPE,
// GPU_MEMORY_UTILIZATION, MAX_MODEL_LEN env from .Values), and the
// entrypoint of the image it runs (appVersion v0.5.4): substratusai/
// vllm-docker entrypoint.sh at 8f2626b10fae (`--model ${MODEL}`, `-q
// ${QUANTIZATION} --dtype ${DTYPE}` only when QUANTIZATION is set,
// --gpu-memory-utilization, --max-model-len; --tensor-parallel-size is the
// count of GPUs nvidia-smi lists in the container).
var substratusVLLMEnv = []struct{ key, flag string }{
	{"model", "model"},
	{"quantization", "quantization"},
	{"dtype", "dtype"},
	{"gpuMemoryUtilization", "gpu-memory-utilization"},
	{"maxModelLen", "max-model-len"},
}

// SubstratusVLLM reads the values of substratusai/helm's vllm chart as the
// vLLM server it deploys: a model spec at the document root with the
// options the image's entrypoint writes, the GPU count from
// resources.limits["nvidia.com/gpu"] (also the tensor parallel size: the
// entrypoint passes the number of GPUs it sees) and the node selector in
// the document's nodeSelector and affinity (the template copies both into
// the pod spec unchanged). chart is the name in the chart's Chart.yaml when the
// repository holds one ("" when not): a document is this chart's when
// chart names it, or, with no Chart.yaml, when it holds a key only this
// chart defines; it must set model as a string beside a resources map.
// nil for any other document.
func SubstratusVLLM(doc any, chart string) *ModelSpec {
	m, _ := doc.(map[string]any)
	model := value.String(m["model"])
	if _, ok := m["resources"].(map[string]any); !ok || model == "" {
		return nil
	}
	switch chart {
	case ChartSubstratusVLLM:
	case "":
		own := false
		for _, k := range substratusVLLMKeys {
			if _, ok := m[k]; ok {
				own = true
			}
		}
		if _, tgi := m["quantize"]; !own || tgi {
			return nil
		}
	default:
		return nil
	}
	spec := &ModelSpec{Path: []any{}, GPUType: "nvidia.com/gpu"}
	quantized := value.String(m["quantization"]) != ""
	for _, o := range substratusVLLMEnv {
		v, ok := m[o.key]
		if !ok || v == nil || v == "" || (o.key == "dtype" && !quantized) {
			continue // the template skips empty values; DTYPE is read only with QUANTIZATION
		}
		spec.Options = append(spec.Options, Option{o.flag, v, []any{o.key}})
	}
	lim, _ := m["resources"].(map[string]any)["limits"].(map[string]any)
	if n, ok := value.Int(lim["nvidia.com/gpu"]); ok && n > 0 {
		spec.GPUs, spec.GPUsAt = n, []any{"resources", "limits", "nvidia.com/gpu"}
		spec.Options = append(spec.Options, Option{"tensor-parallel-size", n, spec.GPUsAt})
	}
	// EXTRA_ARGS in env: flags appended after the chart's, unread here.
	for _, e := range value.List(m["env"]) {
		if em, _ := e.(map[string]any); value.String(em["name"]) == "EXTRA_ARGS" {
			spec.Unread = append(spec.Unread, "EXTRA_ARGS")
		}
	}
	return spec
}

// TGIValues is the Text Generation Inference launcher substratusai's
// text-generation-inference chart deploys from its values.
type TGIValues struct {
	// Options are launcher options by long name (model-id, num-shard,
	// quantize, and those the env list sets by their variables), each
	// with the path that states it.
	Options []Option
	// GPUs is resources.limits["nvidia.com/gpu"], at GPUsAt.
	GPUs   int64
	GPUsAt []any
	// ImageTag is image.tag, at ImageTagAt; "" when the values leave it to
	// the chart's appVersion.
	ImageTag   string
	ImageTagAt []any
}

// SubstratusTGI reads the values of substratusai/helm's
// text-generation-inference chart as the launcher it runs; nil for any
// other document. The chart's Deployment template (charts/
// text-generation-inference/templates/deployment.yaml at aca799410e55)
// sets MODEL_ID from model, NUM_SHARD from resources.limits
// ["nvidia.com/gpu"] when set, QUANTIZE from quantize, then appends env as
// it is; the launcher reads each variable as its option. A document is
// this chart's when its Chart.yaml (chart) names it, or, with none, when
// it sets quantize, a key only this chart defines, and none of the vllm
// chart's own keys; it must set model as a string beside a resources map.
func SubstratusTGI(doc any, chart string) *TGIValues {
	m, _ := doc.(map[string]any)
	model := value.String(m["model"])
	res, ok := m["resources"].(map[string]any)
	if !ok || model == "" {
		return nil
	}
	switch chart {
	case ChartSubstratusTGI:
	case "":
		if _, q := m["quantize"]; !q {
			return nil
		}
		for _, k := range substratusVLLMKeys {
			if _, ok := m[k]; ok {
				return nil
			}
		}
	default:
		return nil
	}
	out := &TGIValues{Options: []Option{{"model-id", model, []any{"model"}}}}
	lim, _ := res["limits"].(map[string]any)
	if n, ok := value.Int(lim["nvidia.com/gpu"]); ok && n > 0 {
		out.GPUs, out.GPUsAt = n, []any{"resources", "limits", "nvidia.com/gpu"}
		out.Options = append(out.Options, Option{"num-shard", n, out.GPUsAt})
	}
	if q := value.String(m["quantize"]); q != "" {
		out.Options = append(out.Options, Option{"quantize", q, []any{"quantize"}})
	}
	for i, e := range value.List(m["env"]) {
		em, _ := e.(map[string]any)
		name := value.String(em["name"])
		if name == "" {
			continue
		}
		// clap's env: the option's long name in upper snake case.
		opt := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
		v, stated := em["value"]
		if !stated {
			v = nil // valueFrom: not stated here
		}
		out.Options = append(out.Options, Option{opt, v, []any{"env", i}})
	}
	img, _ := m["image"].(map[string]any)
	if tag := renderedScalar(img["tag"]); tag != "" {
		out.ImageTag, out.ImageTagAt = tag, []any{"image", "tag"}
	}
	return out
}

// renderedScalar is a values scalar as a chart template prints it: a
// string as written, a number as Helm renders it. Helm reads values
// through sigs.k8s.io/yaml, which turns YAML into JSON before decoding
// (helm/helm pkg/chartutil/values.go ReadValues @ 00b3f0b1), so an
// unquoted tag: 2.0 renders as image :2 and 0.10 as :0.1, the release the
// pod pulls, not the text the file shows. "" for anything else.
func renderedScalar(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return ""
}
