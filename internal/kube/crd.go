package kube

import (
	"fmt"
	pathpkg "path"
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// inlineContainer is a container a CRD writes as fields of a map rather
// than as an item of a containers list: path leads from the pod-like map
// to it (empty: the map itself), resources names its resources key.
type inlineContainer struct {
	path      []any
	resources string
}

// kserveRuntimes are the fields of a KServe predictor that hold an inline
// container (serving.kserve.io/v1beta1 PredictorSpec: the model-format
// specs and the generic model spec, each a container plus storageUri).
var kserveRuntimes = []string{"model", "huggingface", "pytorch", "tensorflow", "sklearn", "xgboost",
	"onnx", "triton", "lightgbm", "paddle", "pmml"}

// inlineContainers finds the inline containers of a map: a KServe
// predictor's (or transformer's, explainer's) runtime spec, or a Kubeflow
// TrainJob's spec.trainer with its resourcesPerNode.
func inlineContainers(m map[string]any, path []any) []inlineContainer {
	if len(path) == 0 {
		return nil
	}
	last, _ := path[len(path)-1].(string)
	switch last {
	case "predictor", "transformer", "explainer":
		var out []inlineContainer
		for _, k := range kserveRuntimes {
			if c, ok := m[k].(map[string]any); ok && containerLike(c) {
				out = append(out, inlineContainer{path: []any{k}, resources: "resources"})
			}
		}
		return out
	case "trainer":
		if _, hasList := m["containers"]; !hasList && (m["resourcesPerNode"] != nil || m["numNodes"] != nil) && containerLike(m) {
			return []inlineContainer{{resources: "resourcesPerNode"}}
		}
	}
	return nil
}

// containerLike reports a map with container fields.
func containerLike(m map[string]any) bool {
	for _, k := range []string{"image", "args", "command", "resources", "resourcesPerNode", "storageUri", "runtime", "modelFormat"} {
		if m[k] != nil {
			return true
		}
	}
	return false
}

// lookupPath steps into a map by key or a list by index.
func lookupPath(v any, k any) any {
	switch t := v.(type) {
	case map[string]any:
		if s, ok := k.(string); ok {
			return t[s]
		}
	case []any:
		if i, ok := k.(int); ok && i >= 0 && i < len(t) {
			return t[i]
		}
	}
	return nil
}

// LookupAt follows path (keys and indices) into doc; nil when a step is missing.
func LookupAt(doc any, path []any) any {
	for _, k := range path {
		doc = lookupPath(doc, k)
	}
	return doc
}

// groupMember says which multi-pod workload instance a pod template
// belongs to (root: the path that identifies it) and how many pods of one
// instance it makes (kubernetes-gpu.md §7):
//   - LeaderWorkerSet: size pods per group, the leader and size-1 workers
//     (the leader from workerTemplate too when there is no leaderTemplate);
//   - KubeRay: one head and, per worker group, replicas × numOfHosts;
//   - Kubeflow replica specs (PyTorchJob Master, Worker): replicas;
//   - TrainJob: trainer.numNodes;
//   - JobSet: replicatedJobs[i].replicas × the Job's parallelism.
//
// pods is -1 when a count it rests on is a template variable
// (IsPlaceholder: replicas: $NUM_NODES), unknown until the file is
// rendered.
func groupMember(doc any, path []any) (root []any, pods int64, ok bool) {
	unknown := false
	defer func() {
		if unknown && ok {
			pods = -1
		}
	}()
	num := func(v any, def int64) int64 {
		if IsPlaceholder(v) {
			unknown = true
		}
		if n, ok := ToInt(v); ok {
			return n
		}
		return def
	}
	for i, p := range path {
		k, _ := p.(string)
		switch k {
		case "leaderWorkerTemplate":
			lwt, _ := LookupAt(doc, path[:i+1]).(map[string]any)
			if lwt["workerTemplate"] == nil {
				return nil, 0, false // incomplete: LWS requires workerTemplate
			}
			size := num(lwt["size"], 1)
			if i+1 < len(path) && path[i+1] == "workerTemplate" {
				if lwt["leaderTemplate"] != nil {
					size--
				}
				return clone(path[:i+1]), size, true
			}
			return clone(path[:i+1]), 1, true
		case "headGroupSpec":
			return clone(path[:i]), 1, true
		case "workerGroupSpecs":
			if i+1 >= len(path) {
				return nil, 0, false
			}
			g, _ := LookupAt(doc, path[:i+2]).(map[string]any)
			n := num(g["replicas"], num(g["minReplicas"], 1))
			return clone(path[:i]), n * num(g["numOfHosts"], 1), true
		case "pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs", "paddleReplicaSpecs", "xgbReplicaSpecs":
			if i+1 >= len(path) {
				return nil, 0, false
			}
			r, _ := LookupAt(doc, path[:i+2]).(map[string]any)
			return clone(path[:i+1]), num(r["replicas"], 1), true
		case "trainer":
			t, _ := LookupAt(doc, path[:i+1]).(map[string]any)
			return clone(path[:i+1]), num(t["numNodes"], 1), true
		case "replicatedJobs":
			if i+1 >= len(path) {
				return nil, 0, false
			}
			rj, _ := LookupAt(doc, path[:i+2]).(map[string]any)
			par := num(LookupAt(rj, []any{"template", "spec", "parallelism"}), 1)
			return clone(path[:i+1]), num(rj["replicas"], 1) * par, true
		}
	}
	return nil, 0, false
}

// groupSizes fills each grouped pod's GroupPods (pods of one instance of
// its workload), GroupGPUs (nvidia.com/gpu across them) and WorldSize
// (training processes: PyTorchJob nprocPerNode or TrainJob numProcPerNode
// per pod when a number, else one per GPU).
func groupSizes(doc any, pods []Pod) {
	type member struct {
		idx  int
		pods int64
	}
	groups := map[string][]member{}
	roots := map[string][]any{}
	for i, p := range pods {
		root, n, ok := groupMember(doc, p.Path)
		if !ok || p.Group == "" {
			continue
		}
		key := pathKey(root)
		groups[key] = append(groups[key], member{i, n})
		roots[key] = root
	}
	for key, ms := range groups {
		var total, gpus int64
		unknown := false
		for _, m := range ms {
			unknown = unknown || m.pods < 0 || gpusPlaceholder(pods[m.idx])
			total += m.pods
			gpus += m.pods * podGPUs(pods[m.idx])
		}
		if unknown {
			continue // a count is a template variable: the sizes stay unknown (zero)
		}
		world := gpus
		if nproc, ok := procsPerPod(doc, roots[key]); ok {
			world = total * nproc
		} else if nproc < 0 {
			world = 0 // processes per pod is a template variable
		}
		for _, m := range ms {
			pods[m.idx].GroupPods, pods[m.idx].GroupGPUs, pods[m.idx].WorldSize = total, gpus, world
		}
	}
}

// procsPerPod reads a whole-number processes-per-node setting of the
// workload at root: PyTorchJob spec.nprocPerNode, TrainJob
// trainer.numProcPerNode ("auto", "gpu" and absent mean one per GPU); n is
// -1 (ok false) when it is a template variable.
func procsPerPod(doc any, root []any) (int64, bool) {
	if len(root) == 0 {
		return 0, false
	}
	var v any
	switch root[len(root)-1] {
	case "pytorchReplicaSpecs":
		v = LookupAt(doc, append(clone(root[:len(root)-1]), "nprocPerNode"))
	case "trainer":
		v = LookupAt(doc, append(clone(root), "numProcPerNode"))
	default:
		return 0, false
	}
	if IsPlaceholder(v) {
		return -1, false
	}
	n, ok := ToInt(v)
	return n, ok && n > 0
}

// podGPUs sums the nvidia.com/gpu limits of a pod's containers (init
// containers run before them and are left out).
func podGPUs(p Pod) int64 {
	var n int64
	for _, c := range p.Containers {
		if len(c.Path) >= 2 && c.Path[len(c.Path)-2] == "initContainers" {
			continue
		}
		n += c.GPU
	}
	return n
}

// gpusPlaceholder reports whether a pod's GPU count is a template
// variable in any of its containers.
func gpusPlaceholder(p Pod) bool {
	for _, c := range p.Containers {
		for _, r := range c.Resources {
			if r.Placeholder && r.Name == "nvidia.com/gpu" {
				return true
			}
		}
	}
	return false
}

func pathKey(p []any) string { return fmt.Sprintf("%#v", p) }

// containerFrom reads one container's GPU requests (under its resources
// key: resources, or a TrainJob's resourcesPerNode), /dev/shm mounts and
// ConfigMap mounts.
func containerFrom(cm map[string]any, path []any, resourcesKey string, vols podVolumes) Container {
	ci := Container{Path: path, Name: value.String(cm["name"]), Image: value.String(cm["image"])}
	res, _ := cm[resourcesKey].(map[string]any)
	for _, sect := range []string{"requests", "limits"} { // limits win
		rm, _ := res[sect].(map[string]any)
		for _, rk := range value.SortedKeys(rm) {
			p := append(clone(ci.Path), resourcesKey, sect, rk)
			if isGPUCountResource(rk) && rm[rk] != nil {
				q, integer := QuantityInt(rm[rk])
				ci.Resources = append(ci.Resources, GPUResource{Name: rk, Section: sect, Value: rm[rk], Count: q, Integer: integer,
					Placeholder: IsPlaceholder(rm[rk]), Path: p})
			}
			n, ok := ToInt(rm[rk])
			if !ok {
				continue
			}
			switch {
			case rk == "nvidia.com/gpu":
				ci.GPU, ci.GPUPath = n, p
			case strings.HasPrefix(rk, "nvidia.com/mig-"):
				prof := strings.TrimPrefix(rk, "nvidia.com/mig-")
				replaced := false
				for j := range ci.MIG {
					if ci.MIG[j].Profile == prof {
						ci.MIG[j] = MIGRequest{prof, n, p}
						replaced = true
					}
				}
				if !replaced {
					ci.MIG = append(ci.MIG, MIGRequest{prof, n, p})
				}
			}
		}
	}
	for i, vmnt := range value.List(cm["volumeMounts"]) {
		mm, _ := vmnt.(map[string]any)
		if strings.TrimRight(value.String(mm["mountPath"]), "/") == "/dev/shm" {
			ci.ShmMount = true
			if vols.shm[value.String(mm["name"])] {
				ci.ShmSize = true
			}
		}
		if value.String(mm["mountPath"]) != "" {
			v := vols.configMaps[value.String(mm["name"])] // zero for a volume of another kind
			v.MountPath = pathpkg.Clean(value.String(mm["mountPath"]))
			v.SubPath = value.String(mm["subPath"])
			v.Path = append(clone(ci.Path), "volumeMounts", i, "mountPath")
			ci.Mounts = append(ci.Mounts, v)
		}
	}
	return ci
}
