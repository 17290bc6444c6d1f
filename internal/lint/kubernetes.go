package lint

import (
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
)

// gpuProductLabel is the node label GPU feature discovery sets
// (reference: kubernetes-gpu.md §3).
const gpuProductLabel = "nvidia.com/gpu.product"

// podInfo is what the rules need to know about one pod template.
type podInfo struct {
	Path       []any
	Replicas   int64
	Product    string
	ProductAt  []any
	HostIPC    bool
	Containers []containerInfo
}

// containerInfo describes one container's GPU request and launch.
type containerInfo struct {
	Path    []any
	Name    string
	Image   string
	GPU     int64 // nvidia.com/gpu limit (or request when no limit)
	GPUPath []any
	// MIG lists nvidia.com/mig-<profile> requests.
	MIG     []migRequest
	ShmSize bool // a memory-backed /dev/shm is mounted
}

type migRequest struct {
	Profile string
	Count   int64
	Path    []any
}

// findPods walks a manifest for pod specs: any map with a containers list,
// so Deployments, Jobs and CRDs (PyTorchJob, RayCluster, LeaderWorkerSet,
// KServe) are covered by one walk.
func findPods(doc any) []podInfo {
	var pods []podInfo
	var walk func(v any, path []any, parents []map[string]any)
	walk = func(v any, path []any, parents []map[string]any) {
		switch t := v.(type) {
		case map[string]any:
			if cs, ok := t["containers"].([]any); ok && len(cs) > 0 && isContainerList(cs) {
				pods = append(pods, podFrom(t, clone(path), parents))
			}
			for _, k := range sortedKeys(t) {
				walk(t[k], append(path, k), append(parents, t))
			}
		case []any:
			for i, x := range t {
				walk(x, append(path, i), parents)
			}
		}
	}
	walk(doc, nil, nil)
	return pods
}

func clone(p []any) []any { return append([]any(nil), p...) }

func isContainerList(cs []any) bool {
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok {
			return false
		}
		if m["image"] == nil && m["name"] == nil && m["args"] == nil && m["command"] == nil {
			return false
		}
	}
	return true
}

func podFrom(spec map[string]any, path []any, parents []map[string]any) podInfo {
	pi := podInfo{Path: path, Replicas: 1}
	// The replica count lives on the template's owner: spec.replicas
	// (Deployment, StatefulSet, ReplicaSet, Ray worker groups, Kubeflow
	// replica specs) or spec.parallelism (Job).
	for i := len(parents) - 1; i >= 0 && i >= len(parents)-3; i-- {
		if n, ok := toInt(parents[i]["replicas"]); ok {
			pi.Replicas = n
			break
		}
		if n, ok := toInt(parents[i]["parallelism"]); ok {
			pi.Replicas = n
			break
		}
	}
	if ns, ok := spec["nodeSelector"].(map[string]any); ok {
		if s, ok := ns[gpuProductLabel].(string); ok {
			pi.Product, pi.ProductAt = s, append(clone(path), "nodeSelector", gpuProductLabel)
		}
	}
	if pi.Product == "" {
		pi.Product, pi.ProductAt = affinityProduct(spec, path)
	}
	pi.HostIPC, _ = spec["hostIPC"].(bool)
	shmVolumes := map[string]bool{}
	for _, v := range asList(spec["volumes"]) {
		vm, _ := v.(map[string]any)
		if ed, ok := vm["emptyDir"].(map[string]any); ok && strings.EqualFold(str(ed["medium"]), "memory") {
			shmVolumes[str(vm["name"])] = true
		}
	}
	for _, key := range []string{"initContainers", "containers"} {
		for i, c := range asList(spec[key]) {
			cm, _ := c.(map[string]any)
			ci := containerInfo{Path: append(clone(path), key, i), Name: str(cm["name"]), Image: str(cm["image"])}
			res, _ := cm["resources"].(map[string]any)
			for _, sect := range []string{"requests", "limits"} { // limits win
				rm, _ := res[sect].(map[string]any)
				for _, rk := range sortedKeys(rm) {
					n, ok := toInt(rm[rk])
					if !ok {
						continue
					}
					p := append(clone(ci.Path), "resources", sect, rk)
					switch {
					case rk == "nvidia.com/gpu":
						ci.GPU, ci.GPUPath = n, p
					case strings.HasPrefix(rk, "nvidia.com/mig-"):
						prof := strings.TrimPrefix(rk, "nvidia.com/mig-")
						replaced := false
						for j := range ci.MIG {
							if ci.MIG[j].Profile == prof {
								ci.MIG[j] = migRequest{prof, n, p}
								replaced = true
							}
						}
						if !replaced {
							ci.MIG = append(ci.MIG, migRequest{prof, n, p})
						}
					}
				}
			}
			for _, vmnt := range asList(cm["volumeMounts"]) {
				mm, _ := vmnt.(map[string]any)
				if str(mm["mountPath"]) == "/dev/shm" && shmVolumes[str(mm["name"])] {
					ci.ShmSize = true
				}
			}
			pi.Containers = append(pi.Containers, ci)
		}
	}
	return pi
}

// affinityProduct reads a single required GPU product from node affinity.
func affinityProduct(spec map[string]any, path []any) (string, []any) {
	terms, _ := lookupAny(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").([]any)
	for ti, t := range terms {
		tm, _ := t.(map[string]any)
		for ei, e := range asList(tm["matchExpressions"]) {
			em, _ := e.(map[string]any)
			vals := asList(em["values"])
			if str(em["key"]) == gpuProductLabel && str(em["operator"]) == "In" && len(vals) == 1 {
				return str(vals[0]), append(clone(path), "affinity", "nodeAffinity",
					"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", ti, "matchExpressions", ei, "values", 0)
			}
		}
	}
	return "", nil
}

func lookupAny(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// toInt reads a Kubernetes quantity that is a whole number ("1", 2).
func toInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case int:
		return int64(t), true
	case float64:
		if t == float64(int64(t)) {
			return int64(t), true
		}
	case string:
		var n int64
		s := strings.TrimSpace(t)
		if s == "" {
			return 0, false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return 0, false
			}
			n = n*10 + int64(r-'0')
			if n > 1<<40 {
				return 0, false
			}
		}
		return n, true
	}
	return 0, false
}

// podsInput renders pods in the plain form the rules read.
func podsInput(pods []podInfo) []any {
	out := make([]any, 0, len(pods))
	for _, p := range pods {
		cs := make([]any, 0, len(p.Containers))
		for _, c := range p.Containers {
			migs := make([]any, 0, len(c.MIG))
			sort.Slice(c.MIG, func(i, j int) bool { return c.MIG[i].Profile < c.MIG[j].Profile })
			for _, m := range c.MIG {
				migs = append(migs, map[string]any{"profile": m.Profile, "count": m.Count, "path": m.Path})
			}
			cm := map[string]any{"path": c.Path, "name": c.Name, "image": c.Image, "gpu": c.GPU, "mig": migs, "shm": c.ShmSize}
			if c.GPUPath != nil {
				cm["gpu_path"] = c.GPUPath
			}
			cs = append(cs, cm)
		}
		pm := map[string]any{"path": p.Path, "replicas": p.Replicas, "host_ipc": p.HostIPC, "containers": cs}
		if p.Product != "" {
			pm["product"] = p.Product
			pm["product_path"] = p.ProductAt
		}
		out = append(out, pm)
	}
	return out
}

// kubernetesSubjects adds the pods of a manifest to its subject and
// derives one vLLM subject per container that launches vLLM.
func (l *Linter) kubernetesSubjects(s *subject, proj *Project) ([]*subject, []finding.Finding) {
	pods := findPods(s.value)
	s.extra = map[string]any{"k8s": map[string]any{"pods": podsInput(pods)}}
	return l.vllmContainerSubjects(s, pods, proj)
}
