package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/lint"
)

// kustomizeBase is a vLLM Deployment whose args read the model, its
// length and memory share from ConfigMap runtime through $(VAR)
// references, and whose GPU a patch states.
const kustomizeBase = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.10.1
          args:
            - "--model=gs://$(BUCKET)/$(MODEL_ID)"
            - "--max-model-len=$(MAX_MODEL_LEN)"
            - "--gpu-memory-utilization=0.9"
          env:
            - name: MODEL_ID
              valueFrom:
                configMapKeyRef:
                  name: runtime
                  key: MODEL_ID
            - name: MAX_MODEL_LEN
              valueFrom:
                configMapKeyRef:
                  name: runtime
                  key: MAX_MODEL_LEN
            - name: BUCKET
              valueFrom:
                configMapKeyRef:
                  name: buckets
                  key: BUCKET
          resources:
            limits:
              nvidia.com/gpu: "1"
`

const kustomizePatch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
`

// TestKustomizeOverlay composes base + overlay + env file and sizes the
// pod on the overlay's patch that states the GPU.
func TestKustomizeOverlay(t *testing.T) {
	overlay := "resources:\n  - ../../base\nnameSuffix: -l4\nconfigMapGenerator:\n  - name: runtime\n    envs:\n      - runtime.env\npatches:\n  - path: patch-gpu.yaml\n"
	tests := []struct {
		name  string
		files map[string]string
		// want maps each sized file to its GPU, model and sources.
		want map[string]string
		// wantFinding is a rule id the patch file must carry with the
		// env file among its related locations; empty: none. (131072
		// tokens of Llama 3.1 8B do not fit one L4's KV cache, which
		// only the composed pod shows.)
		wantFinding string
		// wantAlone is a rule that fires on the base alone and must not
		// be repeated on the overlay.
		wantAlone string
	}{
		{
			name: "the patch that states the GPU carries the composed verdict",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":           kustomizeBase,
				"overlays/l4/kustomization.yaml": overlay,
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "# served model\nMODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=131072\n",
			},
			want: map[string]string{
				"overlays/l4/patch-gpu.yaml": "L4 gs://$(BUCKET)/meta-llama/Llama-3.1-8B-Instruct kustomization@overlays/l4/kustomization.yaml:1 base@base/deployment.yaml:8 patch@overlays/l4/patch-gpu.yaml:1 env@overlays/l4/runtime.env:2",
			},
			wantFinding: "VLLM003",
		},
		{
			name: "a base that states the GPU: the overlay's kustomization, without apiVersion and kind, carries the verdict",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":           strings.Replace(kustomizeBase, "    spec:\n      containers:", "    spec:\n      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:", 1),
				"overlays/l4/kustomization.yaml": "resources:\n  - ../../base\nconfigMapGenerator:\n  - name: runtime\n    envs:\n      - runtime.env\n",
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=131072\n",
			},
			want: map[string]string{
				"overlays/l4/kustomization.yaml": "L4 gs://$(BUCKET)/meta-llama/Llama-3.1-8B-Instruct kustomization@overlays/l4/kustomization.yaml:1 base@base/deployment.yaml:1 env@overlays/l4/runtime.env:1",
			},
		},
		{
			name: "what the base shows alone is not repeated on the overlay",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":           strings.Replace(kustomizeBase, `nvidia.com/gpu: "1"`, `nvidia.com/gpu: "2"`, 1),
				"overlays/l4/kustomization.yaml": overlay,
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=8192\n",
			},
			want: map[string]string{
				"overlays/l4/patch-gpu.yaml": "L4 gs://$(BUCKET)/meta-llama/Llama-3.1-8B-Instruct kustomization@overlays/l4/kustomization.yaml:1 base@base/deployment.yaml:8 patch@overlays/l4/patch-gpu.yaml:1 env@overlays/l4/runtime.env:1",
			},
			wantAlone: "K8S002",
		},
		{
			name: "a length the env file leaves out leaves the pod unsized",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":           kustomizeBase,
				"overlays/l4/kustomization.yaml": overlay,
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN\n",
			},
			want: map[string]string{},
		},
		{
			name: "a base that includes itself is read once, without a hang",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n  - ../base\n  - ../overlays/l4\n",
				"base/deployment.yaml":           kustomizeBase,
				"overlays/l4/kustomization.yaml": overlay,
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=131072\n",
			},
			want: map[string]string{
				"overlays/l4/patch-gpu.yaml": "L4 gs://$(BUCKET)/meta-llama/Llama-3.1-8B-Instruct kustomization@overlays/l4/kustomization.yaml:1 base@base/deployment.yaml:8 patch@overlays/l4/patch-gpu.yaml:1 env@overlays/l4/runtime.env:1",
			},
			wantFinding: "VLLM003",
		},
		{
			name: "a project file above the overlays does not cut them off the base beside them",
			files: map[string]string{
				"base/kustomization.yaml":        "resources:\n  - deployment.yaml\n",
				"base/deployment.yaml":           kustomizeBase,
				"overlays/.gpulint.yaml":         "fail-on: error\n",
				"overlays/l4/kustomization.yaml": overlay,
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\nMAX_MODEL_LEN=131072\n",
			},
			want: map[string]string{
				"overlays/l4/patch-gpu.yaml": "L4 gs://$(BUCKET)/meta-llama/Llama-3.1-8B-Instruct kustomization@overlays/l4/kustomization.yaml:1 base@base/deployment.yaml:8 patch@overlays/l4/patch-gpu.yaml:1 env@overlays/l4/runtime.env:1",
			},
			wantFinding: "VLLM003",
		},
		{
			name: "a missing base and a remote one leave nothing to size",
			files: map[string]string{
				"overlays/l4/kustomization.yaml": "resources:\n  - ../../nowhere\n  - https://github.com/acme/base//vllm?ref=v1\nconfigMapGenerator:\n  - name: runtime\n    envs:\n      - runtime.env\npatches:\n  - path: patch-gpu.yaml\n",
				"overlays/l4/patch-gpu.yaml":     kustomizePatch,
				"overlays/l4/runtime.env":        "MODEL_ID=meta-llama/Llama-3.1-8B-Instruct\n",
			},
			want: map[string]string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			var names []string
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(name, ".yaml") {
					names = append(names, name)
				}
			}
			sort.Strings(names)
			t.Chdir(dir)
			l := newLinter(t, lint.Options{})
			res, err := l.Run(context.Background(), names)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range res.Files {
				if f.Sizing == nil {
					continue
				}
				parts := []string{f.Sizing.GPU, f.Sizing.Model}
				for _, r := range f.Sizing.Related {
					parts = append(parts, fmt.Sprintf("%s@%s:%d", r.Role, filepath.ToSlash(r.File), r.Line))
				}
				got[filepath.ToSlash(f.Path)] = strings.Join(parts, " ")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sizing (-want +got):\n%s", diff)
			}
			var found bool
			for _, f := range res.Findings {
				if filepath.ToSlash(f.Range.File) != "overlays/l4/patch-gpu.yaml" || f.Rule != tc.wantFinding {
					continue
				}
				if f.Range.Start.Line != 9 {
					t.Errorf("%s at line %d, want the node selector's line 9", f.Rule, f.Range.Start.Line)
				}
				if len(f.Fixes) != 0 {
					t.Errorf("%s offers fixes that would edit the composed text", f.Rule)
				}
				var rel []string
				for _, r := range f.Related {
					rel = append(rel, fmt.Sprintf("%s:%d", filepath.ToSlash(r.Range.File), r.Range.Start.Line))
				}
				for _, w := range []string{"overlays/l4/runtime.env:", "base/deployment.yaml:13", "overlays/l4/kustomization.yaml:1"} {
					if !strings.Contains(strings.Join(rel, " "), w) {
						t.Errorf("%s related %v lacks %s", f.Rule, rel, w)
					}
				}
				found = true
			}
			if tc.wantFinding != "" && !found {
				var all []string
				for _, f := range res.Findings {
					all = append(all, fmt.Sprintf("%s:%d %s", f.Range.File, f.Range.Start.Line, f.Rule))
				}
				t.Errorf("no %s on the patch; findings: %v", tc.wantFinding, all)
			}
			onBase := false
			for _, f := range res.Findings {
				if tc.wantAlone != "" && f.Rule == tc.wantAlone {
					if filepath.ToSlash(f.Range.File) == "base/deployment.yaml" {
						onBase = true
					} else {
						t.Errorf("%s of the base repeated on %s", f.Rule, f.Range.File)
					}
				}
				if filepath.ToSlash(f.Range.File) == "overlays/l4/patch-gpu.yaml" && tc.wantFinding == "" && len(f.Evidence) > 0 {
					t.Errorf("unexpected sized finding on the patch: %s %s", f.Rule, f.Message)
				}
			}
			if tc.wantAlone != "" && !onBase {
				t.Errorf("%s does not fire on the base alone: the case shows nothing", tc.wantAlone)
			}
		})
	}
}

// TestKustomizeHostile: cycles between overlays, a directory that links
// to itself, a kustomization of garbage, a patch that is a directory and
// a thousand resources of one file end in a result, never an error, a
// panic or a hang.
func TestKustomizeHostile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	many := "resources:\n" + strings.Repeat("  - deployment.yaml\n", 1000) + "patches:\n  - path: patch-gpu.yaml\n  - path: sub\n"
	files := map[string]string{
		"a/kustomization.yaml":    "resources: [../b, ../loop]\npatches:\n  - path: patch-gpu.yaml\n",
		"a/patch-gpu.yaml":        kustomizePatch,
		"b/kustomization.yaml":    "resources: [../a, deployment.yaml]\n",
		"b/deployment.yaml":       kustomizeBase,
		"loop/kustomization.yaml": "resources: [self]\n",
		"g/kustomization.yaml":    "\x00\xff{[garbage: : :\n",
		"g/patch-gpu.yaml":        kustomizePatch,
		"m/kustomization.yaml":    many,
		"m/deployment.yaml":       kustomizeBase,
		"m/patch-gpu.yaml":        kustomizePatch,
		"m/sub/x.yaml":            "a: 1\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "loop"), filepath.Join(dir, "loop", "self")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	l := newLinter(t, lint.Options{})
	done := make(chan error, 1)
	go func() {
		_, err := l.Run(context.Background(), []string{"a/patch-gpu.yaml", "g/patch-gpu.yaml", "m/patch-gpu.yaml", "m/kustomization.yaml"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("composing hostile kustomizations did not finish in 20 s")
	}
}
