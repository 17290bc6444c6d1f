package normalize

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"cuelang.org/go/cue"
)

// A schemaPlan is a compiled schema turned into a tree of Go-side checks.
// The tree is read from the compiled CUE once (buildPlan) so that a
// document can be validated by walking it, without a CUE unification per
// file. Constraints the tree cannot express are left to CUE: leaf
// constraints with unsupported operators (checkCUE) and structs marked
// @gpulint(check=cue).
type schemaPlan struct {
	name string
	file *compiledFile

	root *schemaNode

	regexps map[string]*regexp.Regexp // compiled patterns, shared by checks; guarded by file.mu

	memoMu sync.Mutex // guards memo
	memo   map[memoKey]bool
	delMu  sync.Mutex // guards delegated
	// delegated caches CUE's verdicts on delegated sub-documents, keyed by
	// node and the sub-document's canonical JSON.
	delegated map[delegateKey][]Violation
}

type memoKey struct {
	c *valueCheck
	v any
}

type delegateKey struct {
	n   *schemaNode
	doc string
}

// memoLimit bounds each cache; beyond it results are computed, not stored.
const memoLimit = 8192

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
	val  cue.Value
	desc string // what the node allows, in words

	check *valueCheck // nodeLeaf

	// nodeStruct
	fields   map[string]*schemaField
	names    []string // declared field names and literal pattern labels, sorted (for did-you-mean)
	required []string // required field names, sorted
	literals []*schemaField
	patterns []schemaPattern
	open     bool   // keys matching no field or pattern are allowed
	unknown  string // severity of a key that is not allowed
	note     string // appended to unknown-key messages
	auto     string // "dropped" or "unresolved": how "auto" is treated here
	delegate bool   // also unify with CUE (cross-field constraints)

	// nodeList
	elem   *schemaNode
	prefix []*schemaNode

	// nodeUnion
	structAlts []*schemaNode
	listAlts   []*schemaNode
	leafAlt    *schemaNode
	anyAlt     bool
}

// schemaPattern is a pattern constraint [label]: value.
type schemaPattern struct {
	label *valueCheck
	field *schemaField // the value's node and @gpulint attributes
}

// schemaField is a declared field (or a pattern constraint) and its
// @gpulint attributes. Its node and attributes are read from CUE on first
// use (schemaPlan.load): a document touches few of a schema's fields, and
// a run that lints one file should not pay for the rest.
type schemaField struct {
	name     string
	required bool
	lit      *valueCheck // set when the field's value is one literal (a discriminator)

	val   cue.Value
	depth int
	once  sync.Once
	err   error

	// Set by load.
	node       *schemaNode
	severity   string
	want       string
	msg        string
	deprecated string
	removed    string
	when       string
}

// maxDepth guards against runaway recursion in a (mistakenly) recursive
// schema; deeper positions accept anything.
const maxDepth = 40

func buildPlan(name string, f *compiledFile, def string) (p *schemaPlan, err error) {
	root := f.val.LookupPath(cue.ParsePath(def))
	if !root.Exists() {
		return nil, fmt.Errorf("schema %s: definition %s not found", name, def)
	}
	p = &schemaPlan{name: name, file: f, memo: map[memoKey]bool{}, delegated: map[delegateKey][]Violation{},
		regexps: map[string]*regexp.Regexp{}}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if r := recover(); r != nil { // the CUE API panics on some misuse; report it as a broken schema
			p, err = nil, fmt.Errorf("schema %s: %v", name, r)
		}
	}()
	p.root, err = p.build(root, 0)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return p, nil
}

// build derives the node for a schema value. Callers hold p.file.mu.
func (p *schemaPlan) build(v cue.Value, depth int) (*schemaNode, error) {
	if depth > maxDepth {
		return &schemaNode{kind: nodeAny, val: v, desc: "any value"}, nil
	}
	ev := v.Eval()
	if ev.Err() != nil {
		return &schemaNode{kind: nodeNever, val: ev, desc: "nothing"}, nil
	}
	if op, args := ev.Expr(); op == cue.OrOp && len(args) > 1 {
		// Prefer the alternatives as written (references, not evaluated
		// structs): a delegated struct must be unified unevaluated for its
		// comprehensions to see the document.
		if vop, vargs := v.Expr(); vop == cue.OrOp && len(vargs) > 1 {
			args = vargs
		}
		return p.buildUnion(ev, args, depth)
	}
	switch k := ev.IncompleteKind(); k {
	case cue.TopKind:
		return &schemaNode{kind: nodeAny, val: ev, desc: "any value"}, nil
	case cue.StructKind:
		n, err := p.buildStruct(ev, depth)
		if n != nil {
			n.val = v // unevaluated, so that delegated unification re-runs comprehensions
		}
		return n, err
	case cue.ListKind:
		return p.buildList(ev, depth)
	case cue.BottomKind:
		return &schemaNode{kind: nodeNever, val: ev, desc: "nothing"}, nil
	}
	c := p.buildCheck(ev)
	return &schemaNode{kind: nodeLeaf, val: ev, check: c, desc: c.describe()}, nil
}

func (p *schemaPlan) buildUnion(ev cue.Value, args []cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeUnion, val: ev}
	var leaves []*valueCheck
	var add func(a *schemaNode)
	add = func(a *schemaNode) {
		switch a.kind {
		case nodeStruct:
			n.structAlts = append(n.structAlts, a)
		case nodeList:
			n.listAlts = append(n.listAlts, a)
		case nodeLeaf:
			leaves = append(leaves, a.check)
		case nodeAny:
			n.anyAlt = true
		case nodeUnion:
			n.structAlts = append(n.structAlts, a.structAlts...)
			n.listAlts = append(n.listAlts, a.listAlts...)
			if a.leafAlt != nil {
				leaves = append(leaves, a.leafAlt.check)
			}
			n.anyAlt = n.anyAlt || a.anyAlt
		}
	}
	for _, a := range args {
		an, err := p.build(a, depth+1)
		if err != nil {
			return nil, err
		}
		add(an)
	}
	if len(leaves) > 0 {
		c := leaves[0]
		if len(leaves) > 1 {
			c = &valueCheck{op: checkOr, args: leaves}
		}
		n.leafAlt = &schemaNode{kind: nodeLeaf, val: ev, check: c, desc: c.describe()}
	}
	if n.anyAlt {
		return &schemaNode{kind: nodeAny, val: ev, desc: "any value"}, nil
	}
	if len(n.structAlts) == 0 && len(n.listAlts) == 0 && n.leafAlt != nil {
		return n.leafAlt, nil
	}
	var descs []string
	if n.leafAlt != nil {
		descs = append(descs, n.leafAlt.desc)
	}
	if len(n.listAlts) > 0 {
		descs = append(descs, "a list")
	}
	if len(n.structAlts) > 0 {
		descs = append(descs, "a mapping")
	}
	n.desc = strings.Join(descs, " or ")
	return n, nil
}

func (p *schemaPlan) buildStruct(ev cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeStruct, val: ev, desc: "a mapping", unknown: SeverityError, fields: map[string]*schemaField{}}
	for _, a := range ev.Attributes(cue.DeclAttr) {
		if a.Name() != "gpulint" {
			continue
		}
		for i := 0; i < a.NumArgs(); i++ {
			k, val := a.Arg(i)
			switch k {
			case "unknown":
				n.unknown = val
			case "note":
				n.note = val
			case "auto":
				n.auto = val
			case "check":
				n.delegate = val == "cue"
			default:
				return nil, fmt.Errorf("%v: unknown @gpulint declaration %q", ev.Pos(), k)
			}
		}
	}
	it, err := ev.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		return nil, fmt.Errorf("%v: %w", ev.Pos(), err)
	}
	for it.Next() {
		sel := it.Selector()
		if sel.ConstraintType() == cue.PatternConstraint {
			label := p.buildCheck(sel.Pattern())
			if label.needsCUE() {
				return nil, fmt.Errorf("%v: unsupported pattern label %v", ev.Pos(), sel.Pattern())
			}
			f := &schemaField{name: fmt.Sprint(sel.Pattern()), val: it.Value(), depth: depth + 1}
			n.patterns = append(n.patterns, schemaPattern{label: label, field: f})
			n.names = label.stringLiterals(n.names)
			continue
		}
		if !sel.IsString() {
			continue
		}
		fv := it.Value()
		f := &schemaField{name: sel.Unquoted(), required: sel.ConstraintType() == cue.RequiredConstraint, val: fv, depth: depth + 1}
		if fv.IsConcrete() && fv.IncompleteKind()&(cue.StructKind|cue.ListKind) == 0 {
			if lit, ok := literalOf(fv); ok {
				f.lit = &valueCheck{op: checkLit, lit: lit}
			}
		}
		n.fields[f.name] = f
		n.names = append(n.names, f.name)
		if f.required {
			n.required = append(n.required, f.name)
		}
		if f.lit != nil {
			n.literals = append(n.literals, f)
		}
	}
	slices.Sort(n.names)
	n.names = slices.Compact(n.names)
	slices.Sort(n.required)
	// A key that matches no field and no pattern is allowed only when the
	// struct is open (has "..."); probe with a key nothing declares.
	const probe = "\x00gpulint-probe"
	n.open = ev.Allows(cue.Str(probe)) && n.patternsFor(probe) == nil
	return n, nil
}

// load reads a field's node and attributes from CUE, once. It takes the
// file lock; callers must not hold it.
func (p *schemaPlan) load(f *schemaField) error {
	f.once.Do(func() {
		p.file.mu.Lock()
		defer p.file.mu.Unlock()
		defer func() {
			if r := recover(); r != nil {
				f.err = fmt.Errorf("schema %s: field %s: %v", p.name, f.name, r)
			}
		}()
		if f.err = f.parseAttr(f.val); f.err != nil {
			return
		}
		f.node, f.err = p.build(f.val, f.depth)
	})
	if f.err != nil {
		return f.err
	}
	return nil
}

func (f *schemaField) parseAttr(v cue.Value) error {
	a := v.Attribute("gpulint")
	if a.Err() != nil {
		return nil // no attribute
	}
	for i := 0; i < a.NumArgs(); i++ {
		k, val := a.Arg(i)
		switch k {
		case "severity":
			f.severity = val
		case "want":
			f.want = val
		case "msg":
			f.msg = val
		case "deprecated":
			f.deprecated = val
		case "removed":
			f.removed = val
		case "when":
			f.when = val
		default:
			return fmt.Errorf("%v: unknown @gpulint field attribute %q", v.Pos(), k)
		}
	}
	return nil
}

func (p *schemaPlan) buildList(ev cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeList, val: ev, desc: "a list"}
	for i := 0; ; i++ {
		e := ev.LookupPath(cue.MakePath(cue.Index(i)))
		if !e.Exists() {
			break
		}
		en, err := p.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.prefix = append(n.prefix, en)
	}
	if e := ev.LookupPath(cue.MakePath(cue.AnyIndex)); e.Exists() {
		en, err := p.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.elem = en
	}
	return n, nil
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
