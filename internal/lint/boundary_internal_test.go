package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// boundaryTree makes the directories and files named (a name ending in
// "/" is a directory) under a new temporary directory and returns it.
func boundaryTree(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if n[len(n)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("fail-on: warning\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Without .git, a stray project file in the home directory does not make
// the home directory the repository of every tree below it: the walk
// stops below home, at the linted tree's own outermost project file, or
// finds none.
func TestRepoBoundaryStopsBelowHome(t *testing.T) {
	tmp := boundaryTree(t, "home/.gpulint.yaml", "home/work/loose/k8s/", "home/work/proj/.gpulint.yaml", "home/work/proj/k8s/")
	home := filepath.Join(tmp, "home")
	if got := repoBoundary(filepath.Join(home, "work", "loose", "k8s"), -1, home); got != "" {
		t.Errorf("a tree with no project file of its own is bounded by %s: the stray home project file widened the walk", got)
	}
	proj := filepath.Join(home, "work", "proj")
	if got := repoBoundary(filepath.Join(proj, "k8s"), -1, home); got != proj {
		t.Errorf("the project is bounded by %s, want its own project file's directory %s", got, proj)
	}
	// The launch graph's bounded lookup stops there too.
	if got := repoBoundary(filepath.Join(proj, "k8s"), rootLevels, home); got != proj {
		t.Errorf("within rootLevels the project is bounded by %s, want %s", got, proj)
	}
}

// A .git in the home directory (a dotfiles repository) is as stray: a
// project below home without .git keeps its own project file's bound.
func TestRepoBoundaryIgnoresDotfilesGit(t *testing.T) {
	tmp := boundaryTree(t, "home/.git/", "home/proj/.gpulint.yaml", "home/proj/train/")
	home := filepath.Join(tmp, "home")
	proj := filepath.Join(home, "proj")
	if got := repoBoundary(filepath.Join(proj, "train"), -1, home); got != proj {
		t.Errorf("the project is bounded by %s, want %s: the home directory's .git widened the walk", got, proj)
	}
}

// A monorepo below home without .git, with a project file at its root and
// one per team, is still one repository: the outermost project file below
// home bounds it, so k8s/ links to train/.
func TestRepoBoundaryMonorepoWithoutGit(t *testing.T) {
	tmp := boundaryTree(t, "home/mono/.gpulint.yaml", "home/mono/train/.gpulint.yaml", "home/mono/k8s/")
	home := filepath.Join(tmp, "home")
	mono := filepath.Join(home, "mono")
	for _, d := range []string{"k8s", "train"} {
		if got := repoBoundary(filepath.Join(mono, d), -1, home); got != mono {
			t.Errorf("%s/ is bounded by %s, want the monorepo root %s", d, got, mono)
		}
	}
}

// Options.Home reaches repoBoundary from a Linter, made absolute.
func TestLinterHomeIsAbsolute(t *testing.T) {
	l := &Linter{opts: Options{Home: "rel/home"}}
	if h := l.home(); !filepath.IsAbs(h) || filepath.Base(h) != "home" {
		t.Errorf("home() = %q, want an absolute path ending in home", h)
	}
	if h := (&Linter{}).home(); h != "" {
		t.Errorf("with no Options.Home, home() = %q, want none", h)
	}
}
