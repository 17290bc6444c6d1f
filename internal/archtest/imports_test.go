package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/gpulint/gpulint"

// pkg is one package of the module with everything it imports,
// transitively (go list's Deps; test files excluded).
type pkg struct {
	ImportPath string
	Deps       []string
}

// rule forbids packages matching Pkg to depend on module packages that
// Forbid reports.
type rule struct {
	Pkg    string // import path relative to the module; a trailing /... takes subpackages
	Why    string
	Forbid func(dep string) bool // dep relative to the module
}

func matches(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// under reports module packages at or below any of dirs.
func under(dirs ...string) func(string) bool {
	return func(dep string) bool {
		for _, d := range dirs {
			if matches(d+"/...", dep) {
				return true
			}
		}
		return false
	}
}

// rules are STYLE.md §2's dependency directions, plus the format
// packages' independence from the pipeline (principle 9).
var rules = []rule{
	{Pkg: "internal/finding", Why: "finding imports nothing from gpulint", Forbid: func(string) bool { return true }},
	{Pkg: "internal/edit", Why: "edit imports only finding", Forbid: func(d string) bool { return d != "internal/finding" }},
	{Pkg: "tuner/...", Why: "tuner imports nothing from internal/", Forbid: under("internal")},
	{Pkg: "internal/kube", Why: "format packages feed lint, never the reverse", Forbid: under("internal/lint", "internal/cli")},
	{Pkg: "internal/mig", Why: "format packages feed lint, never the reverse", Forbid: under("internal/lint", "internal/cli")},
	{Pkg: "internal/kustomize", Why: "format packages feed lint, never the reverse", Forbid: under("internal/lint", "internal/cli")},
	{Pkg: "internal/normalize", Why: "normalisation feeds lint, never the reverse", Forbid: under("internal/lint", "internal/cli", "internal/check")},
	{Pkg: "internal/recipe", Why: "format packages feed lint, never the reverse", Forbid: under("internal/lint", "internal/cli", "internal/check")},
	{Pkg: "internal/terraform", Why: "format packages feed lint, never the reverse", Forbid: under("internal/lint", "internal/cli", "internal/check")},
	{Pkg: "internal/value", Why: "value reads decoded documents for every format package and imports nothing from gpulint", Forbid: func(string) bool { return true }},
	{Pkg: "internal/config", Why: "the project file feeds lint, never the reverse", Forbid: under("internal/lint", "internal/cli")},
	{Pkg: "internal/check", Why: "check never imports report", Forbid: under("internal/report")},
	{Pkg: "internal/baseline", Why: "a baseline is findings in and out; it never runs the linter", Forbid: under("internal/lint", "internal/cli")},
}

// violations lists each dependency of a package that a rule forbids, and
// each rule whose package is missing (a rename must update the rule, not
// silence it).
func violations(pkgs []pkg, rules []rule) []string {
	var out []string
	for _, r := range rules {
		seen := false
		for _, p := range pkgs {
			rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
			if !ok || !matches(r.Pkg, rel) {
				continue
			}
			seen = true
			for _, d := range p.Deps {
				drel, ok := strings.CutPrefix(d, module+"/")
				if ok && drel != rel && r.Forbid(drel) {
					out = append(out, rel+" imports "+drel+": "+r.Why)
				}
			}
		}
		if !seen {
			out = append(out, "no package "+r.Pkg+" in the module: "+r.Why)
		}
	}
	return out
}

// TestViolations shows the checker fires on a forbidden edge, transitive
// or direct, and on a rule that names no package.
func TestViolations(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: module + "/internal/finding"},
		{ImportPath: module + "/internal/edit", Deps: []string{"bytes", module + "/internal/finding", module + "/internal/source"}},
		{ImportPath: module + "/tuner", Deps: []string{module + "/internal/finding"}},
		{ImportPath: module + "/internal/kube", Deps: []string{module + "/internal/lint"}},
	}
	rs := rules[:4]
	rs = append(rs[:len(rs):len(rs)], rule{Pkg: "internal/gone", Why: "x", Forbid: under("internal")})
	want := []string{
		"internal/edit imports internal/source: edit imports only finding",
		"tuner imports internal/finding: tuner imports nothing from internal/",
		"internal/kube imports internal/lint: format packages feed lint, never the reverse",
		"no package internal/gone in the module: x",
	}
	if diff := cmp.Diff(want, violations(pkgs, rs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestImportGraph holds the module's real import graph to the rules.
func TestImportGraph(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Deps", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	for _, v := range violations(pkgs, rules) {
		t.Error(v)
	}
}
