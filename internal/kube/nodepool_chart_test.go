package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The karpenter-resources chart renders its values as a NodePool whose
// labels are NodePool and NodeGroupType set to the name, then each
// one-key map of nodePool.labels; requirements are read as a NodePool's.
func TestReadNodePoolChartValues(t *testing.T) {
	values := func() map[string]any {
		return map[string]any{
			"name":        "g5-gpu-karpenter",
			"clusterName": "c",
			"nodePool": map[string]any{
				"labels": []any{map[string]any{"instanceType": "g5-gpu-karpenter"}, map[string]any{"type": "karpenter"}},
				"requirements": []any{
					map[string]any{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": []any{"g5"}},
					map[string]any{"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": []any{"2xlarge", "48xlarge"}},
				},
			},
		}
	}
	np, ok := ReadNodePoolChartValues(values())
	if !ok {
		t.Fatal("chart values not read as a pool")
	}
	wantLabels := map[string]string{"NodePool": "g5-gpu-karpenter", "NodeGroupType": "g5-gpu-karpenter",
		"instanceType": "g5-gpu-karpenter", "type": "karpenter"}
	if diff := cmp.Diff(wantLabels, np.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(np.Hints) != 1 || !cmp.Equal(np.Hints[0].GPUs, []string{"A10G"}) {
		t.Fatalf("hints = %+v, want one A10G hint", np.Hints)
	}
	if want := []any{"nodePool", "requirements", 0, "values", 0}; !cmp.Equal(np.Hints[0].Path, want) {
		t.Errorf("hint at %v, want %v", np.Hints[0].Path, want)
	}
	for _, sel := range []map[string]string{
		{"NodeGroupType": "g5-gpu-karpenter", "type": "karpenter"},
		{"instanceType": "g5-gpu-karpenter"},
		{"karpenter.sh/nodepool": "g5-gpu-karpenter"},
	} {
		if _, picks := np.Selects(sel); !picks {
			t.Errorf("Selects(%v) = false, want true", sel)
		}
	}

	for _, tc := range []struct {
		name   string
		edit   func(map[string]any)
		ok     bool
		labels map[string]string
	}{
		{name: "disabled", edit: func(m map[string]any) { m["nodePool"].(map[string]any)["enabled"] = false }},
		{name: "labels as a map are another chart's", edit: func(m map[string]any) {
			m["nodePool"].(map[string]any)["labels"] = map[string]any{"a": "b"}
		}},
		{name: "no nodePool", edit: func(m map[string]any) { delete(m, "nodePool") }},
		{name: "an unknown name leaves the labels written", ok: true,
			edit:   func(m map[string]any) { delete(m, "name") },
			labels: map[string]string{"instanceType": "g5-gpu-karpenter", "type": "karpenter"}},
		{name: "a label item contradicting the name label is not one label", ok: true,
			edit: func(m map[string]any) {
				np := m["nodePool"].(map[string]any)
				np["labels"] = append(np["labels"].([]any), map[string]any{"NodeGroupType": "other"})
			},
			labels: map[string]string{"NodePool": "g5-gpu-karpenter", "instanceType": "g5-gpu-karpenter", "type": "karpenter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := values()
			tc.edit(v)
			np, ok := ReadNodePoolChartValues(v)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok {
				if diff := cmp.Diff(tc.labels, np.Labels); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
			}
		})
	}
}
