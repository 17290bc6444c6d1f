// Package plan is the data model of the schema checks: a tree of Go
// checks (SchemaNode, SchemaField, ValueCheck) that internal/normalize
// walks to validate a document without CUE at run time, with what each
// check allows in words (Describe) and its verdict on a value (Ok). The
// trees are derived from schemas/*.cue by internal/planbuild and committed
// as Go in internal/normalize/plans_gen.go; this package imports no CUE,
// so the gpulint binary carries none.
package plan

import (
	"fmt"
	"strings"
)

// NodeKind is what shape of value a node checks.
type NodeKind uint8

const (
	NodeAny    NodeKind = iota // anything goes
	NodeNever                  // no value is allowed (a field set to _|_)
	NodeLeaf                   // a scalar constraint
	NodeStruct                 // a mapping
	NodeList                   // a list
	NodeUnion                  // alternatives of different shapes
)

// SchemaNode is the check for one position in a document.
type SchemaNode struct {
	Kind NodeKind
	Desc string // what the node allows, in words

	Check *ValueCheck // nodeLeaf

	// nodeStruct
	Fields    map[string]*SchemaField
	Names     []string // declared field names and literal pattern labels, sorted (for did-you-mean)
	Required  []string // required field names, sorted
	Literals  []*SchemaField
	Patterns  []SchemaPattern
	Open      bool   // keys matching no field or pattern are allowed
	Unknown   string // severity of a key that is not allowed
	Note      string // appended to unknown-key messages
	Auto      string // "dropped" or "unresolved": how "auto" is treated here
	Exclusive *ExclusiveKeys

	// nodeList
	Elem   *SchemaNode
	Prefix []*SchemaNode

	// nodeUnion
	StructAlts []*SchemaNode
	ListAlts   []*SchemaNode
	LeafAlt    *SchemaNode
	AnyAlt     bool
}

// ExclusiveKeys is a constraint across a struct's fields: at most one of
// keys may be set (@gpulint(exclusive="a b"), with the CUE comprehension
// that enforces it beside). The builder reads where CUE reports the
// conflict and its message from CUE itself.
type ExclusiveKeys struct {
	Keys []string
	At   string // the key CUE reports the conflict under
	Msg  string
}

// SchemaPattern is a pattern constraint [label]: value.
type SchemaPattern struct {
	Label *ValueCheck
	Field *SchemaField // the value's node and @gpulint attributes
}

// SchemaField is a declared field (or a pattern constraint) and its
// @gpulint attributes.
type SchemaField struct {
	Name     string
	Required bool
	Lit      *ValueCheck // set when the field's value is one literal (a discriminator)
	Node     *SchemaNode

	Severity   string
	Want       string
	Msg        string
	Deprecated string
	Removed    string
	When       string
}

// PatternsFor returns the pattern constraints whose label matches key.
func (n *SchemaNode) PatternsFor(key string) []*SchemaField {
	var out []*SchemaField
	for _, pt := range n.Patterns {
		if pt.Label.accepts(key) {
			out = append(out, pt.Field)
		}
	}
	return out
}

// Severities of a violation (normalize.SeverityError and the others are
// these).
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// ComparePaths orders paths element by element: indices before keys,
// indices numerically, keys lexically, a prefix before its extensions.
func ComparePaths(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aInt := a[i].(int)
		bi, bInt := b[i].(int)
		switch {
		case aInt && bInt:
			if ai != bi {
				return cmpInt(ai, bi)
			}
		case aInt:
			return -1
		case bInt:
			return 1
		default:
			if c := strings.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
				return c
			}
		}
	}
	return cmpInt(len(a), len(b))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
