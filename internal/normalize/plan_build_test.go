package normalize

import (
	"slices"
	"sync"
	"testing"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
	"github.com/gpulint/gpulint/internal/normalize/internal/planbuild"
	"github.com/gpulint/gpulint/schemas"
)

var (
	builtOnce sync.Once
	built     map[string]*planbuild.Build
	builtErr  error
)

// builtSchemas builds every schema in schemas.FS once per test binary.
func builtSchemas(t testing.TB) map[string]*planbuild.Build {
	t.Helper()
	builtOnce.Do(func() {
		built = map[string]*planbuild.Build{}
		for _, s := range schemaNames() {
			b, err := planbuild.FromCUE(schemas.FS, s)
			if err != nil {
				builtErr = err
				return
			}
			built[s] = b
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return built
}

// allNodes returns every node of a tree, parents first.
func allNodes(root *plan.SchemaNode) []*plan.SchemaNode {
	var out []*plan.SchemaNode
	seen := map[*plan.SchemaNode]bool{}
	var visit func(n *plan.SchemaNode)
	visit = func(n *plan.SchemaNode) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for _, name := range slices.Sorted(mapsKeys(n.Fields)) {
			visit(n.Fields[name].Node)
		}
		for _, pt := range n.Patterns {
			visit(pt.Field.Node)
		}
		visit(n.Elem)
		for _, e := range n.Prefix {
			visit(e)
		}
		for _, a := range n.StructAlts {
			visit(a)
		}
		for _, a := range n.ListAlts {
			visit(a)
		}
		visit(n.LeafAlt)
	}
	visit(root)
	return out
}
