package kube

import (
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/value"
)

// hardwareTSV maps node labels, cloud instance types and scheduler
// profiles to catalog GPUs, one source per row (see its header).
//
//go:embed hardware.tsv
var hardwareTSV string

// HardwareRow is one entry of the hardware table: a value of one kind
// (gke-accelerator, instance-type, instance-family, karpenter-gpu-name,
// kubeai-profile, gpu-memory) naming a catalog GPU and, where the value says it, the
// GPUs per node.
type HardwareRow struct {
	Kind, Value, GPU string
	Count            int
	Source           string
}

// HardwareTable returns the parsed table; a malformed row panics, which a
// test covers (the table is embedded).
func HardwareTable() []HardwareRow { return slices.Clone(hardwareTable()) }

var hardwareTable = sync.OnceValue(func() []HardwareRow {
	var rows []HardwareRow
	for i, line := range strings.Split(hardwareTSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "kind\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			panic("hardware.tsv:" + strconv.Itoa(i+1) + ": want 5 columns")
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			panic("hardware.tsv:" + strconv.Itoa(i+1) + ": count " + f[3])
		}
		rows = append(rows, HardwareRow{Kind: f[0], Value: f[1], GPU: f[2], Count: n, Source: f[4]})
	}
	return rows
})

// Node labels and fields that name the hardware a pod runs on
// (reference: kubernetes-gpu.md §3, §10).
const (
	gkeAcceleratorLabel   = "cloud.google.com/gke-accelerator"
	instanceTypeLabel     = "node.kubernetes.io/instance-type"
	betaInstanceTypeLabel = "beta.kubernetes.io/instance-type"
	karpenterGPUName      = "karpenter.k8s.aws/instance-gpu-name"
	karpenterFamily       = "karpenter.k8s.aws/instance-family"
	// GPUMemoryLabel is GPU Feature Discovery's total memory of the node's
	// GPU in MiB, as NVML reports it (NVIDIA/k8s-device-plugin
	// internal/lm/resource.go @ aaccdfd2, GetTotalMemoryMB; reference:
	// kubernetes-gpu.md §3, §3.1). Its value names GPUs only as
	// candidates: several GPUs share one memory size.
	GPUMemoryLabel = "nvidia.com/gpu.memory"
)

// hintLabels maps the labels read from node selectors and affinity to
// the table kind their values are looked up in.
var hintLabels = map[string]string{
	gkeAcceleratorLabel:   "gke-accelerator",
	instanceTypeLabel:     "instance-type",
	betaInstanceTypeLabel: "instance-type",
	karpenterGPUName:      "karpenter-gpu-name",
	karpenterFamily:       "instance-family",
	GPUMemoryLabel:        "gpu-memory",
}

// NodeHint is one statement of a pod spec about the GPU of the nodes it
// may run on: a node selector or a required node-affinity In expression
// on a label the hardware table knows.
type NodeHint struct {
	Label  string
	Values []string // as written; several for an affinity In
	// GPUs are the catalog GPUs the values name (several when the values
	// name different GPUs, or one value several); empty when the table
	// does not know any value.
	GPUs []string
	// Count is the GPUs per node every value states, 0 when they do not
	// all state the same.
	Count   int
	Sources []string
	Path    []any // the first value's location
}

// Unknown reports whether the table knows none of the hint's values.
func (h NodeHint) Unknown() bool { return len(h.GPUs) == 0 }

// LookupHardware returns the table rows for a value of a kind. An
// instance type is matched whole (lower case, a SageMaker "ml." prefix
// dropped, as SageMaker names EC2 instance types), else by its family
// (the part before the first dot), whose rows state no count.
func LookupHardware(kind, v string) []HardwareRow {
	v = strings.ToLower(strings.TrimSpace(v))
	if kind == "instance-type" {
		v = strings.TrimPrefix(v, "ml.")
	}
	var out []HardwareRow
	for _, r := range hardwareTable() {
		if r.Kind == kind && r.Value == v {
			out = append(out, r)
		}
	}
	if len(out) == 0 && kind == "instance-type" {
		if fam, _, ok := strings.Cut(v, "."); ok {
			return LookupHardware("instance-family", fam)
		}
	}
	if kind == "kubeai-profile" && len(out) == 0 {
		if p, _, ok := strings.Cut(v, ":"); ok {
			return LookupHardware(kind, p)
		}
	}
	return out
}

// hintFor builds the hint for a label's values.
func hintFor(label string, vals []string, path []any) NodeHint {
	h := NodeHint{Label: label, Values: vals, Path: path}
	kind := hintLabels[label]
	counts := map[int]bool{}
	for _, v := range vals {
		rows := LookupHardware(kind, v)
		if len(rows) == 0 {
			counts[0] = true
		}
		for _, r := range rows {
			if !slices.Contains(h.GPUs, r.GPU) {
				h.GPUs = append(h.GPUs, r.GPU)
			}
			if !slices.Contains(h.Sources, r.Source) {
				h.Sources = append(h.Sources, r.Source)
			}
			counts[r.Count] = true
		}
	}
	if len(counts) == 1 {
		for n := range counts {
			h.Count = n
		}
	}
	return h
}

// nodeHints reads the hardware hints of a pod spec at path: its node
// selector, then its required node affinity (In expressions).
func nodeHints(spec map[string]any, path []any) []NodeHint {
	var out []NodeHint
	if ns, ok := spec["nodeSelector"].(map[string]any); ok {
		for _, k := range value.SortedKeys(ns) {
			if hintLabels[k] == "" {
				continue
			}
			if s := value.String(ns[k]); s != "" {
				out = append(out, hintFor(k, []string{s}, append(clone(path), "nodeSelector", k)))
			}
		}
	}
	terms, _ := LookupAny(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").([]any)
	return append(out, TermsHints(terms, append(clone(path), "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))...)
}

// TermsHints reads the hardware hints of required node selector terms
// (a list at path, as in a pod's node affinity or a chart's
// nodeSelectorTerms value).
func TermsHints(terms []any, path []any) []NodeHint {
	if len(terms) != 1 {
		// Terms are ORed: with several, any one of them may place the pod.
		return nil
	}
	var out []NodeHint
	tm, _ := terms[0].(map[string]any)
	for ei, e := range value.List(tm["matchExpressions"]) {
		em, _ := e.(map[string]any)
		key := value.String(em["key"])
		if hintLabels[key] == "" || value.String(em["operator"]) != "In" {
			continue
		}
		var vals []string
		for _, v := range value.List(em["values"]) {
			if s := value.String(v); s != "" {
				vals = append(vals, s)
			}
		}
		if len(vals) == 0 {
			continue
		}
		out = append(out, hintFor(key, vals, append(clone(path), 0, "matchExpressions", ei, "values", 0)))
	}
	return out
}

// PodSpecHints reads the hardware hints of a map laid out as a pod spec's
// scheduling fields (nodeSelector, affinity) at path, such as a chart's
// values that its template copies into the pod spec.
func PodSpecHints(spec map[string]any, path []any) []NodeHint { return nodeHints(spec, path) }
