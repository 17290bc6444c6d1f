package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContainerConfigMapFile(t *testing.T) {
	mount := func(name, at, sub string) map[string]any {
		m := map[string]any{"name": name, "mountPath": at}
		if sub != "" {
			m["subPath"] = sub
		}
		return m
	}
	doc := map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{
				"name": "train",
				"volumeMounts": []any{
					mount("all", "/workspace/configs/", ""),
					mount("picked", "/etc/picked", ""),
					mount("one", "/app/run.yaml", "recipe"),
					mount("data", "/workspace/configs/data", ""),
				},
			}},
			"volumes": []any{
				map[string]any{"name": "all", "configMap": map[string]any{"name": "recipes"}},
				map[string]any{"name": "picked", "configMap": map[string]any{"name": "picked-cm",
					"items": []any{map[string]any{"key": "gemma.yaml", "path": "train/run.yaml"}}}},
				map[string]any{"name": "one", "configMap": map[string]any{"name": "single"}},
				map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "d"}},
			},
		}}},
	}
	pods := FindPods(doc)
	if len(pods) != 1 || len(pods[0].Containers) != 1 {
		t.Fatalf("want one pod with one container, got %+v", pods)
	}
	c := pods[0].Containers[0]
	type got struct {
		ConfigMap, Key string
		Mounted        bool
	}
	tests := []struct {
		file string
		want got
	}{
		{"/workspace/configs/gemma3.yaml", got{"recipes", "gemma3.yaml", true}},
		{"/workspace/configs/../configs/gemma3.yaml", got{"recipes", "gemma3.yaml", true}},
		{"/workspace/configs/sub/x.yaml", got{"recipes", "", true}}, // keys are flat
		{"/etc/picked/train/run.yaml", got{"picked-cm", "gemma.yaml", true}},
		{"/etc/picked/other.yaml", got{"picked-cm", "", true}}, // not an item
		{"/app/run.yaml", got{"single", "recipe", true}},
		{"/app/other.yaml", got{}},
		{"/workspace/configs/data/x.yaml", got{}}, // the claim mounted there hides the ConfigMap
		{"configs/gemma3.yaml", got{}},            // relative: the image's working directory
	}
	for _, tc := range tests {
		m, key, ok := c.ConfigMapFile(tc.file)
		if diff := cmp.Diff(tc.want, got{m.ConfigMap, key, ok}); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tc.file, diff)
		}
	}
}
