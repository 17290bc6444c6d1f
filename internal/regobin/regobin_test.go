package regobin_test

import (
	"errors"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/gpulint/gpulint/internal/regobin"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/policies"
)

// roundTrip encodes and decodes m and checks the result equals m, the
// locations it keeps included. It returns how many locations it compared.
func roundTrip(t *testing.T, name string, m *ast.Module) int {
	t.Helper()
	data, err := regobin.EncodeModule(m)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	got, err := regobin.DecodeModule(data)
	if err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	if !got.Equal(m) {
		t.Fatalf("%s: decoded module differs:\n%s\nwant:\n%s", name, got, m)
	}
	if got.String() != m.String() {
		t.Fatalf("%s: decoded module prints differently", name)
	}
	if got.RegoVersion() != ast.RegoV1 {
		t.Fatalf("%s: rego version %v", name, got.RegoVersion())
	}
	// Locations kept: rules, heads and their values, expressions.
	locs := func(m *ast.Module) []string {
		var out []string
		add := func(what string, l *ast.Location) { out = append(out, what+" "+l.String()) }
		ast.WalkRules(m, func(r *ast.Rule) bool {
			add("rule", r.Location)
			add("head", r.Head.Location)
			if r.Head.Value != nil {
				add("value", r.Head.Value.Location)
			}
			return false
		})
		ast.WalkExprs(m, func(x *ast.Expr) bool { add("expr", x.Location); return false })
		return out
	}
	want, have := locs(m), locs(got)
	if len(want) != len(have) {
		t.Fatalf("%s: %d locations decoded, want %d", name, len(have), len(want))
	}
	for i := range want {
		if want[i] != have[i] {
			t.Fatalf("%s: %s, want %s", name, have[i], want[i])
		}
	}
	for _, r := range got.Rules {
		if r.Module != got {
			t.Fatalf("%s: rule %s not linked to its module", name, r.Head.Name)
		}
	}
	return len(want)
}

// TestRoundTripPolicies round-trips every built-in policy as parsed and as
// compiled.
func TestRoundTripPolicies(t *testing.T) {
	mods, err := rules.ParseModules(policies.FS, false)
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*ast.Module{}
	for _, m := range mods {
		pm, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		pm.Annotations, pm.Comments = nil, nil
		for _, r := range pm.Rules {
			r.Annotations = nil
		}
		parsed[m.File] = pm
		if roundTrip(t, m.File, pm.Copy()) == 0 && len(pm.Rules) > 0 {
			t.Fatalf("%s: no locations compared", m.File)
		}
	}
	c := ast.NewCompiler()
	c.Compile(parsed)
	if c.Failed() {
		t.Fatal(c.Errors)
	}
	for name, m := range c.Modules {
		roundTrip(t, name+" (compiled)", m)
	}
}

// TestRoundTripConstructs covers node kinds the policies may not use.
func TestRoundTripConstructs(t *testing.T) {
	src := `package x

import data.lib.helpers as h

default allow := false

allow if {
	some i, v in input.xs
	v == [1, 2.5, "s", null, true, {"a": {1, 2}}]
	not input.blocked[i]
	every k, w in input.ys { k != w }
	count({x | x := input.zs[_]}) > 0
	m := {k: v2 | some k, v2 in input.m}
	m.a == h.f(1) with input.q as {"z": false}
}

f(x) := y if { y := x + 1 } else := 0

p.q[r] contains s if { r := "a"; s := [t | t := input.u[_]] }
`
	m, err := ast.ParseModuleWithOpts("x.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	if roundTrip(t, "constructs", m) == 0 {
		t.Fatal("no locations compared")
	}
}

// TestUnsupported: a node outside the form is refused, never dropped.
func TestUnsupported(t *testing.T) {
	src := "package x\n\nmsg := $\"hello {input.name}\"\n"
	m, err := ast.ParseModuleWithOpts("x.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatalf("template strings no longer parse in the pinned OPA; pick another node outside regobin's form: %v", err)
	}
	if _, err := regobin.EncodeModule(m); !errors.Is(err, regobin.ErrUnsupported) {
		t.Fatalf("EncodeModule = %v, want ErrUnsupported", err)
	}
}

// FuzzDecodeModule: no input makes the decoder panic or loop; what it
// accepts encodes back to the same module.
func FuzzDecodeModule(f *testing.F) {
	m, err := ast.ParseModuleWithOpts("x.rego", "package x\n\np if { input.a[_] == {1: [2]} }\n",
		ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		f.Fatal(err)
	}
	seed, err := regobin.EncodeModule(m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("regobin1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := regobin.DecodeModule(data)
		if err != nil {
			return
		}
		again, err := regobin.EncodeModule(got)
		if err != nil {
			return // e.g. a rule without a head value the encoder refuses
		}
		back, err := regobin.DecodeModule(again)
		if err != nil {
			t.Fatalf("re-encoded module does not decode: %v", err)
		}
		if !back.Equal(got) {
			t.Fatalf("re-encoded module differs")
		}
	})
}
