package policies_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
	"github.com/gpulint/gpulint/policies"
)

// TestCases runs every rule's txtar cases through the real pipeline:
// input files are linted, the text report is compared with want/findings,
// fixes are applied and compared with want/fixed/..., and each fix is
// checked for convergence (the fixed finding is gone) and idempotence
// (fixing the fixed file changes nothing).
func TestCases(t *testing.T) {
	deps, err := lint.BuildDeps(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.Glob(policies.FS, "*/*/testdata")
	if err != nil {
		t.Fatal(err)
	}
	fixCases := map[string]bool{}
	for _, dir := range dirs {
		ruleID := strings.ToUpper(filepath.Base(filepath.Dir(dir)))
		for _, c := range golden.Cases(t, dir) {
			t.Run(ruleID+"/"+strings.TrimSuffix(filepath.Base(c.Path), ".txtar"), func(t *testing.T) {
				if runCase(t, deps, ruleID, &c) {
					fixCases[ruleID] = true
				}
				c.Save(t)
			})
		}
	}
	for _, r := range deps.Catalog.All() {
		if r.Fixable && !fixCases[r.ID] && !golden.Updating() {
			t.Errorf("rule %s is fixable but no case has a want/fixed section", r.ID)
		}
	}
}

func runCase(t *testing.T, deps lint.Deps, ruleID string, c *golden.Case) (fixed bool) {
	dir := t.TempDir()
	inputs := c.Prefixed("input/")
	if len(inputs) == 0 {
		t.Fatalf("%s: no input/ sections", c.Path)
	}
	var files []string
	for name, data := range inputs {
		p := filepath.Join(dir, "input", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	sort.Strings(files)
	opts := lint.Options{Workers: 2, Root: filepath.Join(dir, "input")}
	if proj, ok := c.File("gpulint.yaml"); ok {
		p := filepath.Join(dir, ".gpulint.yaml")
		if err := os.WriteFile(p, proj, 0o644); err != nil {
			t.Fatal(err)
		}
		pr, err := config.Load(p, deps.Validator)
		if err != nil {
			t.Fatal(err)
		}
		opts.Project = pr
	}
	l := lint.New(deps, opts)
	ctx := context.Background()
	res, err := l.Run(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	c.Want(t, "want/findings", render(t, dir, res))

	name := filepath.Base(c.Path)
	has := false
	for _, f := range res.Findings {
		has = has || f.Rule == ruleID
	}
	switch {
	case strings.HasPrefix(name, "fires") && !has:
		t.Errorf("%s: a fires_ case must report %s", c.Path, ruleID)
	case strings.HasPrefix(name, "quiet") && has:
		t.Errorf("%s: a quiet_ case must not report %s", c.Path, ruleID)
	}

	// A case with a "tune" section applies the tuner's fixes too, as
	// `gpulint fix --tune` does.
	_, tune := c.File("tune")
	for _, fr := range res.Files {
		rel := strings.TrimPrefix(fr.Path, filepath.Join(dir, "input")+string(filepath.Separator))
		out, err := l.Fix(ctx, fr, tune)
		if err != nil {
			t.Fatal(err)
		}
		section := "want/fixed/" + rel
		if out.Refused != "" {
			t.Errorf("%s: fix refused: %s", c.Path, out.Refused)
		}
		if !out.Changed() {
			c.Drop(t, section)
			continue
		}
		fixed = true
		c.Want(t, section, out.New)
		// Idempotence: fixing the fixed file changes nothing more for the
		// rules that were fixed.
		again, err := l.LintBytes(ctx, fr.Path, out.New)
		if err != nil {
			t.Fatal(err)
		}
		out2, err := l.Fix(ctx, again, tune)
		if err != nil {
			t.Fatal(err)
		}
		if out2.Changed() {
			t.Errorf("%s: fixing the fixed file changed it again:\n%s", c.Path, out2.New)
		}
		for _, a := range out.Applied {
			for _, f := range again.Findings {
				if f.Rule == a.Rule && f.Range.Start.Line == a.Range.Start.Line && f.Message == a.Message {
					t.Errorf("%s: %s still reported after its fix", c.Path, a.Slug)
				}
			}
		}
	}
	return fixed
}

// render prints findings as the text renderer does, with paths relative to
// the case directory.
func render(t *testing.T, dir string, res *lint.Result) []byte {
	var b bytes.Buffer
	// A case holds each rule's whole message on its line: the text
	// renderer's summary and --verbose details are the report package's
	// to test, not each rule's.
	fs := slices.Clone(res.Findings)
	for i := range fs {
		fs[i].Summary, fs[i].Details = "", nil
	}
	in := report.Input{Findings: fs}
	s := res.Summary()
	in.Summary = report.Summary{Files: s.Files, Errors: s.Errors, Warnings: s.Warnings, Infos: s.Infos}
	if err := report.Text(&b, in, report.Options{ShowFixes: true}); err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(b.Bytes(), []byte(dir+string(filepath.Separator)), nil)
}
