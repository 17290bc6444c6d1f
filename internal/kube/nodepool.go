package kube

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// NodePool is a Karpenter NodePool (karpenter.sh/v1 or v1beta1): the
// nodes it creates carry its template's labels and the well-known label
// karpenter.sh/nodepool with its name, and are limited to its
// requirements (https://karpenter.sh/docs/concepts/nodepools/:
// spec.template.metadata.labels, spec.template.spec.requirements with
// key/operator/values; https://karpenter.sh/docs/concepts/scheduling/,
// well-known labels: karpenter.sh/nodepool). The requirements on labels
// the hardware table knows (instance type, instance family, GPU name)
// state its nodes' GPU.
type NodePool struct {
	Name   string
	Labels map[string]string
	Hints  []NodeHint // located in the NodePool's document
}

// NodePoolLabel is the label Karpenter sets on a node to its NodePool's
// name.
const NodePoolLabel = "karpenter.sh/nodepool"

// ReadNodePool reads a NodePool document; false for any other kind.
func ReadNodePool(doc any) (NodePool, bool) {
	m, _ := doc.(map[string]any)
	if value.String(m["kind"]) != "NodePool" || !strings.HasPrefix(value.String(m["apiVersion"]), "karpenter.sh/") {
		return NodePool{}, false
	}
	np := NodePool{Name: value.String(LookupAny(m, "metadata", "name")), Labels: map[string]string{}}
	if np.Name == "" {
		return NodePool{}, false
	}
	if ls, ok := LookupAny(m, "spec", "template", "metadata", "labels").(map[string]any); ok {
		for k, v := range ls {
			if s := value.String(v); s != "" {
				np.Labels[k] = s
			}
		}
	}
	reqs, _ := LookupAny(m, "spec", "template", "spec", "requirements").([]any)
	// The requirements are one term: every one holds (a NodePool's
	// requirements are ANDed), read as a node affinity's matchExpressions.
	for _, h := range TermsHints([]any{map[string]any{"matchExpressions": reqs}}, nil) {
		// TermsHints locates [0 matchExpressions i values 0]; relocate.
		h.Path = append([]any{"spec", "template", "spec", "requirements"}, h.Path[2:]...)
		np.Hints = append(np.Hints, h)
	}
	return np, true
}

// Selects reports whether a pod's nodeSelector places it on the pool's
// nodes: it names the pool (karpenter.sh/nodepool), or it states at
// least one label the pool's template sets, each with the pool's value,
// and no other label except well-known ones (kubernetes.io, karpenter.sh,
// karpenter.k8s.aws), which the pool's requirements bound. The label that
// decided is returned.
func (np NodePool) Selects(sel map[string]string) (string, bool) {
	if v, ok := sel[NodePoolLabel]; ok {
		return NodePoolLabel, v == np.Name
	}
	decided := ""
	for _, k := range value.SortedKeys(anyMap(sel)) {
		v, ok := np.Labels[k]
		switch {
		case !ok && wellKnown(k):
			continue
		case !ok || v != sel[k]:
			return "", false
		case decided == "":
			decided = k
		}
	}
	return decided, decided != ""
}

func wellKnown(label string) bool {
	dom, _, ok := strings.Cut(label, "/")
	return ok && (dom == "karpenter.sh" || dom == "karpenter.k8s.aws" || dom == "kubernetes.io" || strings.HasSuffix(dom, ".kubernetes.io"))
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
