package lint_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/policies"
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
// and all at once, for several targets (one under -short): every finding,
// position, message and fix must be the same.
func TestBundleEquivalent(t *testing.T) {
	files, err := lint.Collect([]string{corpus.Dir(t), filepath.Join("..", "..", "examples")})
	if err != nil {
		t.Fatal(err)
	}
	deps := func() (pre, src lint.Deps) {
		t.Helper()
		pre, err := lint.BuildDeps(policies.FS)
		if err != nil {
			t.Fatal(err)
		}
		if !pre.Engine.Precompiled() {
			t.Fatal("the embedded bundle was not taken: run go generate ./...")
		}
		src, err = lint.BuildDeps(withoutBundle{policies.FS})
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
	targets := []string{"H100", "", "T4", "A100-40GB"}
	if testing.Short() {
		// The contributor's loop: one target, file by file (the per-kind
		// compile). CI runs without -short and sweeps every target.
		targets = targets[:1]
	}
	for _, gpu := range targets {
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

// teamPolicy is a custom rule that uses the built-in library: it flags
// every DeepSpeed config at ZeRO stage 3 and every Kubernetes document.
const teamPolicy = `# METADATA
# title: Team probe
# custom:
#   id: TEAM001
#   slug: team-probe
#   severity: info
#   rationale: Probes custom policies beside precompiled ones.
#   remediation: None.
#   kinds: ["deepspeed", "kubernetes"]
#   since: 0.1.0
#   fixable: false
package team.probe

import data.gpulint.lib

findings contains f if {
	input.kind == "deepspeed"
	input.workload.zero.stage == 3
	f := lib.finding(lib.where("zero.stage"), "team: ZeRO-3")
}

findings contains f if {
	input.kind == "kubernetes"
	f := {"path": [], "message": sprintf("team: %s", [input.doc.kind])}
}
`

// TestCustomBesideBundle: custom policies compile from source beside the
// precompiled built-in rules, and the results equal those of compiling
// everything from source; a custom policy that reaches into a built-in
// package makes the engine compile everything from source.
func TestCustomBesideBundle(t *testing.T) {
	files, err := lint.Collect([]string{corpus.Dir(t), filepath.Join("..", "..", "examples")})
	if err != nil {
		t.Fatal(err)
	}
	team := fstest.MapFS{"team/probe.rego": {Data: []byte(teamPolicy)}}
	split, err := lint.BuildDeps(policies.FS, team)
	if err != nil {
		t.Fatal(err)
	}
	if !split.Engine.Precompiled() {
		t.Fatal("built-in rules were not taken from the bundle beside a custom policy")
	}
	whole, err := lint.BuildDeps(withoutBundle{policies.FS}, team)
	if err != nil {
		t.Fatal(err)
	}
	run := func(d lint.Deps) *lint.Result {
		t.Helper()
		res, err := lint.New(d, lint.Options{GPU: "H100"}).Run(context.Background(), files)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	got, want := run(split), run(whole)
	n := 0
	for _, f := range want.Findings {
		if f.Rule == "TEAM001" {
			n++
		}
	}
	if n < 10 {
		t.Fatalf("the custom rule fired %d times; the comparison would prove little", n)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(lint.FileResult{})); diff != "" {
		t.Errorf("custom beside the bundle differs from all from source (-source +split):\n%s", diff)
	}

	for name, src := range map[string]string{
		"extends a built-in package": strings.Replace(teamPolicy, "package team.probe", "package gpulint.lib.team", 1),
		"reads a built-in rule": strings.Replace(teamPolicy, `input.kind == "deepspeed"
	input.workload`, `input.kind == "deepspeed"
	count(data.gpulint.rules.gpu004.findings) >= 0
	input.workload`, 1),
	} {
		d, err := lint.BuildDeps(policies.FS, fstest.MapFS{"team/probe.rego": {Data: []byte(src)}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Engine.Precompiled() {
			t.Errorf("%s: built-in rules taken from the bundle", name)
		}
	}
}
