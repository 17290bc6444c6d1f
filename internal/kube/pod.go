// Package kube reads the workload facts of Kubernetes manifests: pod
// templates (in built-in kinds and the CRDs that embed them), their
// containers' GPU requests, MIG slices and /dev/shm mounts, node selectors
// and affinity, and the sizes of multi-pod workloads. It returns plain
// data; the rules' input shape is the linter's business.
package kube

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/value"
)

// gpuProductLabel is the node label GPU feature discovery sets
// (reference: kubernetes-gpu.md §3).
const gpuProductLabel = "nvidia.com/gpu.product"

// migStrategyLabel is the node label GPU feature discovery sets to the
// device plugin's MIG strategy (reference: kubernetes-gpu.md §2, §3).
const migStrategyLabel = "nvidia.com/mig.strategy"

// modelLabel is the pod label GKE's AI/ML manifests set to the model the
// pod serves, beside ai.gke.io/inference-server: GKE Inference Quickstart
// (gcloud container ai profiles manifests create) writes it, as do the
// GKE serving tutorials' manifests (GoogleCloudPlatform/kubernetes-engine-
// samples ai-ml/llm-serving-gemma/vllm/vllm-3-27b-it.yaml @ main,
// "ai.gke.io/model: gemma-3-27b-it" for google/gemma-3-27b-it;
// cloud.google.com/kubernetes-engine/docs/tutorials/serve-gemma-gpu-vllm).
// Its value is a short name, not a Hugging Face id: a name-only hint.
const modelLabel = "ai.gke.io/model"

// Pod is what the rules need to know about one pod template.
type Pod struct {
	Path []any
	// Replicas is the template owner's replicas or parallelism (1 when
	// absent); 0 when it is a template variable, unknown until rendered.
	Replicas  int64
	Product   string
	ProductAt []any
	// MIGStrategy is the nvidia.com/mig.strategy node selector, if any.
	MIGStrategy   string
	MIGStrategyAt []any
	// Hints are the node selector and affinity statements naming the
	// nodes' GPU by a label the hardware table knows (hardware.tsv).
	Hints []NodeHint
	// NodeSelector is the pod's nodeSelector (string values), at
	// NodeSelectorAt: labels a NodePool of the repository may set.
	NodeSelector   map[string]string
	NodeSelectorAt []any
	// Group names the multi-pod workload the template belongs to (its
	// pods share one job or server): leader-worker-set, ray, kubeflow,
	// jobset or kserve; empty for a self-contained pod.
	Group   string
	HostIPC bool
	// ModelLabel is the pod template's ai.gke.io/model label, the short
	// name of the model the pod serves, at ModelLabelAt; empty if none.
	ModelLabel   string
	ModelLabelAt []any
	Containers   []Container
	// GroupPods, GroupGPUs and WorldSize describe one instance of the
	// multi-pod workload (see groupSizes); zero for a self-contained pod
	// and where a count they rest on is a template variable (WorldSize
	// alone when only the processes per pod is).
	GroupPods, GroupGPUs, WorldSize int64
}

// Container describes one container's GPU request and launch.
type Container struct {
	Path    []any
	Name    string
	Image   string
	GPU     int64 // nvidia.com/gpu limit (or request when no limit)
	GPUPath []any
	// MIG lists nvidia.com/mig-<profile> requests.
	MIG     []MIGRequest
	ShmSize bool // a memory-backed /dev/shm is mounted
	// ShmMount is set when anything is mounted at /dev/shm.
	ShmMount bool
	// Resources lists every GPU-count resource as written, requests and
	// limits both, so rules can check quantities and their agreement.
	Resources []GPUResource
	// VLLM holds the parallel sizes of the vLLM server the container
	// launches, nil when it launches none.
	VLLM *VLLMParallel
	// Mounts are the container's volume mounts; ConfigMap is empty in a
	// mount of another kind of volume.
	Mounts []ConfigMapMount
}

// MIGRequest is one nvidia.com/mig-<profile> request of a container.
type MIGRequest struct {
	Profile string
	Count   int64
	Path    []any
}

// GPUResource is one GPU-count extended resource in requests or limits.
type GPUResource struct {
	Name    string
	Section string // "requests" or "limits"
	Value   any    // as parsed
	Count   int64  // the quantity, when Integer
	Integer bool   // a whole, non-negative number (Kubernetes rejects anything else)
	// Placeholder marks a value that is only a template variable ($GPUS,
	// ${GPUS}): rendered before apply, so its quantity is unknown, not
	// invalid.
	Placeholder bool
	Path        []any
}

// VLLMParallel are a vLLM server's parallel sizes (absent flags are 1).
type VLLMParallel struct {
	TP, PP, DP int64
	// DPLocal is --data-parallel-size-local (0 when absent).
	DPLocal int64
}

// FindPods walks a manifest for pod specs: any map with a containers list,
// so Deployments, Jobs and CRDs (PyTorchJob, RayCluster, LeaderWorkerSet,
// KServe) are covered by one walk, plus the container fields some CRDs
// write inline (KServe predictor.model, TrainJob trainer). Pods of one
// multi-pod workload get its size (groupSizes).
func FindPods(doc any) []Pod {
	var pods []Pod
	var walk func(v any, path []any, parents []map[string]any)
	walk = func(v any, path []any, parents []map[string]any) {
		switch t := v.(type) {
		case map[string]any:
			cs, _ := t["containers"].([]any)
			list := len(cs) > 0 && isContainerList(cs)
			inline := inlineContainers(t, path)
			if list || len(inline) > 0 {
				pi := podFrom(t, clone(path), parents, inline)
				pi.Group = podGroup(path)
				pods = append(pods, pi)
			}
			for _, k := range value.SortedKeys(t) {
				walk(t[k], append(path, k), append(parents, t))
			}
		case []any:
			for i, x := range t {
				walk(x, append(path, i), parents)
			}
		}
	}
	walk(doc, nil, nil)
	groupSizes(doc, pods)
	return pods
}

func clone(p []any) []any { return append([]any(nil), p...) }

// groupKeys mark pod templates that are one member of a multi-pod
// workload: one server or job spans the pods (kubernetes-gpu.md §7).
var groupKeys = map[string]string{
	"leaderWorkerTemplate": "leader-worker-set",
	"headGroupSpec":        "ray",
	"workerGroupSpecs":     "ray",
	"pytorchReplicaSpecs":  "kubeflow",
	"tfReplicaSpecs":       "kubeflow",
	"mpiReplicaSpecs":      "kubeflow",
	"paddleReplicaSpecs":   "kubeflow",
	"xgbReplicaSpecs":      "kubeflow",
	"replicatedJobs":       "jobset",
	"workerSpec":           "kserve",
	"worker":               "kserve",
	"trainer":              "kubeflow", // TrainJob spec.trainer (inline)
}

// podGroup names the multi-pod workload a pod template at path belongs to.
func podGroup(path []any) string {
	for _, p := range path {
		if k, ok := p.(string); ok && groupKeys[k] != "" {
			return groupKeys[k]
		}
	}
	return ""
}

// isGPUCountResource reports the extended resources that count GPUs or
// GPU slices (kubernetes-gpu.md §1, §2).
func isGPUCountResource(name string) bool {
	switch name {
	case "nvidia.com/gpu", "nvidia.com/gpu.shared", "amd.com/gpu":
		return true
	}
	return strings.HasPrefix(name, "nvidia.com/mig-")
}

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

func podFrom(spec map[string]any, path []any, parents []map[string]any, inline []inlineContainer) Pod {
	pi := Pod{Path: path, Replicas: 1}
	// The replica count lives on the template's owner: spec.replicas
	// (Deployment, StatefulSet, ReplicaSet, Ray worker groups, Kubeflow
	// replica specs) or spec.parallelism (Job).
	// A template variable there ($NUM_NODES) leaves the count unknown (0).
	for i := len(parents) - 1; i >= 0 && i >= len(parents)-3; i-- {
		if IsPlaceholder(parents[i]["replicas"]) || IsPlaceholder(parents[i]["parallelism"]) {
			pi.Replicas = 0
			break
		}
		if n, ok := ToInt(parents[i]["replicas"]); ok {
			pi.Replicas = n
			break
		}
		if n, ok := ToInt(parents[i]["parallelism"]); ok {
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
	pi.Hints = nodeHints(spec, path)
	if ns, ok := spec["nodeSelector"].(map[string]any); ok {
		pi.NodeSelector = map[string]string{}
		for k, v := range ns {
			if sv := value.String(v); sv != "" {
				pi.NodeSelector[k] = sv
			}
		}
		pi.NodeSelectorAt = append(clone(path), "nodeSelector")
	}
	if ns, ok := spec["nodeSelector"].(map[string]any); ok {
		if s, ok := ns[migStrategyLabel].(string); ok {
			pi.MIGStrategy, pi.MIGStrategyAt = s, append(clone(path), "nodeSelector", migStrategyLabel)
		}
	}
	pi.HostIPC, _ = spec["hostIPC"].(bool)
	if len(parents) > 0 && len(path) > 0 {
		// The pod template holding this spec carries the pod's labels.
		meta, _ := parents[len(parents)-1]["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if s, ok := labels[modelLabel].(string); ok && s != "" && !IsPlaceholder(s) {
			pi.ModelLabel = s
			pi.ModelLabelAt = append(clone(path[:len(path)-1]), "metadata", "labels", modelLabel)
		}
	}
	vols := podVolumes{shm: map[string]bool{}, configMaps: map[string]ConfigMapMount{}}
	for _, v := range value.List(spec["volumes"]) {
		vm, _ := v.(map[string]any)
		if ed, ok := vm["emptyDir"].(map[string]any); ok && strings.EqualFold(value.String(ed["medium"]), "memory") {
			vols.shm[value.String(vm["name"])] = true
		}
		if c, ok := vm["configMap"].(map[string]any); ok {
			vols.configMaps[value.String(vm["name"])] = configMapVolume(c)
		}
	}
	var members []inlineContainer
	for _, key := range []string{"initContainers", "containers"} {
		for i := range value.List(spec[key]) {
			members = append(members, inlineContainer{path: []any{key, i}, resources: "resources"})
		}
	}
	members = append(members, inline...)
	for _, m := range members {
		cm, _ := LookupAt(spec, m.path).(map[string]any)
		ci := containerFrom(cm, append(clone(path), m.path...), m.resources, vols)
		if ci.Name == "" && len(ci.Path) > 0 {
			ci.Name = fmt.Sprint(ci.Path[len(ci.Path)-1]) // an inline container: its key
		}
		pi.Containers = append(pi.Containers, ci)
	}
	return pi
}

// affinityProduct reads a single required GPU product from node affinity.
func affinityProduct(spec map[string]any, path []any) (string, []any) {
	terms, _ := LookupAny(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").([]any)
	for ti, t := range terms {
		tm, _ := t.(map[string]any)
		for ei, e := range value.List(tm["matchExpressions"]) {
			em, _ := e.(map[string]any)
			vals := value.List(em["values"])
			if value.String(em["key"]) == gpuProductLabel && value.String(em["operator"]) == "In" && len(vals) == 1 {
				return value.String(vals[0]), append(clone(path), "affinity", "nodeAffinity",
					"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", ti, "matchExpressions", ei, "values", 0)
			}
		}
	}
	return "", nil
}

// LookupAny steps into nested maps by key; nil when a step is missing.
func LookupAny(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// ToInt reads a count that is a whole, non-negative number ("1", 2).
func ToInt(v any) (int64, bool) {
	n, ok := value.Int(v)
	return n, ok && n >= 0
}

// QuantityInt reads a Kubernetes quantity as a whole number: integers,
// integral floats and quantity strings ("2", "1.0", "1000m", "1k").
// integer is false for fractions, negative or unparsable values, which
// API validation rejects for extended resources (kubernetes-gpu.md §1).
func QuantityInt(v any) (n int64, integer bool) {
	switch t := v.(type) {
	case int64:
		return t, t >= 0
	case int:
		return int64(t), t >= 0
	case float64:
		if t >= 0 && t == math.Trunc(t) && t < 1<<53 {
			return int64(t), true
		}
		return 0, false
	case string:
		m := quantityPattern().FindStringSubmatch(strings.TrimSpace(t))
		if m == nil {
			return 0, false
		}
		r, ok := new(big.Rat).SetString(m[1])
		if !ok {
			return 0, false
		}
		if mult, ok := quantitySuffixes[m[2]]; ok {
			r.Mul(r, mult)
		} else if m[2] != "" {
			return 0, false
		}
		if r.Sign() < 0 || !r.IsInt() || !r.Num().IsInt64() {
			return 0, false
		}
		return r.Num().Int64(), true
	}
	return 0, false
}

// quantityPattern splits a quantity into number and suffix
// (k8s.io/apimachinery resource.Quantity: decimal SI, binary SI, or an
// exponent).
var quantityPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$`)
})

// quantitySuffixes are the Kubernetes quantity suffixes.
var quantitySuffixes = map[string]*big.Rat{
	"m": big.NewRat(1, 1000), "k": big.NewRat(1000, 1), "M": big.NewRat(1e6, 1),
	"G": big.NewRat(1e9, 1), "T": big.NewRat(1e12, 1),
	"Ki": big.NewRat(1<<10, 1), "Mi": big.NewRat(1<<20, 1), "Gi": big.NewRat(1<<30, 1), "Ti": big.NewRat(1<<40, 1),
}
