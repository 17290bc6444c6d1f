package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpulint/gpulint/internal/lint"
)

// A Job that runs an axolotl recipe from a ConfigMap volume, in small
// repositories (each with .git, as a clone has) that state - or do not -
// which repository file the ConfigMap packs. The recipe is sized with the
// Job's GKE accelerator only through a stated link, and the Job's own
// sizing is the recipe's, with the recipe, the launch and the packing
// statement as related files.
func TestManifestLaunchingRecipe(t *testing.T) {
	job := func(recipe string, mount bool) string {
		return runJob("cd /workspace/axolotl && python -m axolotl.cli.train "+recipe, mount)
	}
	const recipe = "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: true\n"
	tests := []struct {
		name  string
		files map[string]string
		// want are the sizing's GPU and related files (role@file:line)
		// of the recipe and of the Job; "" for no sizing.
		wantRecipe, wantJob string
	}{
		{
			name: "a script packs the recipe into the ConfigMap",
			files: map[string]string{
				"k8s/job.yaml":         job("/workspace/configs/run.yaml", true),
				"config/run.yaml":      recipe,
				"scripts/deploy.sh":    "#!/bin/bash\nkubectl create configmap axolotl-config \\\n  --from-file=run.yaml=config/run.yaml -n ml\nkubectl apply -f k8s/job.yaml\n",
				"config/unrelated.yml": "a: 1\n",
			},
			wantRecipe: "L4",
			wantJob:    "L4 recipe@config/run.yaml:1 launch@k8s/job.yaml:16 configmap@scripts/deploy.sh:3",
		},
		{
			name: "a kustomization generates the ConfigMap from the recipe",
			files: map[string]string{
				"k8s/job.yaml":       job("/workspace/configs/run.yaml", true),
				"kustomization.yaml": "resources: [k8s/job.yaml]\nconfigMapGenerator:\n  - name: axolotl-config\n    files:\n      - config/run.yaml\n",
				"config/run.yaml":    recipe,
			},
			wantRecipe: "L4",
			wantJob:    "L4 recipe@config/run.yaml:1 launch@k8s/job.yaml:16 configmap@kustomization.yaml:5",
		},
		{
			name: "a kustomization names a file above it, which kustomize build refuses",
			files: map[string]string{
				"k8s/job.yaml":           job("/workspace/configs/run.yaml", true),
				"k8s/kustomization.yaml": "resources: [job.yaml]\nconfigMapGenerator:\n  - name: axolotl-config\n    files:\n      - run.yaml=../config/run.yaml\n",
				"config/run.yaml":        recipe,
			},
		},
		{
			name: "nothing states what the ConfigMap holds: a file of the key's name is not linked",
			files: map[string]string{
				"k8s/job.yaml":    job("/workspace/configs/run.yaml", true),
				"config/run.yaml": recipe,
			},
		},
		{
			name: "the ConfigMap packs another file under that key",
			files: map[string]string{
				"k8s/job.yaml":      job("/workspace/configs/run.yaml", true),
				"config/run.yaml":   recipe,
				"config/other.yaml": recipe,
				"scripts/deploy.sh": "kubectl create configmap axolotl-config --from-file=run.yaml=config/other.yaml\n",
			},
			wantRecipe: "",
			wantJob:    "L4 recipe@config/other.yaml:1 launch@k8s/job.yaml:16 configmap@scripts/deploy.sh:1",
		},
		{
			name: "a script packs the recipe's directory, each file under its name",
			files: map[string]string{
				"k8s/job.yaml":      job("/workspace/configs/run.yaml", true),
				"config/run.yaml":   recipe,
				"scripts/deploy.sh": "cd \"$(dirname \"$0\")/..\"\nkubectl create configmap axolotl-config --from-file=config\n",
			},
			wantRecipe: "L4",
			wantJob:    "L4 recipe@config/run.yaml:1 launch@k8s/job.yaml:16 configmap@scripts/deploy.sh:2",
		},
		{
			name: "the Job runs a script from the ConfigMap that a deploy script packs",
			files: map[string]string{
				"k8s/job.yaml":      runJob("bash /workspace/configs/train.sh", true),
				"scripts/train.sh":  "axolotl train config/run.yaml\n",
				"config/run.yaml":   recipe,
				"scripts/deploy.sh": "kubectl create configmap axolotl-config --from-file=scripts/train.sh\n",
			},
			wantRecipe: "L4",
		},
		{
			name: "the Job runs a script from a ConfigMap nothing packs: a script of that name is not linked",
			files: map[string]string{
				"k8s/job.yaml":     runJob("bash /workspace/configs/train.sh", true),
				"scripts/train.sh": "axolotl train config/run.yaml\n",
				"config/run.yaml":  recipe,
			},
		},
		{
			name: "another ConfigMap's source links nothing",
			files: map[string]string{
				"k8s/job.yaml":      job("/workspace/configs/run.yaml", true),
				"config/run.yaml":   recipe,
				"scripts/deploy.sh": "kubectl create configmap other-config --from-file=config/run.yaml\n",
			},
		},
		{
			name: "a recipe the launch names by its repository path",
			files: map[string]string{
				"k8s/job.yaml":    job("config/run.yaml", false),
				"config/run.yaml": recipe,
			},
			wantRecipe: "L4",
			wantJob:    "L4 recipe@config/run.yaml:1 launch@k8s/job.yaml:16",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The file names as a user in the clone's top writes them.
			t.Chdir(dir)
			l := newLinter(t, lint.Options{})
			res, err := l.Run(context.Background(), []string{"config/run.yaml", "k8s/job.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range res.Files {
				if f.Sizing == nil {
					continue
				}
				parts := []string{f.Sizing.GPU}
				for _, r := range f.Sizing.Related {
					parts = append(parts, fmt.Sprintf("%s@%s:%d", r.Role, filepath.ToSlash(r.File), r.Line))
				}
				got[filepath.ToSlash(f.Path)] = strings.Join(parts, " ")
			}
			if tc.wantRecipe != "" && strings.Contains(tc.wantJob, "configmap@") {
				// The recipe's GPU evidence says how the pod reads it.
				var gpu string
				for _, f := range res.Findings {
					for _, e := range f.Evidence {
						if e.Name == "gpu" && filepath.ToSlash(f.Range.File) == "config/run.yaml" {
							gpu = e.Value
						}
					}
				}
				if !strings.Contains(gpu, "reads this file from ConfigMap axolotl-config (packed at ") {
					t.Errorf("gpu evidence %q does not say how the pod reads the recipe", gpu)
				}
			}
			want := map[string]string{}
			if tc.wantRecipe != "" {
				want["config/run.yaml"] = tc.wantRecipe
			}
			if tc.wantJob != "" {
				want["k8s/job.yaml"] = tc.wantJob
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sizing (-want +got)\n%s", diff)
			}
		})
	}
}

// runJob is a Job on a GKE L4 node whose container runs cmd under bash,
// with ConfigMap axolotl-config mounted at /workspace/configs when mount.
func runJob(cmd string, mount bool) string {
	s := `apiVersion: batch/v1
kind: Job
metadata: {name: sft}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      restartPolicy: Never
      containers:
        - name: train
          image: axolotlai/axolotl:main-latest
          command: ["/bin/bash", "-c"]
          args:
            - |
              ` + cmd + `
          resources: {limits: {nvidia.com/gpu: 1}}
`
	if mount {
		s += `          volumeMounts:
            - {name: cfg, mountPath: /workspace/configs}
      volumes:
        - name: cfg
          configMap: {name: axolotl-config}
`
	}
	return s
}
