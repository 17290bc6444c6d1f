package kube

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/value"
)

// kaitoPresetsTSV maps KAITO's inference preset names to the Hugging Face
// models they run (its header cites the source).
//
//go:embed kaito_presets.tsv
var kaitoPresetsTSV string

var kaitoPresets = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(kaitoPresetsTSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "preset\t") {
			continue
		}
		name, id, ok := strings.Cut(line, "\t")
		if !ok || name == "" || id == "" {
			panic("kaito_presets.tsv: want preset<TAB>model: " + line)
		}
		out[name] = id
	}
	return out
})

// KAITOPresetModel is the Hugging Face model a KAITO preset runs; false
// for a name the table does not hold.
func KAITOPresetModel(preset string) (string, bool) {
	id, ok := kaitoPresets()[strings.TrimSpace(preset)]
	return id, ok
}

// KAITOWorkspace is what a KAITO Workspace (kaito.sh/v1alpha1 or v1beta1,
// kind Workspace; kaito-project/kaito api/v1beta1/workspace_types.go @
// 056b8280) states about the inference server KAITO runs for it:
// resource.instanceType (the node's SKU, hardware.tsv instance-type rows),
// resource.count (the nodes asked for), inference.preset.name (a preset of
// kaito_presets.tsv), and inference.config (the ConfigMap whose
// inference_config.yaml holds vLLM options under "vllm:").
//
// With the vLLM runtime (the default; the kaito.sh/runtime annotation set
// to "transformers" picks Hugging Face transformers, api/v1beta1/labels.go
// GetWorkspaceRuntimeName) KAITO does not run resource.count nodes: its
// controller sets the node count from its own memory estimate
// (pkg/workspace/controllers/workspace_controller.go
// UpdateWorkspaceTargetNodeCount, pkg/workspace/estimator/nodesestimator)
// and launches vLLM with tensor-parallel-size = GPUs per node and, across
// nodes, pipeline-parallel-size = nodes (pkg/model/interface.go
// configureParallelism), --gpu-memory-utilization 0.84 (0.82 on an A10)
// and --max-model-len auto (buildVLLMInferenceCommand,
// pkg/workspace/inference/preset_inferences.go); the config file's vllm
// options are appended after and win (presets/workspace/inference/vllm/
// inference_api.py parse_args). Without inference.config KAITO uses its
// chart's inference-params-template, whose vllm options size nothing
// (cpu-offload-gb 0; charts/kaito/workspace/templates/inference-params.yaml,
// api/v1beta1/workspace_validation.go DefaultInferenceConfigTemplate).
type KAITOWorkspace struct {
	Preset, Model  string
	PresetAt       []any
	InstanceType   string
	InstanceTypeAt []any
	// GPUs are the catalog GPUs the instance type names, PerNode its GPUs
	// per node (0 when the table does not say).
	GPUs    []string
	PerNode int
	Count   int64
	CountAt []any
	// Config is the ConfigMap named by inference.config.
	Config   string
	ConfigAt []any
	// VLLM is false when the annotation picks the transformers runtime.
	VLLM bool
}

// KAITOGPUMemoryUtilization is the --gpu-memory-utilization KAITO passes
// vLLM on a GPU (pkg/model/interface.go defaultGPUMemoryUtilization and
// gpuMemoryUtilizationByGPUModel @ 056b8280: 0.82 on the NVIDIA A10).
func KAITOGPUMemoryUtilization(gpu string) float64 {
	if gpu == "A10" {
		return 0.82
	}
	return 0.84
}

// ReadKAITOWorkspace reads a KAITO Workspace with an inference preset;
// false for any other document.
func ReadKAITOWorkspace(doc any) (KAITOWorkspace, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "Workspace" || !strings.HasPrefix(value.String(m["apiVersion"]), "kaito.sh/") {
		return KAITOWorkspace{}, false
	}
	inf, _ := m["inference"].(map[string]any)
	preset, _ := inf["preset"].(map[string]any)
	name := value.String(preset["name"])
	if name == "" || IsPlaceholder(name) {
		return KAITOWorkspace{}, false
	}
	w := KAITOWorkspace{Preset: name, PresetAt: []any{"inference", "preset", "name"}, VLLM: true}
	w.Model, _ = KAITOPresetModel(name)
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if strings.EqualFold(value.String(ann["kaito.sh/runtime"]), "transformers") {
		w.VLLM = false
	}
	res, _ := m["resource"].(map[string]any)
	if it := value.String(res["instanceType"]); it != "" && !IsPlaceholder(it) {
		w.InstanceType, w.InstanceTypeAt = it, []any{"resource", "instanceType"}
		seen := map[string]bool{}
		for _, r := range LookupHardware("instance-type", it) {
			if !seen[r.GPU] {
				seen[r.GPU] = true
				w.GPUs = append(w.GPUs, r.GPU)
				w.PerNode = r.Count
			}
		}
	}
	if n, ok := ToInt(res["count"]); ok && n > 0 {
		w.Count, w.CountAt = n, []any{"resource", "count"}
	}
	if c := value.String(inf["config"]); c != "" {
		w.Config, w.ConfigAt = c, []any{"inference", "config"}
	}
	return w, true
}
