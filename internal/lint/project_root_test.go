package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// nestedProjectRepo writes a repository with a project file at its root
// and another under train/ (a team's own targets), a recipe in train/ and
// a Job in k8s/ that launches it, and returns its directory. extra are
// more files by slash path.
func nestedProjectRepo(t *testing.T, trainProject string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".git/HEAD":           "ref: refs/heads/main\n",
		".gpulint.yaml":       "fail-on: error\n",
		"train/.gpulint.yaml": trainProject,
		"train/run.yaml":      "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nsequence_len: 2048\nmicro_batch_size: 4\nbf16: true\n",
		"k8s/job.yaml":        runJob("cd /app && python -m axolotl.cli.train train/run.yaml", false),
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lintWithProjects lints files the way the CLI does with no --config
// and no --root: the project files are those found above the run's files.
func lintWithProjects(t *testing.T, files []string) *lint.Result {
	t.Helper()
	ps, err := config.LoadSet(files, normalize.NewValidator())
	if err != nil {
		t.Fatal(err)
	}
	res, err := newLinter(t, lint.Options{Projects: ps}).Run(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sizingOf(t *testing.T, res *lint.Result, path string) *lint.Sizing {
	t.Helper()
	for _, fr := range res.Files {
		if fr.Path == path {
			return fr.Sizing
		}
	}
	t.Fatalf("no result for %s", path)
	return nil
}

// A project file under train/ states the team's settings; it is not the
// repository's edge. The Job in k8s/ launches the recipe in train/, and
// the launch graph of the recipe must still reach k8s/ (the repository
// is the directory holding .git), so the Job is sized with the recipe.
func TestNestedProjectKeepsLaunchEdge(t *testing.T) {
	dir := nestedProjectRepo(t, "fail-on: warning\n", nil)
	job := filepath.Join(dir, "k8s", "job.yaml")
	z := sizingOf(t, lintWithProjects(t, []string{job}), job)
	if z == nil {
		t.Fatal("the Job that launches train/run.yaml is not sized: the nested train/.gpulint.yaml cut the launch graph")
	}
	var recipe bool
	for _, r := range z.Related {
		if r.Role == "recipe" && strings.HasSuffix(filepath.ToSlash(r.File), "train/run.yaml") {
			recipe = true
		}
	}
	if !recipe {
		t.Errorf("the Job's sizing does not name the recipe it launches: %+v", z.Related)
	}
}

// Without .git, the outermost project file bounds the repository, not
// the nearest one.
func TestOutermostProjectBoundsWithoutGit(t *testing.T) {
	dir := nestedProjectRepo(t, "fail-on: warning\n", nil)
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "k8s", "job.yaml")
	if z := sizingOf(t, lintWithProjects(t, []string{job}), job); z == nil {
		t.Fatal("the Job is not sized: the nearest project file, train/.gpulint.yaml, bounded the recipe's launch graph")
	}
}

// The recipe a Job launches is sized under its own project file (the
// nearest above it), though the run lints only the Job and never saw the
// recipe's directory: the Job's sizing equals the one of a run that also
// lints the recipe.
func TestLaunchedRecipeUsesItsOwnProject(t *testing.T) {
	dir := nestedProjectRepo(t, "targets:\n  - paths: [\"*.yaml\"]\n    cuda_context: 4000\n", nil)
	job := filepath.Join(dir, "k8s", "job.yaml")
	recipe := filepath.Join(dir, "train", "run.yaml")
	alone := sizingOf(t, lintWithProjects(t, []string{job}), job)
	both := sizingOf(t, lintWithProjects(t, []string{job, recipe}), job)
	if alone == nil || both == nil {
		t.Fatalf("the Job is not sized (alone %v, with the recipe %v)", alone != nil, both != nil)
	}
	if alone.PerGPUBytes != both.PerGPUBytes {
		t.Errorf("linted alone, the Job's sizing needs %d bytes per GPU; with the recipe in the run, %d: the recipe's own project file (cuda_context 4000) was not applied", alone.PerGPUBytes, both.PerGPUBytes)
	}
	// The case shows something only if the recipe's project file moves
	// the figure.
	plain := nestedProjectRepo(t, "fail-on: warning\n", nil)
	pj := filepath.Join(plain, "k8s", "job.yaml")
	if z := sizingOf(t, lintWithProjects(t, []string{pj}), pj); z == nil || z.PerGPUBytes == both.PerGPUBytes {
		t.Fatalf("the recipe's cuda_context leaves the Job's sizing as it was; the case shows nothing")
	}
}

// The recipe's project file, found only through the launch, is part of
// what a cached result of the Job rests on: warm, then change it, and the
// warm run must equal a cold one.
func TestCacheLaunchedRecipesOwnProject(t *testing.T) {
	project := func(mib int) string {
		return fmt.Sprintf("targets:\n  - paths: [\"*.yaml\"]\n    cuda_context: %d\n", mib)
	}
	dir := nestedProjectRepo(t, project(500), nil)
	job := filepath.Join(dir, "k8s", "job.yaml")
	cache := lint.NewCache(t.TempDir(), []byte("test"))
	run := func(c *lint.Cache) string {
		t.Helper()
		ps, err := config.LoadSet([]string{job}, normalize.NewValidator())
		if err != nil {
			t.Fatal(err)
		}
		res, err := newLinter(t, lint.Options{Cache: c, Projects: ps}).Run(context.Background(), []string{job})
		if err != nil {
			t.Fatal(err)
		}
		return resultText(t, dir, res)
	}
	before := run(nil)
	for range 2 {
		if got := run(cache); got != before {
			t.Fatalf("run with the cache differs from a cold run:\n%s", cmp.Diff(before, got))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "train", ".gpulint.yaml"), []byte(project(4000)), 0o644); err != nil {
		t.Fatal(err)
	}
	after := run(nil)
	if after == before {
		t.Fatalf("the recipe's project file leaves a cold run's answer as it was; the case shows nothing:\n%s", before)
	}
	if got := run(cache); got != after {
		t.Errorf("warm run after the recipe's project file changed is stale (-cold +warm):\n%s", cmp.Diff(after, got))
	}
}
