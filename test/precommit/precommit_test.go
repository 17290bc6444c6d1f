package precommit_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fp32DS is a DeepSpeed config that trains in full FP32: GPU001
// (fp32-where-bf16, a fixable warning) fires on fp16.enabled.
const fp32DS = `{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "fp16": {
    "enabled": false
  }
}
`

// bf16DS is the same job in BF16: no findings.
const bf16DS = `{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "bf16": {
    "enabled": true
  }
}
`

// projectFile names the GPU for everything below train/, and the dtype the
// training script loads the model in (without it, fp32-where-bf16 on a
// DeepSpeed file rests on an assumed load dtype and is only info). It sits
// in train/, not at the repository root where pre-commit runs gpulint, so
// a finding naming H100-80GB shows gpulint walked up from the file to it.
const projectFile = `targets:
  - paths: ["**"]
    gpu: H100-80GB
    model_dtype: float32
`

// step is one commit attempt in the user's repository.
type step struct {
	name  string
	hooks []string          // hook ids in .pre-commit-config.yaml, in order
	write map[string]string // files written and staged before the commit
	add   []string          // files staged as they are
	// wantCommit: the commit is created (the hooks passed).
	wantCommit bool
	// wantOut: substrings of the output of `git commit`.
	wantOut []string
	// wantFiles: substrings of working-tree files after the commit attempt.
	wantFiles map[string]string
}

// result is what a step is checked on.
type result struct {
	Committed    bool
	MissingOut   []string
	MissingFiles []string
}

func TestHooksWithRealPreCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds gpulint through pre-commit")
	}
	for _, tool := range []string{"pre-commit", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH (install pre-commit with `apt-get install pre-commit`; .ci/run does): %v", tool, err)
		}
	}
	root, err := output(t, ".", nil, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("not inside a git work tree, cannot snapshot it: %v: %s", err, root)
	}
	root = strings.TrimSpace(root)
	tmp := t.TempDir()
	env := hookEnv(t, tmp)
	start := time.Now()
	src := filepath.Join(tmp, "gpulint")
	rev := snapshot(t, root, src, env)
	t.Logf("snapshot of the working tree: %s (%v)", rev, time.Since(start).Round(time.Millisecond))

	work := filepath.Join(tmp, "work")
	mustRun(t, tmp, env, "git", "init", "-q", work)
	mustRun(t, work, env, "pre-commit", "install")

	blocked := pos(t, fp32DS, `"enabled": false`)
	steps := []step{
		{
			name:       "clean config commits",
			hooks:      []string{"gpulint"},
			write:      map[string]string{"train/.gpulint.yaml": projectFile, "train/clean.json": bf16DS},
			wantCommit: true,
			wantOut:    []string{"gpulint..", "Passed"},
		},
		{
			name:       "finding at the fail-on level blocks the commit",
			hooks:      []string{"gpulint"},
			write:      map[string]string{"train/ds.json": fp32DS},
			wantCommit: false,
			wantOut: []string{
				"- hook id: gpulint",
				"train/ds.json:" + blocked + ": warning fp32-where-bf16:",
				"H100-80GB supports BF16", // the target from train/.gpulint.yaml
			},
			wantFiles: map[string]string{"train/ds.json": `"enabled": false`},
		},
		{
			name:       "fix hook rewrites the file and stops the commit",
			hooks:      []string{"gpulint-fix", "gpulint"},
			wantCommit: false,
			wantOut:    []string{"- hook id: gpulint-fix", "files were modified by this hook", "fixed 1 finding in 1 file"},
			wantFiles:  map[string]string{"train/ds.json": `"bf16": {`},
		},
		{
			name:       "fixed file commits",
			hooks:      []string{"gpulint-fix", "gpulint"},
			add:        []string{"train/ds.json"},
			wantCommit: true,
			wantOut:    []string{"gpulint fix..", "Passed"},
		},
	}
	for _, tc := range steps {
		ok := t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(work, ".pre-commit-config.yaml"), config(src, rev, tc.hooks))
			add := append([]string{".pre-commit-config.yaml"}, tc.add...)
			for name, data := range tc.write {
				writeFile(t, filepath.Join(work, name), data)
				add = append(add, name)
			}
			mustRun(t, work, env, append([]string{"git", "add", "--"}, add...)...)
			before := commits(t, work, env)
			t0 := time.Now()
			out, _ := output(t, work, env, "git", "commit", "-m", tc.name)
			t.Logf("git commit through the hooks: %v", time.Since(t0).Round(time.Millisecond))

			got := result{Committed: commits(t, work, env) > before}
			for _, s := range tc.wantOut {
				if !strings.Contains(out, s) {
					got.MissingOut = append(got.MissingOut, s)
				}
			}
			for name, s := range tc.wantFiles {
				data, err := os.ReadFile(filepath.Join(work, name))
				if err != nil || !strings.Contains(string(data), s) {
					got.MissingFiles = append(got.MissingFiles, fmt.Sprintf("%s: %q", name, s))
				}
			}
			want := result{Committed: tc.wantCommit}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("commit (-want +got):\n%s\noutput of git commit:\n%s", diff, out)
			}
		})
		if !ok {
			break // later steps build on this one
		}
	}
	t.Logf("pre-commit end to end, including building gpulint: %v", time.Since(start).Round(time.Millisecond))
}

// config renders a .pre-commit-config.yaml using hooks from the snapshot
// at rev, each failing on warnings (an argument passed through).
func config(repo, rev string, hooks []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "repos:\n  - repo: %s\n    rev: %s\n    hooks:\n", repo, rev)
	for _, h := range hooks {
		fmt.Fprintf(&b, "      - id: %s\n        args: [--fail-on, warning]\n", h)
	}
	return b.String()
}

// hookEnv is the environment of git and pre-commit: pre-commit's state,
// git's configuration and gpulint's cache in tmp; Go's module and build
// caches shared with the host, so building the hook downloads nothing.
// pre-commit sets GOPATH to its own directory, which would otherwise put
// the module cache there.
func hookEnv(t *testing.T, tmp string) []string {
	t.Helper()
	goenv, err := output(t, ".", nil, "go", "env", "GOMODCACHE", "GOCACHE", "GOFLAGS")
	if err != nil {
		t.Fatalf("go env: %v: %s", err, goenv)
	}
	vals := strings.Split(strings.TrimRight(goenv, "\n"), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env: want 3 lines, got %q", goenv)
	}
	gitconfig := filepath.Join(tmp, "gitconfig")
	writeFile(t, gitconfig, "[user]\n\tname = gpulint test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_"), strings.HasPrefix(k, "PRE_COMMIT"), strings.HasPrefix(k, "GPULINT_"),
			k == "SKIP", k == "GOMODCACHE", k == "GOCACHE", k == "GOFLAGS", k == "GOPATH", k == "GOBIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PRE_COMMIT_HOME="+filepath.Join(tmp, "pre-commit"),
		"GOMODCACHE="+vals[0],
		"GOCACHE="+vals[1],
		"GOFLAGS="+strings.TrimSpace(vals[2]+" -mod=mod"),
		"GIT_CONFIG_GLOBAL="+gitconfig,
		"GIT_CONFIG_NOSYSTEM=1",
		"GPULINT_CACHE_DIR="+filepath.Join(tmp, "gpulint-cache"),
	)
}

// snapshot commits the work tree at root as it is (tracked and untracked,
// not ignored files) into a new repository at dst, so pre-commit builds
// the code under test rather than the last commit. It returns the commit.
func snapshot(t *testing.T, root, dst string, env []string) string {
	t.Helper()
	list, err := output(t, root, env, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		t.Fatalf("git ls-files: %v: %s", err, list)
	}
	for _, name := range strings.Split(list, "\x00") {
		if name == "" {
			continue
		}
		if err := copyEntry(filepath.Join(root, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, dst, env, "git", "init", "-q")
	mustRun(t, dst, env, "git", "add", "-A")
	mustRun(t, dst, env, "git", "commit", "-q", "-m", "snapshot of the work tree")
	rev, err := output(t, dst, env, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatalf("git rev-parse: %v: %s", err, rev)
	}
	return strings.TrimSpace(rev)
}

// copyEntry copies a regular file (keeping its mode) or a symlink;
// tracked files deleted from the work tree and submodules are skipped.
func copyEntry(from, to string) error {
	st, err := os.Lstat(from)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(from)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		return os.Symlink(target, to)
	case st.Mode().IsRegular():
		data, err := os.ReadFile(from)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		return os.WriteFile(to, data, st.Mode().Perm())
	}
	return nil
}

// pos is "line:col" (1-based) of the first occurrence of sub in s.
func pos(t *testing.T, s, sub string) string {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("%q not in the test input", sub)
	}
	line := strings.Count(s[:i], "\n") + 1
	col := i - strings.LastIndex(s[:i], "\n")
	return fmt.Sprintf("%d:%d", line, col)
}

// commits counts the commits in the repository; 0 before the first.
func commits(t *testing.T, dir string, env []string) int {
	t.Helper()
	out, err := output(t, dir, env, "git", "rev-list", "--count", "--all")
	if err != nil {
		t.Fatalf("git rev-list: %v: %s", err, out)
	}
	var n int
	if _, err := fmt.Sscan(out, &n); err != nil {
		t.Fatalf("git rev-list: %q: %v", out, err)
	}
	return n
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// output runs a command in dir and returns its combined output. A nil env
// means the test process's.
func output(t *testing.T, dir string, env []string, argv ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, dir string, env []string, argv ...string) {
	t.Helper()
	if out, err := output(t, dir, env, argv...); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}
