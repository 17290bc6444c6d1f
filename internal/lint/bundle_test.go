package lint_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

// withoutBundle hides the precompiled bundle, so the engine compiles the
// policies from source.
type withoutBundle struct{ fs.FS }

func (w withoutBundle) Open(name string) (fs.File, error) {
	if name == lint.BundleFile {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return w.FS.Open(name)
}

// TestBundleEquivalent lints the corpus and the examples with the
// precompiled policies and with policies compiled from source, per kind
// and all at once, for several targets: every finding, position, message
// and fix must be the same.
func TestBundleEquivalent(t *testing.T) {
	files, err := lint.Collect([]string{corpusDir(t), filepath.Join("..", "..", "examples")})
	if err != nil {
		t.Fatal(err)
	}
	deps := func() (pre, src lint.Deps) {
		t.Helper()
		pre, err := lint.BuildDeps(policies.FS, schemas.FS)
		if err != nil {
			t.Fatal(err)
		}
		if !pre.Engine.Precompiled() {
			t.Fatal("the embedded bundle was not taken: run go test ./internal/check -run TestBundleCurrent -update")
		}
		src, err = lint.BuildDeps(withoutBundle{policies.FS}, schemas.FS)
		if err != nil {
			t.Fatal(err)
		}
		if src.Engine.Precompiled() {
			t.Fatal("the engine found a bundle that was hidden")
		}
		return pre, src
	}
	// One file per run: the engine compiles the rules of each kind apart.
	perKindPre, perKindSrc := deps()
	// All files in one run: one compile of every rule.
	allPre, allSrc := deps()
	for _, gpu := range []string{"", "H100", "T4", "A100-40GB"} {
		perFile := gpu == "H100"
		run := func(d lint.Deps) *lint.Result {
			t.Helper()
			l := lint.New(d, lint.Options{GPU: gpu})
			if !perFile {
				res, err := l.Run(context.Background(), files)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			all := &lint.Result{}
			for _, f := range files {
				res, err := l.Run(context.Background(), []string{f})
				if err != nil {
					t.Fatal(err)
				}
				all.Files = append(all.Files, res.Files...)
				all.Findings = append(all.Findings, res.Findings...)
			}
			return all
		}
		var got, want *lint.Result
		if perFile {
			got, want = run(perKindPre), run(perKindSrc)
		} else {
			got, want = run(allPre), run(allSrc)
		}
		n := 0
		for _, fr := range want.Files {
			n += len(fr.Findings)
		}
		if n == 0 {
			t.Fatalf("gpu %q: no findings at all; the comparison would prove nothing", gpu)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(lint.FileResult{})); diff != "" {
			t.Errorf("gpu %q: precompiled policies differ from source (-source +bundle):\n%s", gpu, diff)
		}
	}
}
