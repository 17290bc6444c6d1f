package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTemplate(t *testing.T) {
	container := func(kv ...any) map[string]any {
		c := map[string]any{"name": "c"}
		for i := 0; i+1 < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"spec": map[string]any{"containers": []any{c}}}
	}
	tests := []struct {
		name string
		doc  any
		want TemplateEvidence
		ok   bool
	}{
		{"gpu quantity", container("resources", map[string]any{"limits": map[string]any{"nvidia.com/gpu": "$GPUS"}}),
			TemplateEvidence{"$GPUS", []any{"spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"}}, true},
		{"image with a variable", container("image", "${REGISTRY}/train:${TAG}"),
			TemplateEvidence{"${REGISTRY}/train:${TAG}", []any{"spec", "containers", 0, "image"}}, true},
		{"replicas", map[string]any{"spec": map[string]any{"replicas": " ${NUM_NODES} "}},
			TemplateEvidence{"${NUM_NODES}", []any{"spec", "replicas"}}, true},
		{"env and args are expanded at run time", container("env", []any{map[string]any{"name": "T", "value": "$T"}}, "args", []any{"$(PORT)", "$PORT"}), TemplateEvidence{}, false},
		{"shell script", container("command", []any{"sh", "-c", "serve --port ${PORT}"}), TemplateEvidence{}, false},
		{"variable inside a longer non-image value", map[string]any{"metadata": map[string]any{"name": "job-$ID"}}, TemplateEvidence{}, false},
		{"multi-line embedded config", map[string]any{"spec": map[string]any{"rayStartParams": "a: 1\nb: $X\n"}}, TemplateEvidence{}, false},
		{"configmap data", map[string]any{"data": map[string]any{"X": "$X"}}, TemplateEvidence{}, false},
		{"kubernetes reference is not a shell variable", map[string]any{"spec": map[string]any{"host": "$(POD_IP)"}}, TemplateEvidence{}, false},
		{"sed stand-in for a quantity", container("resources", map[string]any{"requests": map[string]any{"nvidia.com/gpu": "PLACEHOLDER_NUM_GPU"}}),
			TemplateEvidence{"PLACEHOLDER_NUM_GPU", []any{"spec", "containers", 0, "resources", "requests", "nvidia.com/gpu"}}, true},
		{"upper-case word outside a quantity", map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "GPU_POOL"}}}, TemplateEvidence{}, false},
		{"mustache placeholder for a quantity", container("resources", map[string]any{"limits": map[string]any{"nvidia.com/gpu": "{{ GPUS }}"}}),
			TemplateEvidence{"{{ GPUS }}", []any{"spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"}}, true},
		{"mustache placeholder in a secret's data is runtime text", map[string]any{"stringData": map[string]any{"token": "{{HF_TOKEN}}"}}, TemplateEvidence{}, false},
		{"plain manifest", container("image", "vllm/vllm-openai:v0.10.1"), TemplateEvidence{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Template(tc.doc)
			if ok != tc.ok {
				t.Fatalf("Template ok = %v, want %v (%+v)", ok, tc.ok, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Template (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsPlaceholder(t *testing.T) {
	for v, want := range map[any]bool{"$GPUS": true, "${GPUS}": true, " $G_1 ": true, "$(GPUS)": false, "2": false, "x$G": false, int64(2): false, "$1": false, "NUM_GPUS": true, "<gpus>": true, "all": false, "GPU": false, "500m": false, "{{GPUS}}": true, "{{ .Values.gpus }}": true, "{{a}}{{b}}": false, "x{{GPUS}}": false} {
		if got := IsPlaceholder(v); got != want {
			t.Errorf("IsPlaceholder(%#v) = %v, want %v", v, got, want)
		}
	}
}
