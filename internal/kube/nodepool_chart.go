package kube

import (
	"github.com/gpulint/gpulint/internal/value"
)

// ReadNodePoolChartValues reads the values of the karpenter-resources
// Helm chart as the NodePool the chart renders from them. EKS platform
// repositories (awslabs/ai-on-eks, data-on-eks) declare their Karpenter
// pools as this chart's values in Terraform (the eks-data-addons module's
// karpenter_resources_helm_config, one Helm release per entry).
//
// The chart is aws-ia/terraform-aws-eks-data-addons
// helm-charts/karpenter-resources at v1.36.0
// (e560098d0b0cdbea7e7ddd2063ed4e5578c5be14, the module version
// ai-on-eks pins), templates/node-pool.yaml: when nodePool.enabled (true
// in values.yaml) it renders a karpenter.sh/v1 NodePool named .Values.name
// whose template labels are `NodePool: <name>`, `NodeGroupType: <name>`,
// then each one-key map of the list nodePool.labels, and whose
// requirements are nodePool.requirements as written.
//
// doc must hold a name and a nodePool map whose labels, if any, are a
// list (the chart's shape); a name Terraform fills in is unknown, and then
// so are the labels the chart derives from it. Hints are located in the
// values (nodePool requirements i values 0).
func ReadNodePoolChartValues(doc any) (NodePool, bool) {
	m, _ := doc.(map[string]any)
	pool, isMap := m["nodePool"].(map[string]any)
	if !isMap {
		return NodePool{}, false
	}
	if on, set := pool["enabled"].(bool); set && !on {
		return NodePool{}, false
	}
	labels, listed := pool["labels"].([]any)
	if _, has := pool["labels"]; has && !listed && pool["labels"] != nil {
		return NodePool{}, false
	}
	np := NodePool{Name: value.String(m["name"]), Labels: map[string]string{}}
	if np.Name != "" {
		np.Labels["NodePool"], np.Labels["NodeGroupType"] = np.Name, np.Name
	}
	conflict := map[string]bool{}
	for _, l := range labels {
		lm, _ := l.(map[string]any)
		for k, v := range lm {
			s := value.String(v)
			if s == "" || k == "" {
				continue
			}
			// The template writes each item after the name labels; a
			// key written twice with different values is not one label.
			if old, dup := np.Labels[k]; dup && old != s {
				conflict[k] = true
			}
			np.Labels[k] = s
		}
	}
	for k := range conflict {
		delete(np.Labels, k)
	}
	if np.Name == "" && len(np.Labels) == 0 {
		return NodePool{}, false
	}
	reqs, _ := pool["requirements"].([]any)
	for _, h := range TermsHints([]any{map[string]any{"matchExpressions": reqs}}, nil) {
		// TermsHints locates [0 matchExpressions i values 0]; relocate.
		h.Path = append([]any{"nodePool", "requirements"}, h.Path[2:]...)
		np.Hints = append(np.Hints, h)
	}
	return np, true
}
