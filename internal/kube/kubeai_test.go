package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadKubeAIModel(t *testing.T) {
	model := func(spec map[string]any) any {
		return map[string]any{"apiVersion": "kubeai.org/v1", "kind": "Model", "spec": spec}
	}
	args := []any{"spec", "args"}
	tests := []struct {
		name string
		doc  any
		want KubeAIModel
		ok   bool
	}{
		{"hf url and a known profile with a count",
			model(map[string]any{"engine": "VLLM", "url": "hf://meta-llama/Llama-3.1-8B-Instruct", "resourceProfile": "nvidia-gpu-l4:2"}),
			KubeAIModel{Model: "meta-llama/Llama-3.1-8B-Instruct", ModelAt: []any{"spec", "url"}, Profile: "nvidia-gpu-l4:2",
				ProfileAt: []any{"spec", "resourceProfile"}, GPUs: []string{"L4"}, Count: 2, ArgsAt: args}, true},
		{"a pvc url names no model; an unknown profile no GPU",
			model(map[string]any{"engine": "VLLM", "url": "pvc://models/llama", "resourceProfile": "my-gpus:1"}),
			KubeAIModel{Profile: "my-gpus:1", ProfileAt: []any{"spec", "resourceProfile"}, Count: 1, ArgsAt: args}, true},
		{"another engine", model(map[string]any{"engine": "OLlama", "url": "ollama://qwen2:0.5b"}), KubeAIModel{}, false},
		{"another kind", map[string]any{"apiVersion": "v1", "kind": "Model"}, KubeAIModel{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReadKubeAIModel(tc.doc)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadKubeAIModel (-want +got):\n%s", diff)
			}
		})
	}
}
