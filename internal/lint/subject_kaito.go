package lint

import (
	"fmt"
	"strconv"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/internal/value"
)

// kindKAITO is the subject kind of the vLLM server KAITO runs for a
// Workspace (kube.KAITOWorkspace). Its parallel sizes are KAITO's choice,
// not the file's, so no vLLM rule and no plan reads it: it carries the
// memory verdict (files[].sizing) and the core rules only.
const kindKAITO = "kaito"

// kaitoSubjects derives the vLLM server a KAITO Workspace with a preset
// runs, sized as KAITO places it: the preset's model over the node count
// KAITO's estimator picks (kaitoNodes), TP = the instance type's GPUs per
// node and PP = nodes, or one copy per GPU when the weights take under
// half a GPU (configureParallelism); gpu_memory_utilization and
// max_model_len from the inference config when it states them, else
// KAITO's 0.84 and, for its --max-model-len auto, the 2048 tokens its
// estimator assumes. The node count rests on KAITO's estimator, not the
// file, so it is an assumed input of every verdict.
func (l *Linter) kaitoSubjects(s *subject, proj *config.Project) []*subject {
	w, ok := kube.ReadKAITOWorkspace(s.value)
	if !ok || !w.VLLM || w.Model == "" || len(w.GPUs) != 1 || w.PerNode < 1 {
		return nil
	}
	whole := s.docStart()
	at := map[string]finding.Range{"model": s.locate(w.PresetAt)}
	gpuAt := s.locate(w.InstanceTypeAt)
	base := map[string]any{"model": w.Model}
	if opts, r, ok := kaitoConfig(s, w.Config, l.opts.Limits); ok {
		for k, v := range opts {
			if memoryFlags[k] && k != "model" && k != "tensor-parallel-size" && k != "pipeline-parallel-size" && k != "data-parallel-size" {
				base[k], at[k] = v, r
			}
		}
	}
	if offloadsWeights(base) {
		return nil // weights in CPU memory: the memory model does not count them
	}
	if _, ok := base["gpu-memory-utilization"]; !ok {
		base["gpu-memory-utilization"] = kube.KAITOGPUMemoryUtilization(w.GPUs[0])
	}
	ctxLen, auto := int64(2048), true
	if n, ok := base["max-model-len"].(int64); ok && n > 0 {
		ctxLen, auto = n, false
	} else {
		base["max-model-len"] = ctxLen
	}
	build := func(tp, pp int, why string) *subject {
		val := make(map[string]any, len(base)+2)
		for k, v := range base {
			val[k] = v
		}
		val["tensor-parallel-size"] = int64(tp)
		if pp > 1 {
			val["pipeline-parallel-size"] = int64(pp)
		}
		if auto {
			why += "; KAITO passes --max-model-len auto, sized at the 2048 tokens its estimator assumes"
		}
		ks := &subject{lookups: s.lookups, kind: kindKAITO, file: s.file, doc: s.doc, root: s.root, value: val,
			optAt: at, whole: &whole, assumed: map[string]string{"gpus": why}}
		ks.work = normalize.VLLM(val)
		h := targetHints{At: s.locate, Product: w.GPUs[0], ProductAt: &gpuAt, GPUs: tp * pp, GPUsFrom: "kaito", GPUsRange: &gpuAt}
		ks.tgt = l.resolveTarget(s.file.Path, proj, ks.work, h)
		return ks
	}
	one := build(1, 1, "")
	if one.tgt.Model == nil || one.tgt.GPU == nil {
		return nil
	}
	est, _ := one.tgt.estimate(one.work)
	b, _ := est["breakdown"].(map[string]any)
	weights, _ := b["weights"].(int64)
	if weights <= 0 {
		return nil
	}
	gpuMem := one.tgt.GPU.DriverMiB << 20
	nodes, ok := kaitoNodes(weights, one.tgt.Model.KVBytesPerToken(1, 2)*ctxLen, gpuMem, w.PerNode)
	if !ok {
		return nil // KAITO's estimator refuses the SKU: nothing runs
	}
	if nodes == 1 && w.PerNode > 1 && 2*weights < gpuMem {
		return []*subject{build(1, 1, "KAITO runs one copy of the model per GPU when its weights take under half a GPU"+
			" (kaito pkg/model/interface.go configureParallelism): sized on one GPU")}
	}
	why := fmt.Sprintf("KAITO's controller picks the node count from its own estimate, not resource.count"+
		" (kaito pkg/workspace/estimator/nodesestimator EstimateNodeCount): %d %s node(s) by its formula on this model's weights and KV cache,"+
		" run as TP %d × PP %d (pkg/model/interface.go configureParallelism)", nodes, w.InstanceType, w.PerNode, nodes)
	return []*subject{build(w.PerNode, nodes, why)}
}

// kaitoNodes is the node count KAITO's estimator picks for a vLLM preset
// (kaito-project/kaito pkg/workspace/estimator/nodesestimator/estimator.go
// EstimateNodeCount @ 056b8280): the weights grown 2% as vLLM loads them,
// over what each GPU keeps for weights: 0.84 of its memory, less 2.3 GiB
// and the context's KV cache shared by a node's GPUs, divided by 1.05 for
// overhead that scales with the weights; one GPU more than the whole
// GPUs that fill, in whole nodes. weights and kvContext (one context's KV
// bytes over all layers) are the memory model's; false when KAITO's
// estimator refuses the GPU (its reserve exceeds its budget).
func kaitoNodes(weights, kvContext, gpuMem int64, perNode int) (int, bool) {
	const gib = 1 << 30
	avail := float64(gpuMem) * 0.84
	reserve := 2.3*gib + float64(kvContext)/float64(perNode)
	if avail <= reserve {
		return 0, false
	}
	perGPU := (avail - reserve) / 1.05
	minGPUs := int(float64(weights)*1.02/perGPU) + 1
	return (minGPUs + perNode - 1) / perNode, true
}

// kaitoConfig reads the vLLM options of the inference config a Workspace
// names: the ConfigMap of that name in the same file, its
// inference_config.yaml's "vllm:" map (KAITO's KaitoConfig, appended to
// vLLM's command line). r locates the ConfigMap's key.
func kaitoConfig(s *subject, name string, lim source.Limits) (map[string]any, finding.Range, bool) {
	if name == "" {
		return nil, finding.Range{}, false
	}
	for _, d := range s.file.Docs {
		if d.Root == nil {
			continue
		}
		doc, err := d.Root.ToValue(lim.MaxNodes)
		m, _ := doc.(map[string]any)
		if err != nil || value.String(m["kind"]) != "ConfigMap" {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		data, _ := m["data"].(map[string]any)
		text, ok := data["inference_config.yaml"].(string)
		if value.String(meta["name"]) != name || !ok {
			continue
		}
		f, err := source.Parse("inference_config.yaml", []byte(text), lim)
		if err != nil || len(f.Docs) != 1 || f.Docs[0].Root == nil {
			return nil, finding.Range{}, false
		}
		cv, err := f.Docs[0].Root.ToValue(lim.MaxNodes)
		cm, _ := cv.(map[string]any)
		vm, _ := cm["vllm"].(map[string]any)
		if err != nil || vm == nil {
			return nil, finding.Range{}, false
		}
		out := map[string]any{}
		for k, v := range vm {
			if sv, ok := v.(string); ok {
				if n, err := strconv.ParseInt(sv, 10, 64); err == nil {
					v = n
				} else if x, err := strconv.ParseFloat(sv, 64); err == nil {
					v = x
				}
			}
			out[k] = v
		}
		node, entry, matched := d.Root.Lookup([]any{"data", "inference_config.yaml"})
		r := finding.Range{File: s.file.Path, Start: d.Root.Start, End: d.Root.Start}
		if node != nil && matched == 2 && entry.Key != nil {
			r = finding.Range{File: s.file.Path, Start: entry.Key.Start, End: entry.Key.End}
		}
		return out, r, true
	}
	return nil, finding.Range{}, false
}
