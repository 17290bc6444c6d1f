package policies_test

import (
	"context"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/policies"
)

// TestRego runs every *_test.rego through OPA's own test runner, with the
// same sandboxed capabilities the engine uses, so `go test ./...` covers
// the Rego unit tests.
func TestRego(t *testing.T) {
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".rego" {
			return err
		}
		src, err := fs.ReadFile(policies.FS, p)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
		if err != nil {
			return err
		}
		modules[p] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	compiler := ast.NewCompiler().WithCapabilities(check.Capabilities()).WithEnablePrintStatements(true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cov := cover.New()
	ch, err := tester.NewRunner().SetCompiler(compiler).SetTimeout(30*time.Second).CapturePrintOutput(true).
		SetCoverageQueryTracer(cov).Run(ctx, modules)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range ch {
		n++
		if r.Error != nil {
			t.Errorf("%s: %s: error: %v", r.Location, r.Name, r.Error)
			continue
		}
		if r.Fail {
			t.Errorf("%s: %s failed\n%s", r.Location, r.Name, r.Output)
		}
	}
	if n == 0 {
		t.Fatal("no Rego tests found")
	}
	// Coverage of the rule modules (tests themselves excluded), reported
	// per file below the overall figure: `go test ./policies -run TestRego -v`.
	rulesOnly := map[string]*ast.Module{}
	for name, m := range modules {
		if !strings.HasSuffix(name, "_test.rego") {
			rulesOnly[name] = m
		}
	}
	rep := cov.Report(rulesOnly)
	t.Logf("%d Rego tests; coverage of rule modules %.1f%%", n, rep.Coverage)
	for _, name := range sortedNames(rep.Files) {
		if fr := rep.Files[name]; fr != nil {
			t.Logf("  %5.1f%%  %s", fr.Coverage, name)
		}
	}
	if rep.Coverage < 70 {
		t.Errorf("Rego unit tests cover %.1f%% of the rule modules; keep it above 70%%", rep.Coverage)
	}
}

// TestCatalog checks every rule's metadata loads and each rule package
// with findings has unit tests beside it.
func TestCatalog(t *testing.T) {
	_, cat, err := rules.LoadFS(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.All()) < 6 {
		t.Fatalf("catalog has %d rules, want the seed rules at least", len(cat.All()))
	}
	for _, r := range cat.All() {
		src, err := fs.ReadFile(policies.FS, r.File)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "findings contains") {
			continue // reported by Go code (parser, schemas, suppressions)
		}
		test := strings.TrimSuffix(r.File, ".rego") + "_test.rego"
		if _, err := fs.Stat(policies.FS, test); err != nil {
			t.Errorf("rule %s (%s) has no unit tests at %s", r.ID, r.File, test)
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
