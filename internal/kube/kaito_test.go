package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadKAITOWorkspace(t *testing.T) {
	ws := func(api string, ann map[string]any, preset string) map[string]any {
		return map[string]any{"apiVersion": api, "kind": "Workspace",
			"metadata":  map[string]any{"name": "w", "annotations": ann},
			"resource":  map[string]any{"instanceType": "Standard_NC48ads_A100_v4", "count": int64(2)},
			"inference": map[string]any{"preset": map[string]any{"name": preset}, "config": "params"}}
	}
	full := KAITOWorkspace{Preset: "llama-3.3-70b-instruct", Model: "meta-llama/Llama-3.3-70B-Instruct",
		PresetAt: []any{"inference", "preset", "name"}, InstanceType: "Standard_NC48ads_A100_v4",
		InstanceTypeAt: []any{"resource", "instanceType"}, GPUs: []string{"A100-80GB-PCIe"}, PerNode: 2,
		Count: 2, CountAt: []any{"resource", "count"}, Config: "params", ConfigAt: []any{"inference", "config"}, VLLM: true}
	tests := []struct {
		name string
		doc  map[string]any
		want KAITOWorkspace
		ok   bool
	}{
		{"v1beta1 with a preset KAITO runs on vLLM", ws("kaito.sh/v1beta1", nil, "llama-3.3-70b-instruct"), full, true},
		{"v1alpha1 reads the same", ws("kaito.sh/v1alpha1", nil, "llama-3.3-70b-instruct"), full, true},
		{"the runtime annotation picks transformers", ws("kaito.sh/v1beta1", map[string]any{"kaito.sh/runtime": "transformers"}, "llama-3.3-70b-instruct"),
			func() KAITOWorkspace { w := full; w.VLLM = false; return w }(), true},
		{"a preset the table lacks has no model", ws("kaito.sh/v1beta1", nil, "my-model"),
			func() KAITOWorkspace { w := full; w.Preset, w.Model = "my-model", ""; return w }(), true},
		{"no preset", ws("kaito.sh/v1beta1", nil, ""), KAITOWorkspace{}, false},
		{"another group's Workspace", ws("example.com/v1", nil, "llama-3.3-70b-instruct"), KAITOWorkspace{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReadKAITOWorkspace(tc.doc)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("workspace (-want +got):\n%s", diff)
			}
		})
	}
}
