package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNIMImage(t *testing.T) {
	for _, tc := range []struct {
		image, want string
		ok          bool
	}{
		{"nvcr.io/nim/meta/llama-3.1-8b-instruct", "meta/llama-3.1-8b-instruct", true},
		{"nvcr.io/nim/meta/llama-3.1-70b-instruct:1.3.3", "meta/llama-3.1-70b-instruct", true},
		{"nvcr.io/nim/mistralai/Mistral-7B-Instruct-v0.3@sha256:abc", "mistralai/mistral-7b-instruct-v0.3", true},
		{"nvcr.io/nim/nvidia/llm-nim:1.13", "nvidia/llm-nim", true},
		{"nvcr.io/nvidia/tritonserver:24.08-py3", "", false},
		{"nvcr.io/nim/meta/${MODEL}", "", false},
		{"nvcr.io/nim/llama3", "", false},
		{"vllm/vllm-openai:v0.8.5", "", false},
	} {
		got, ok := NIMImage(tc.image)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NIMImage(%q) = %q, %v; want %q, %v", tc.image, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseNIMProfile(t *testing.T) {
	for _, tc := range []struct {
		name string
		want NIMProfile
	}{
		{"tensorrt_llm-A100-fp16-tp2-latency", NIMProfile{Backend: "tensorrt_llm", Precision: "fp16", TP: 2, Known: true}},
		{"vllm-bf16-tp4-pp1-lora", NIMProfile{Backend: "vllm", Precision: "bf16", TP: 4, PP: 1, Known: true}},
		{"tensorrt_llm-h100-fp8-tp1-pp1-throughput", NIMProfile{Backend: "tensorrt_llm", Precision: "fp8", TP: 1, PP: 1, Known: true}},
		// A hash ID names nothing gpulint can read.
		{"751382df4272eafc83f541f364d61b35aed9cce8c7b0c869269cea5a366cd08c", NIMProfile{}},
		{"", NIMProfile{}},
		{"vllm-tp2", NIMProfile{Backend: "vllm", TP: 2}},
	} {
		if diff := cmp.Diff(tc.want, ParseNIMProfile(tc.name)); diff != "" {
			t.Errorf("ParseNIMProfile(%q) (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A NIMService yields its NIM's model, GPUs, scheduling, profile and
// context length; retrieval NIMs are marked, other documents refused.
func TestReadNIMService(t *testing.T) {
	svc := func(image, extra string) any {
		return map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService", "spec": map[string]any{
			"image":        map[string]any{"repository": image, "tag": "1.3.3"},
			"resources":    map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(2)}},
			"nodeSelector": map[string]any{"nvidia.com/gpu.product": "NVIDIA-A10G"},
			"storage":      map[string]any{"nimCache": map[string]any{"name": "c", "profile": extra}},
			"env": []any{map[string]any{"name": "NIM_MAX_MODEL_LEN", "value": "8192"},
				map[string]any{"name": "NGC_API_KEY", "valueFrom": map[string]any{}}},
		}}
	}
	n, ok := ReadNIMService(svc("nvcr.io/nim/meta/llama-3.1-8b-instruct", "vllm-bf16-tp2"))
	if !ok {
		t.Fatal("not read")
	}
	got := []any{n.Model, n.NotLLM, n.GPUs, n.GPUsAt, n.Pod.Product, n.Pod.ProductAt, n.MaxModelLen, n.MaxModelLenAt, n.Profile, n.ProfileAt, n.MultiNode}
	want := []any{"meta/llama-3.1-8b-instruct", "", int64(2), []any{"spec", "resources", "limits", "nvidia.com/gpu"},
		"NVIDIA-A10G", []any{"spec", "nodeSelector", "nvidia.com/gpu.product"}, int64(8192), []any{"spec", "env", 0},
		"vllm-bf16-tp2", []any{"spec", "storage", "nimCache", "profile"}, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n, _ := ReadNIMService(svc("nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2", "")); n.NotLLM == "" {
		t.Error("embedding NIM not marked")
	}
	if n, _ := ReadNIMService(svc("nvcr.io/nim/meta/llama-3.1-8b-instruct", "")); n.Profile != "" {
		t.Errorf("empty profile read as %q", n.Profile)
	}
	if _, ok := ReadNIMService(map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMCache"}); ok {
		t.Error("NIMCache read as a NIMService")
	}
	if _, ok := ReadNIMService(map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService", "spec": "x"}); ok {
		t.Error("NIMService without an image read")
	}
	// Fields of the wrong shape are skipped, not a panic.
	n, ok = ReadNIMService(map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService", "spec": map[string]any{
		"image": map[string]any{"repository": "nvcr.io/nim/meta/llama-3.1-8b-instruct"}, "resources": []any{"x"},
		"env": map[string]any{"NIM_MAX_MODEL_LEN": "8192"}, "nodeSelector": []any{1}, "storage": "pvc", "multiNode": map[string]any{}}})
	if !ok || n.GPUs != 0 || n.MaxModelLen != 0 || n.Profile != "" || !n.MultiNode {
		t.Errorf("hostile NIMService read as %+v, %v", n, ok)
	}
}

// A pod's NIM container gives the same facts from the container and its
// pod; NIM_MODEL_PATH names a model only as hf://<org>/<model>.
func TestNIMContainer(t *testing.T) {
	doc := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]any{"nvidia.com/gpu.product": "NVIDIA-L40S"},
		"containers": []any{map[string]any{"name": "nim", "image": "nvcr.io/nim/nvidia/llm-nim:1.13",
			"env":       []any{map[string]any{"name": "NIM_MODEL_PATH", "value": "hf://Qwen/Qwen2.5-7B-Instruct"}},
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(1)}}}},
	}}}}
	pods := FindPods(doc)
	if len(pods) != 1 || len(pods[0].Containers) != 1 {
		t.Fatalf("pods %+v", pods)
	}
	n, ok := NIMContainer(doc, pods[0], pods[0].Containers[0])
	got := []any{ok, n.Model, n.ModelID, n.ModelIDAt, n.GPUs, n.Pod.Product}
	want := []any{true, "nvidia/llm-nim", "Qwen/Qwen2.5-7B-Instruct",
		[]any{"spec", "template", "spec", "containers", 0, "env", 0}, int64(1), "NVIDIA-L40S"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, v := range []string{"s3://bucket/org/model", "/models/llama", "ngc://nim/meta/llama-3.3-70b-instruct:hf", "hf://org/model:rev"} {
		var m NIM
		m.readEnv([]any{map[string]any{"name": "NIM_MODEL_PATH", "value": v}}, nil)
		if m.ModelID != "" {
			t.Errorf("NIM_MODEL_PATH %q read as model %q", v, m.ModelID)
		}
	}
}
