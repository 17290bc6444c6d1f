package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuantityInt(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    int64
		integer bool
	}{
		{"int", int64(2), 2, true},
		{"integral float", 1.0, 1, true},
		{"fraction", 0.5, 0, false},
		{"negative", int64(-1), -1, false},
		{"string", "4", 4, true},
		{"decimal string", "1.0", 1, true},
		{"milli whole", "1000m", 1, true},
		{"milli fraction", "500m", 0, false},
		{"half string", "0.5", 0, false},
		{"kilo", "1k", 1000, true},
		{"binary", "1Ki", 1024, true},
		{"exponent", "2e0", 2, true},
		{"unknown suffix", "1x", 0, false},
		{"empty", "", 0, false},
		{"bool", true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, integer := QuantityInt(tc.in)
			if integer != tc.integer || (integer && n != tc.want) {
				t.Errorf("QuantityInt(%#v) = %d, %v; want %d, %v", tc.in, n, integer, tc.want, tc.integer)
			}
		})
	}
}

func TestFindPodsResourcesAndGroups(t *testing.T) {
	doc := map[string]any{
		"spec": map[string]any{
			"leaderWorkerTemplate": map[string]any{
				"workerTemplate": map[string]any{
					"spec": map[string]any{
						"nodeSelector": map[string]any{"nvidia.com/mig.strategy": "mixed"},
						"containers": []any{map[string]any{
							"name": "w",
							"resources": map[string]any{
								"requests": map[string]any{"nvidia.com/gpu": "2", "memory": "8Gi"},
								"limits":   map[string]any{"nvidia.com/gpu": 0.5, "nvidia.com/mig-1g.10gb": int64(1)},
							},
							"volumeMounts": []any{map[string]any{"name": "host-shm", "mountPath": "/dev/shm/"}},
						}},
					},
				},
			},
		},
	}
	pods := FindPods(doc)
	if len(pods) != 1 {
		t.Fatalf("found %d pods, want 1", len(pods))
	}
	p := pods[0]
	c := p.Containers[0]
	got := map[string]any{
		"group": p.Group, "strategy": p.MIGStrategy, "shm": c.ShmSize, "shm_mount": c.ShmMount,
		"resources": c.Resources,
	}
	base := []any{"spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "resources"}
	at := func(s ...any) []any { return append(append([]any(nil), base...), s...) }
	want := map[string]any{
		"group": "leader-worker-set", "strategy": "mixed", "shm": false, "shm_mount": true,
		"resources": []GPUResource{
			{Name: "nvidia.com/gpu", Section: "requests", Value: "2", Count: 2, Integer: true, Path: at("requests", "nvidia.com/gpu")},
			{Name: "nvidia.com/gpu", Section: "limits", Value: 0.5, Path: at("limits", "nvidia.com/gpu")},
			{Name: "nvidia.com/mig-1g.10gb", Section: "limits", Value: int64(1), Count: 1, Integer: true, Path: at("limits", "nvidia.com/mig-1g.10gb")},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

func TestFindPodsModelLabel(t *testing.T) {
	doc := map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "x", "ai.gke.io/model": "gemma-3-27b-it"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "s", "image": "vllm"}}},
	}}}
	pods := FindPods(doc)
	if len(pods) != 1 {
		t.Fatalf("found %d pods, want 1", len(pods))
	}
	got := []any{pods[0].ModelLabel, pods[0].ModelLabelAt}
	want := []any{"gemma-3-27b-it", []any{"spec", "template", "metadata", "labels", "ai.gke.io/model"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model label (-want +got):\n%s", diff)
	}
}

func TestPodGroup(t *testing.T) {
	tests := []struct {
		path []any
		want string
	}{
		{[]any{"spec", "template", "spec"}, ""},
		{[]any{"spec", "workerGroupSpecs", 0, "template", "spec"}, "ray"},
		{[]any{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec"}, "kubeflow"},
		{[]any{"spec", "predictor", "workerSpec"}, "kserve"},
	}
	for _, tc := range tests {
		if got := podGroup(tc.path); got != tc.want {
			t.Errorf("podGroup(%v) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
