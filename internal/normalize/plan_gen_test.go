package normalize

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
	"github.com/gpulint/gpulint/internal/normalize/internal/planbuild"
)

// TestGeneratedPlans holds plans_gen.go to what internal/genplans writes
// from schemas/*.cue now. After changing a schema (or the builder), run
// `go generate ./...` and review the diff.
func TestGeneratedPlans(t *testing.T) {
	if diff := cmp.Diff(schemaNames(), planbuild.Schemas()); diff != "" {
		t.Errorf("the validator's schemas and the builder's differ (-validator +builder):\n%s", diff)
	}
	b := builtSchemas(t)
	var builds []*planbuild.Build
	for _, s := range planbuild.Schemas() {
		builds = append(builds, b[s])
	}
	src, err := planbuild.Render(builds)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("plans_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, committed) {
		t.Errorf("plans_gen.go is stale: run go generate ./... and review the diff")
	}
}

// TestGeneratedPlansMatchBuilder compares the trees plans_gen.go builds
// with the builder's, field by field: the rendering loses nothing.
func TestGeneratedPlansMatchBuilder(t *testing.T) {
	for name, b := range builtSchemas(t) {
		gen := generatedPlan(name)
		if gen == nil {
			t.Fatalf("plans_gen.go has no plan for %s", name)
		}
		var got, want bytes.Buffer
		dumpNode(&got, gen(), "", map[*plan.SchemaNode]bool{})
		dumpNode(&want, b.Root, "", map[*plan.SchemaNode]bool{})
		if got.String() != want.String() {
			t.Errorf("%s: plans_gen.go differs from the builder's tree; run go generate ./...", name)
		}
	}
	if generatedPlan("helm") != nil {
		t.Error("generatedPlan answers for a schema that does not exist")
	}
}

// dumpNode writes a tree as text, every field of every node and check.
func dumpNode(w *bytes.Buffer, n *plan.SchemaNode, indent string, seen map[*plan.SchemaNode]bool) {
	if n == nil {
		fmt.Fprintf(w, "%snil\n", indent)
		return
	}
	fmt.Fprintf(w, "%snode kind=%d desc=%q open=%v unknown=%q note=%q auto=%q anyAlt=%v names=%q required=%q\n",
		indent, n.Kind, n.Desc, n.Open, n.Unknown, n.Note, n.Auto, n.AnyAlt, n.Names, n.Required)
	if seen[n] {
		fmt.Fprintf(w, "%s  (again)\n", indent)
		return
	}
	seen[n] = true
	in := indent + "  "
	if n.Check != nil {
		fmt.Fprintf(w, "%scheck %s\n", in, dumpCheck(n.Check))
	}
	if x := n.Exclusive; x != nil {
		fmt.Fprintf(w, "%sexclusive %q at=%q msg=%q\n", in, x.Keys, x.At, x.Msg)
	}
	for _, k := range slices.Sorted(mapsKeys(n.Fields)) {
		dumpField(w, n.Fields[k], in, seen)
	}
	for _, f := range n.Literals {
		fmt.Fprintf(w, "%sliteral %s\n", in, f.Name)
	}
	for _, p := range n.Patterns {
		fmt.Fprintf(w, "%spattern %s\n", in, dumpCheck(p.Label))
		dumpField(w, p.Field, in+"  ", seen)
	}
	for _, e := range n.Prefix {
		fmt.Fprintf(w, "%sprefix\n", in)
		dumpNode(w, e, in+"  ", seen)
	}
	if n.Elem != nil {
		fmt.Fprintf(w, "%selem\n", in)
		dumpNode(w, n.Elem, in+"  ", seen)
	}
	for _, a := range n.StructAlts {
		fmt.Fprintf(w, "%sstructAlt\n", in)
		dumpNode(w, a, in+"  ", seen)
	}
	for _, a := range n.ListAlts {
		fmt.Fprintf(w, "%slistAlt\n", in)
		dumpNode(w, a, in+"  ", seen)
	}
	if n.LeafAlt != nil {
		fmt.Fprintf(w, "%sleafAlt\n", in)
		dumpNode(w, n.LeafAlt, in+"  ", seen)
	}
}

func dumpField(w *bytes.Buffer, f *plan.SchemaField, indent string, seen map[*plan.SchemaNode]bool) {
	fmt.Fprintf(w, "%sfield %q required=%v severity=%q want=%q msg=%q deprecated=%q removed=%q when=%q\n",
		indent, f.Name, f.Required, f.Severity, f.Want, f.Msg, f.Deprecated, f.Removed, f.When)
	if f.Lit != nil {
		fmt.Fprintf(w, "%s  lit %s\n", indent, dumpCheck(f.Lit))
	}
	dumpNode(w, f.Node, indent+"  ", seen)
}

func dumpCheck(c *plan.ValueCheck) string {
	var s strings.Builder
	fmt.Fprintf(&s, "{op=%d kinds=%d lit=%T(%v) bound=%d num=%v", c.Op, c.Kinds, c.Lit, c.Lit, c.Bound, c.Num)
	if c.Re != nil {
		fmt.Fprintf(&s, " re=%q", c.Re.String())
	}
	if c.Set != nil {
		fmt.Fprintf(&s, " set=%q", slices.Sorted(mapsKeys(c.Set)))
	}
	for _, a := range c.Args {
		s.WriteString(" " + dumpCheck(a))
	}
	s.WriteString("}")
	return s.String()
}
