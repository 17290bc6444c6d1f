package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadNodePool(t *testing.T) {
	doc := map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "g5-gpu"},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"NodeGroupType": "g5-gpu", "type": "karpenter"}},
			"spec": map[string]any{"requirements": []any{
				map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
				map[string]any{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": []any{"g5"}},
			}},
		}},
	}
	np, ok := ReadNodePool(doc)
	if !ok {
		t.Fatal("not read as a NodePool")
	}
	if np.Name != "g5-gpu" || len(np.Hints) != 1 || !cmp.Equal(np.Hints[0].GPUs, []string{"A10G"}) {
		t.Fatalf("NodePool = %+v, want g5-gpu with one A10G hint", np)
	}
	if want := []any{"spec", "template", "spec", "requirements", 1, "values", 0}; !cmp.Equal(np.Hints[0].Path, want) {
		t.Errorf("hint at %v, want %v", np.Hints[0].Path, want)
	}
	for _, tc := range []struct {
		sel  map[string]string
		want bool
	}{
		{map[string]string{"karpenter.sh/nodepool": "g5-gpu"}, true},
		{map[string]string{"karpenter.sh/nodepool": "other"}, false},
		{map[string]string{"NodeGroupType": "g5-gpu", "type": "karpenter"}, true},
		{map[string]string{"NodeGroupType": "g5-gpu", "kubernetes.io/arch": "amd64"}, true},
		{map[string]string{"type": "karpenter", "NodeGroupType": "cpu"}, false},
		{map[string]string{"NodeGroupType": "g5-gpu", "team": "a"}, false}, // a label the pool does not set
		{map[string]string{"kubernetes.io/arch": "amd64"}, false},          // no label of the pool's own
	} {
		if _, got := np.Selects(tc.sel); got != tc.want {
			t.Errorf("Selects(%v) = %v, want %v", tc.sel, got, tc.want)
		}
	}
	doc["apiVersion"] = "example.com/v1"
	if _, ok := ReadNodePool(doc); ok {
		t.Error("a NodePool of another API group was read as Karpenter's")
	}
}
