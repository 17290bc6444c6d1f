package kustomize_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/kustomize"
)

const base = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      nodeSelector:
        pool: a
      containers:
        - name: main
          image: repo/server:1
          args: ["--len=$(LEN)", "--keep=$$(LEN)", "--x=$(UNSET)"]
          env:
            - name: LEN
              valueFrom:
                configMapKeyRef: {name: cfg, key: LEN}
          resources:
            limits: {cpu: "1"}
        - name: side
          image: repo/side:1
`

// TestBuildFile composes small trees and checks the composed Deployment
// (rendered) and the notes.
func TestBuildFile(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		want      []string // lines the rendered Deployment must hold
		wantNotes []string // substrings of the notes, in order
		// wantUnsure: something unapplied may change the pod spec.
		wantUnsure bool
	}{
		{
			name: "patch merges containers by name, maps key by key, replaces args; env file fills $(VAR)",
			files: map[string]string{
				"base/kustomization.yaml": "resources: [deploy.yaml]\n",
				"base/deploy.yaml":        base,
				"ov/kustomization.yaml":   "bases: [../base]\nnamePrefix: p-\nconfigMapGenerator:\n  - name: cfg\n    env: run.env\nimages:\n  - name: repo/server\n    newTag: \"2\"\npatchesStrategicMerge:\n  - patch.yaml\n",
				"ov/run.env":              "  # comment\n\nLEN=4096\n",
				"ov/patch.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      nodeSelector: {gpu: h100}\n      containers:\n        - name: main\n          resources:\n            limits: {nvidia.com/gpu: 2}\n",
			},
			want: []string{`"pool": "a"`, `"gpu": "h100"`, `- "--len=4096"`, `- "--keep=$$(LEN)"`, `- "--x=$(UNSET)"`,
				`"cpu": "1"`, `"nvidia.com/gpu": 2`, `"image": "repo/server:2"`, `"name": "side"`, `"value": "4096"`},
		},
		{
			name: "behavior merge over a base generator; a JSON6902 patch is noted, not applied",
			files: map[string]string{
				"base/kustomization.yaml": "resources: [deploy.yaml]\nconfigMapGenerator:\n  - name: cfg\n    literals: [LEN=1024, OTHER=x]\n",
				"base/deploy.yaml":        base,
				"ov/kustomization.yaml":   "resources: [../base]\nconfigMapGenerator:\n  - name: cfg\n    behavior: merge\n    literals: [\"LEN='2048'\"]\npatches:\n  - path: ops.yaml\n    target: {kind: Deployment}\n",
				"ov/ops.yaml":             "- op: replace\n  path: /spec/replicas\n  value: 3\n",
			},
			want:      []string{`- "--len=2048"`},
			wantNotes: []string{"JSON6902 patch not applied"},
		},
		{
			name: "a JSON6902 patch of the args leaves the build unsure, a replacement of the image does not",
			files: map[string]string{
				"base/kustomization.yaml": "resources: [deploy.yaml]\n",
				"base/deploy.yaml":        base,
				"ov/kustomization.yaml": "resources: [../base]\npatches:\n  - path: ops.yaml\n    target: {kind: Deployment}\n" +
					"replacements:\n  - source: {kind: ConfigMap, name: x, fieldPath: data.A}\n    targets:\n      - select: {kind: Deployment}\n        fieldPaths:\n          - spec.template.spec.containers.[name=main].image\n",
				"ov/ops.yaml": "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --len=1\n",
			},
			want:       []string{`- "--len=$(LEN)"`},
			wantNotes:  []string{"JSON6902 patch not applied"},
			wantUnsure: true,
		},
		{
			name: "a replacement into the args, or a component, leaves the build unsure",
			files: map[string]string{
				"base/kustomization.yaml": "resources: [deploy.yaml]\n",
				"base/deploy.yaml":        base,
				"ov/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n" +
					"replacements:\n  - source: {kind: ConfigMap, name: x, fieldPath: data.A}\n    targets:\n      - select: {kind: Deployment}\n        fieldPaths: [spec.template.spec.containers.0.args.0]\n",
			},
			want:       []string{`- "--len=$(LEN)"`},
			wantNotes:  []string{"components not applied", "replacement into spec.template.spec.containers.0.args.0 not applied"},
			wantUnsure: true,
		},
		{
			name: "cycles, remote bases, missing and escaping files are notes",
			files: map[string]string{
				"ov/kustomization.yaml": "resources:\n  - ../ov\n  - github.com/acme/x//base?ref=v1\n  - ../missing\n  - ../../../../etc\nconfigMapGenerator:\n  - name: cfg\n    envs: [../secret.env, none.env]\n",
			},
			wantNotes: []string{"includes itself", "remote resource", "not found", "outside the repository", "outside the kustomization's directory", "none.env not found"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := kustomize.BuildFile(filepath.Join(dir, "ov", "kustomization.yaml"), kustomize.Options{Root: dir})
			var text string
			for _, r := range b.Resources {
				if r.Kind == "Deployment" {
					out, lines := kustomize.Render(r.Doc)
					text = string(out)
					if n := strings.Count(text, "\n"); n != len(lines) {
						t.Errorf("%d lines rendered, %d located", n, len(lines))
					}
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("composed Deployment lacks %s:\n%s", w, text)
				}
			}
			if b.Unsure != tc.wantUnsure {
				t.Errorf("unsure %v, want %v", b.Unsure, tc.wantUnsure)
			}
			var notes []string
			for _, n := range b.Notes {
				notes = append(notes, n.Message)
			}
			var got []string
			for _, w := range tc.wantNotes {
				for _, n := range notes {
					if strings.Contains(n, w) {
						got = append(got, w)
						break
					}
				}
			}
			if diff := cmp.Diff(tc.wantNotes, got); diff != "" {
				t.Errorf("notes (-want +got):\n%s\nall: %q", diff, notes)
			}
		})
	}
}

// TestDepthAndSize bounds a deep chain of bases without a hang.
func TestDepthAndSize(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		p := filepath.Join(dir, "k"+strings.Repeat("x", i))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		data := "resources: [../k" + strings.Repeat("x", i+1) + "]\n"
		if err := os.WriteFile(filepath.Join(p, "kustomization.yaml"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := kustomize.BuildFile(filepath.Join(dir, "k", "kustomization.yaml"), kustomize.Options{Root: dir, MaxDepth: 8})
	found := false
	for _, n := range b.Notes {
		found = found || strings.Contains(n.Message, "deeper than 8")
	}
	if !found || len(b.Files) > 9 {
		t.Errorf("depth guard: notes %v, %d files read", b.Notes, len(b.Files))
	}
}
