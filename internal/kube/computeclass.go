package kube

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// ComputeClass is a GKE custom ComputeClass (cloud.google.com/v1): a pod
// selects it with the node selector cloud.google.com/compute-class set to
// its name, and GKE creates the pod's nodes from the first of its
// priorities it can obtain, falling back down the list
// (https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes;
// fields: https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass,
// spec.priorities[].gpu.type and .count, .machineType). gpu.type takes the
// accelerator names of the cloud.google.com/gke-accelerator label.
type ComputeClass struct {
	Name string
	// Hints holds, for each priority, what it states of the GPU: its
	// gpu.type, else its machineType; a priority stating neither (a
	// machine family, a node pool list) has an unknown hint.
	Hints []NodeHint
}

// ComputeClassLabel is the node selector label naming a ComputeClass.
const ComputeClassLabel = "cloud.google.com/compute-class"

// ReadComputeClass reads a ComputeClass document; false for any other
// kind.
func ReadComputeClass(doc any) (ComputeClass, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "ComputeClass" || !strings.HasPrefix(value.String(m["apiVersion"]), "cloud.google.com/") {
		return ComputeClass{}, false
	}
	cc := ComputeClass{Name: value.String(LookupAny(m, "metadata", "name"))}
	if cc.Name == "" {
		return ComputeClass{}, false
	}
	ps, _ := LookupAny(m, "spec", "priorities").([]any)
	for i, p := range ps {
		pm, _ := p.(map[string]any)
		path := []any{"spec", "priorities", i}
		switch {
		case value.String(LookupAny(pm, "gpu", "type")) != "":
			cc.Hints = append(cc.Hints, hintFor(gkeAcceleratorLabel, []string{value.String(LookupAny(pm, "gpu", "type"))},
				append(path, "gpu", "type")))
		case value.String(pm["machineType"]) != "":
			cc.Hints = append(cc.Hints, hintFor(instanceTypeLabel, []string{value.String(pm["machineType"])},
				append(path, "machineType")))
		default:
			cc.Hints = append(cc.Hints, NodeHint{Path: path})
		}
	}
	return cc, true
}

// GPU returns the catalog GPU every priority of the class states and
// where the first states it; false when a priority states none the
// hardware table knows, or two state different GPUs, since the pod may
// then run on either.
func (cc ComputeClass) GPU() (string, []any, bool) {
	var gpu string
	var at []any
	for _, h := range cc.Hints {
		if len(h.GPUs) != 1 || (gpu != "" && h.GPUs[0] != gpu) {
			return "", nil, false
		}
		if gpu == "" {
			gpu, at = h.GPUs[0], h.Path
		}
	}
	return gpu, at, gpu != ""
}
