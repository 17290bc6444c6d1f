package normalize

// A schemaPlan is a schema turned into a tree of Go checks, so that a
// document is validated by walking it, without CUE at run time. The trees
// are derived from the compiled CUE (schemas/*.cue) by the test-side
// builder (plan_build_test.go) and committed as Go in plans_gen.go;
// TestGeneratedPlans fails when that file is stale (`go generate
// ./internal/normalize` rewrites it), and the equivalence tests hold the
// checks' verdicts to CUE's own unification.
type schemaPlan struct {
	root *schemaNode
}

type nodeKind uint8

const (
	nodeAny    nodeKind = iota // anything goes
	nodeNever                  // no value is allowed (a field set to _|_)
	nodeLeaf                   // a scalar constraint
	nodeStruct                 // a mapping
	nodeList                   // a list
	nodeUnion                  // alternatives of different shapes
)

// schemaNode is the check for one position in a document.
type schemaNode struct {
	kind nodeKind
	desc string // what the node allows, in words

	check *valueCheck // nodeLeaf

	// nodeStruct
	fields    map[string]*schemaField
	names     []string // declared field names and literal pattern labels, sorted (for did-you-mean)
	required  []string // required field names, sorted
	literals  []*schemaField
	patterns  []schemaPattern
	open      bool   // keys matching no field or pattern are allowed
	unknown   string // severity of a key that is not allowed
	note      string // appended to unknown-key messages
	auto      string // "dropped" or "unresolved": how "auto" is treated here
	exclusive *exclusiveKeys

	// nodeList
	elem   *schemaNode
	prefix []*schemaNode

	// nodeUnion
	structAlts []*schemaNode
	listAlts   []*schemaNode
	leafAlt    *schemaNode
	anyAlt     bool
}

// exclusiveKeys is a constraint across a struct's fields: at most one of
// keys may be set (@gpulint(exclusive="a b"), with the CUE comprehension
// that enforces it beside). The builder reads where CUE reports the
// conflict and its message from CUE itself.
type exclusiveKeys struct {
	keys []string
	at   string // the key CUE reports the conflict under
	msg  string
}

// schemaPattern is a pattern constraint [label]: value.
type schemaPattern struct {
	label *valueCheck
	field *schemaField // the value's node and @gpulint attributes
}

// schemaField is a declared field (or a pattern constraint) and its
// @gpulint attributes.
type schemaField struct {
	name     string
	required bool
	lit      *valueCheck // set when the field's value is one literal (a discriminator)
	node     *schemaNode

	severity   string
	want       string
	msg        string
	deprecated string
	removed    string
	when       string
}

// patternsFor returns the pattern constraints whose label matches key.
func (n *schemaNode) patternsFor(key string) []*schemaField {
	var out []*schemaField
	for _, pt := range n.patterns {
		if pt.label.accepts(key) {
			out = append(out, pt.field)
		}
	}
	return out
}
