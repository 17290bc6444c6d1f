package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadComputeClass(t *testing.T) {
	prio := func(ps ...any) map[string]any {
		return map[string]any{"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass",
			"metadata": map[string]any{"name": "gpu-x"}, "spec": map[string]any{"priorities": ps}}
	}
	gpu := func(t string) any { return map[string]any{"gpu": map[string]any{"type": t, "count": int64(1)}} }
	tests := []struct {
		name    string
		doc     any
		wantGPU string
		wantAt  []any
	}{
		{"every priority the same GPU", prio(gpu("nvidia-h100-80gb"), map[string]any{"machineType": "a3-highgpu-1g"}),
			"H100-80GB", []any{"spec", "priorities", 0, "gpu", "type"}},
		{"a fallback to another GPU", prio(gpu("nvidia-h100-80gb"), gpu("nvidia-l4")), "", nil},
		{"a fallback to a machine family", prio(gpu("nvidia-l4"), map[string]any{"machineFamily": "n2"}), "", nil},
		{"an accelerator the table lacks", prio(gpu("nvidia-future-1")), "", nil},
		{"no priorities", prio(), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cc, ok := ReadComputeClass(tc.doc)
			if !ok || cc.Name != "gpu-x" {
				t.Fatalf("not read: %v %q", ok, cc.Name)
			}
			g, at, _ := cc.GPU()
			if g != tc.wantGPU || !cmp.Equal(at, tc.wantAt) {
				t.Errorf("GPU %q at %v, want %q at %v", g, at, tc.wantGPU, tc.wantAt)
			}
		})
	}
	if _, ok := ReadComputeClass(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "ComputeClass"}); ok {
		t.Error("read a ComputeClass of another API group")
	}
}
