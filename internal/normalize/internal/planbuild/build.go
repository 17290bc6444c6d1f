// Package planbuild derives the validator's checks from the CUE schemas:
// it compiles a schema with CUE, turns it into the tree of Go checks
// (internal/plan) that internal/normalize walks, and renders the trees as
// Go source (plans_gen.go). It runs in the generator
// (internal/normalize/internal/genplans, via go generate) and in the tests
// that hold the checks to CUE's own unification, never in the gpulint
// binary: CUE's package initialisation and per-run schema compile would
// cost every run about 1 ms and 3-4 ms of CPU (docs/performance.md). A
// constraint the checks cannot express is an error here, never a silent
// pass at run time.
package planbuild

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
)

// schemaSpec names the file and definition that hold a schema.
type schemaSpec struct {
	file, def string
}

// Schemas lists the schemas FromCUE builds, in the order Render writes
// them (normalize's schemaNames; TestGeneratedPlans holds the two equal).
func Schemas() []string {
	return []string{"deepspeed", "accelerate", "vllm", "kubernetes", "mig-parted",
		"device-plugin", "workload", "gpulint-config", "gpu-catalog"}
}

// lookupSchema maps a schema name to its file and root definition.
func lookupSchema(name string) (schemaSpec, bool) {
	switch name {
	case "deepspeed":
		return schemaSpec{"deepspeed.cue", "#DeepSpeed"}, true
	case "accelerate":
		return schemaSpec{"accelerate.cue", "#Accelerate"}, true
	case "vllm":
		return schemaSpec{"vllm.cue", "#VLLM"}, true
	case "kubernetes":
		return schemaSpec{"kubernetes.cue", "#Manifest"}, true
	case "mig-parted":
		return schemaSpec{"mig.cue", "#MigParted"}, true
	case "device-plugin":
		return schemaSpec{"mig.cue", "#DevicePlugin"}, true
	case "workload":
		return schemaSpec{"workload.cue", "#Workload"}, true
	case "gpulint-config":
		return schemaSpec{"config.cue", "#Config"}, true
	case "gpu-catalog":
		return schemaSpec{"gpu.cue", "#Catalog"}, true
	}
	return schemaSpec{}, false
}

// Build is one schema compiled and turned into checks, with the CUE
// value behind each node for the equivalence tests.
type Build struct {
	Name    string
	Def     cue.Value // the schema's root definition
	Root    *plan.SchemaNode
	ctx     *cue.Context
	vals    map[*plan.SchemaNode]cue.Value
	regexps map[string]*regexp.Regexp
}

// Value returns the CUE value n was derived from.
func (b *Build) Value(n *plan.SchemaNode) cue.Value { return b.vals[n] }

// violation is a CUE error on a probe document, at a path in it.
type violation struct {
	Path    []any
	Message string
}

// FromCUE compiles schema's file from fsys and derives its checks.
func FromCUE(fsys fs.FS, schema string) (b *Build, err error) {
	spec, ok := lookupSchema(schema)
	if !ok {
		return nil, fmt.Errorf("unknown schema %q", schema)
	}
	src, err := fs.ReadFile(fsys, spec.file)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", spec.file, err)
	}
	ctx := cuecontext.New()
	file := ctx.CompileBytes(src, cue.Filename(spec.file))
	if err := file.Err(); err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", spec.file, err)
	}
	def := file.LookupPath(cue.ParsePath(spec.def))
	if !def.Exists() {
		return nil, fmt.Errorf("schema %s: definition %s not found", schema, spec.def)
	}
	b = &Build{Name: schema, ctx: ctx, Def: def, vals: map[*plan.SchemaNode]cue.Value{}, regexps: map[string]*regexp.Regexp{}}
	defer func() {
		if r := recover(); r != nil { // the CUE API panics on some misuse; report it as a broken schema
			b, err = nil, fmt.Errorf("schema %s: %v", schema, r)
		}
	}()
	if b.Root, err = b.build(def, 0); err != nil {
		return nil, fmt.Errorf("schema %s: %w", schema, err)
	}
	return b, nil
}

func (b *Build) node(n *plan.SchemaNode, v cue.Value) *plan.SchemaNode {
	b.vals[n] = v
	return n
}

// build derives the node for a schema value.
func (b *Build) build(v cue.Value, depth int) (*plan.SchemaNode, error) {
	if depth > maxDepth {
		return b.node(&plan.SchemaNode{Kind: plan.NodeAny, Desc: "any value"}, v), nil
	}
	ev := v.Eval()
	if ev.Err() != nil {
		return b.node(&plan.SchemaNode{Kind: plan.NodeNever, Desc: "nothing"}, ev), nil
	}
	if op, args := ev.Expr(); op == cue.OrOp && len(args) > 1 {
		// Prefer the alternatives as written (references, not evaluated
		// structs): a struct's cross-field constraints are probed on its
		// unevaluated value, for its comprehensions to see the document.
		if vop, vargs := v.Expr(); vop == cue.OrOp && len(vargs) > 1 {
			args = vargs
		}
		return b.buildUnion(ev, args, depth)
	}
	switch k := ev.IncompleteKind(); k {
	case cue.TopKind:
		return b.node(&plan.SchemaNode{Kind: plan.NodeAny, Desc: "any value"}, ev), nil
	case cue.StructKind:
		return b.buildStruct(v, ev, depth)
	case cue.ListKind:
		return b.buildList(ev, depth)
	case cue.BottomKind:
		return b.node(&plan.SchemaNode{Kind: plan.NodeNever, Desc: "nothing"}, ev), nil
	}
	c, err := b.check(ev)
	if err != nil {
		return nil, err
	}
	return b.node(&plan.SchemaNode{Kind: plan.NodeLeaf, Check: c, Desc: c.Describe()}, ev), nil
}

// maxDepth guards against runaway recursion in a (mistakenly) recursive
// schema; deeper positions accept anything.
const maxDepth = 40

func (b *Build) buildUnion(ev cue.Value, args []cue.Value, depth int) (*plan.SchemaNode, error) {
	n := &plan.SchemaNode{Kind: plan.NodeUnion}
	var leaves []*plan.ValueCheck
	add := func(a *plan.SchemaNode) {
		switch a.Kind {
		case plan.NodeStruct:
			n.StructAlts = append(n.StructAlts, a)
		case plan.NodeList:
			n.ListAlts = append(n.ListAlts, a)
		case plan.NodeLeaf:
			leaves = append(leaves, a.Check)
		case plan.NodeAny:
			n.AnyAlt = true
		case plan.NodeUnion:
			n.StructAlts = append(n.StructAlts, a.StructAlts...)
			n.ListAlts = append(n.ListAlts, a.ListAlts...)
			if a.LeafAlt != nil {
				leaves = append(leaves, a.LeafAlt.Check)
			}
			n.AnyAlt = n.AnyAlt || a.AnyAlt
		}
	}
	for _, a := range args {
		an, err := b.build(a, depth+1)
		if err != nil {
			return nil, err
		}
		add(an)
	}
	if len(leaves) > 0 {
		c := leaves[0]
		if len(leaves) > 1 {
			c = &plan.ValueCheck{Op: plan.CheckOr, Args: leaves}
		}
		n.LeafAlt = b.node(&plan.SchemaNode{Kind: plan.NodeLeaf, Check: c, Desc: c.Describe()}, ev)
	}
	if n.AnyAlt {
		return b.node(&plan.SchemaNode{Kind: plan.NodeAny, Desc: "any value"}, ev), nil
	}
	if len(n.StructAlts) == 0 && len(n.ListAlts) == 0 && n.LeafAlt != nil {
		return n.LeafAlt, nil
	}
	var descs []string
	if n.LeafAlt != nil {
		descs = append(descs, n.LeafAlt.Desc)
	}
	if len(n.ListAlts) > 0 {
		descs = append(descs, "a list")
	}
	if len(n.StructAlts) > 0 {
		descs = append(descs, "a mapping")
	}
	n.Desc = strings.Join(descs, " or ")
	return b.node(n, ev), nil
}

// buildStruct derives a mapping's node from its evaluated value ev; v is
// the value as written, unevaluated, on which cross-field constraints are
// probed.
func (b *Build) buildStruct(v, ev cue.Value, depth int) (*plan.SchemaNode, error) {
	n := &plan.SchemaNode{Kind: plan.NodeStruct, Desc: "a mapping", Unknown: plan.SeverityError, Fields: map[string]*plan.SchemaField{}}
	for _, a := range ev.Attributes(cue.DeclAttr) {
		if a.Name() != "gpulint" {
			continue
		}
		for i := 0; i < a.NumArgs(); i++ {
			k, val := a.Arg(i)
			switch k {
			case "unknown":
				n.Unknown = val
			case "note":
				n.Note = val
			case "auto":
				n.Auto = val
			case "exclusive":
				n.Exclusive = &plan.ExclusiveKeys{Keys: strings.Fields(val)}
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
			label, err := b.check(sel.Pattern())
			if err != nil {
				return nil, fmt.Errorf("%v: unsupported pattern label %v", ev.Pos(), sel.Pattern())
			}
			f, err := b.field(fmt.Sprint(sel.Pattern()), false, it.Value(), depth+1)
			if err != nil {
				return nil, err
			}
			n.Patterns = append(n.Patterns, plan.SchemaPattern{Label: label, Field: f})
			n.Names = label.StringLiterals(n.Names)
			continue
		}
		if !sel.IsString() {
			continue
		}
		fv := it.Value()
		f, err := b.field(sel.Unquoted(), sel.ConstraintType() == cue.RequiredConstraint, fv, depth+1)
		if err != nil {
			return nil, err
		}
		if fv.IsConcrete() && fv.IncompleteKind()&(cue.StructKind|cue.ListKind) == 0 {
			if lit, ok := literalOf(fv); ok {
				f.Lit = &plan.ValueCheck{Op: plan.CheckLit, Lit: lit}
			}
		}
		n.Fields[f.Name] = f
		n.Names = append(n.Names, f.Name)
		if f.Required {
			n.Required = append(n.Required, f.Name)
		}
		if f.Lit != nil {
			n.Literals = append(n.Literals, f)
		}
	}
	slices.Sort(n.Names)
	n.Names = slices.Compact(n.Names)
	slices.Sort(n.Required)
	// A key that matches no field and no pattern is allowed only when the
	// struct is open (has "..."); probe with a key nothing declares.
	const probe = "\x00gpulint-probe"
	n.Open = ev.Allows(cue.Str(probe)) && n.PatternsFor(probe) == nil
	if n.Exclusive != nil {
		if err := b.exclusive(v, n); err != nil {
			return nil, fmt.Errorf("%v: %w", ev.Pos(), err)
		}
	}
	return b.node(n, v), nil
}

// field builds a declared field (or a pattern's value) with its
// attributes.
func (b *Build) field(name string, required bool, v cue.Value, depth int) (*plan.SchemaField, error) {
	f := &plan.SchemaField{Name: name, Required: required}
	if err := parseAttr(f, v); err != nil {
		return nil, err
	}
	var err error
	if f.Node, err = b.build(v, depth); err != nil {
		return nil, err
	}
	return f, nil
}

// parseAttr reads a field's @gpulint attributes into f.
func parseAttr(f *plan.SchemaField, v cue.Value) error {
	a := v.Attribute("gpulint")
	if a.Err() != nil {
		return nil // no attribute
	}
	for i := 0; i < a.NumArgs(); i++ {
		k, val := a.Arg(i)
		switch k {
		case "severity":
			f.Severity = val
		case "want":
			f.Want = val
		case "msg":
			f.Msg = val
		case "deprecated":
			f.Deprecated = val
		case "removed":
			f.Removed = val
		case "when":
			f.When = val
		default:
			return fmt.Errorf("%v: unknown @gpulint field attribute %q", v.Pos(), k)
		}
	}
	return nil
}

// exclusive reads from CUE what happens when the keys of an
// @gpulint(exclusive=...) group are set together: the struct's own
// constraints (a comprehension) must reject every two of them with one
// error, and accept each alone. Where CUE reports the conflict and its
// message become the check's.
func (b *Build) exclusive(v cue.Value, n *plan.SchemaNode) error {
	x := n.Exclusive
	if len(x.Keys) < 2 {
		return fmt.Errorf("exclusive=%q names fewer than two keys", strings.Join(x.Keys, " "))
	}
	probe := func(keys ...string) []violation {
		doc := map[string]any{}
		for _, k := range keys {
			doc[k] = map[string]any{}
		}
		err := v.Unify(b.ctx.Encode(doc)).Validate(cue.Concrete(true))
		var vs []violation
		for _, e := range errors.Errors(err) {
			vs = append(vs, cueViolation(e, doc))
		}
		return deepestViolations(vs)
	}
	for _, k := range x.Keys {
		if n.Fields[k] == nil {
			return fmt.Errorf("exclusive=%q: no field %q", strings.Join(x.Keys, " "), k)
		}
		if vs := probe(k); len(vs) > 0 {
			return fmt.Errorf("exclusive: %s alone (as {}) is rejected: %v", k, vs)
		}
	}
	for i, k := range x.Keys {
		for _, l := range x.Keys[i+1:] {
			vs := probe(k, l)
			if len(vs) != 1 || len(vs[0].Path) != 1 {
				return fmt.Errorf("exclusive: %s and %s together should give one error on one of them; CUE gives %v", k, l, vs)
			}
			at, msg := fmt.Sprint(vs[0].Path[0]), vs[0].Message
			if x.At == "" {
				x.At, x.Msg = at, msg
			} else if x.At != at || x.Msg != msg {
				return fmt.Errorf("exclusive: the pairs of %q disagree on where and how CUE reports the conflict", strings.Join(x.Keys, " "))
			}
		}
	}
	return nil
}

func (b *Build) buildList(ev cue.Value, depth int) (*plan.SchemaNode, error) {
	n := &plan.SchemaNode{Kind: plan.NodeList, Desc: "a list"}
	for i := 0; ; i++ {
		e := ev.LookupPath(cue.MakePath(cue.Index(i)))
		if !e.Exists() {
			break
		}
		en, err := b.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.Prefix = append(n.Prefix, en)
	}
	if e := ev.LookupPath(cue.MakePath(cue.AnyIndex)); e.Exists() {
		en, err := b.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.Elem = en
	}
	return b.node(n, ev), nil
}

// check derives a scalar check from a CUE constraint, or fails for one
// the checks cannot express.
func (b *Build) check(v cue.Value) (*plan.ValueCheck, error) {
	if c := b.checkFrom(v, 0); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("%v: constraint %v has no Go check: rewrite it with the operators the validator supports (validate_check.go), or add one", v.Pos(), v)
}

// checkFrom returns nil for a constraint it cannot translate.
func (b *Build) checkFrom(v cue.Value, depth int) *plan.ValueCheck {
	if depth > maxDepth {
		return nil
	}
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		if v.IsConcrete() {
			if lit, ok := literalOf(v); ok {
				return &plan.ValueCheck{Op: plan.CheckLit, Lit: lit}
			}
			return nil
		}
		k := v.IncompleteKind()
		if k == cue.TopKind {
			return &plan.ValueCheck{Op: plan.CheckTop}
		}
		kinds, ok := kindsOf(k)
		if !ok {
			return nil
		}
		return &plan.ValueCheck{Op: plan.CheckKind, Kinds: kinds}
	case cue.AndOp, cue.OrOp:
		c := &plan.ValueCheck{Op: plan.CheckAnd}
		if op == cue.OrOp {
			c.Op = plan.CheckOr
		}
		for _, a := range args {
			ac := b.checkFrom(a, depth+1)
			if ac == nil {
				return nil
			}
			c.Args = append(c.Args, ac)
		}
		if set := stringSet(c); op == cue.OrOp && len(set) >= 8 {
			return &plan.ValueCheck{Op: plan.CheckSet, Set: set}
		}
		return c
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if len(args) == 1 {
			if f, err := args[0].Float64(); err == nil {
				bound := map[cue.Op]plan.BoundOp{cue.LessThanOp: plan.BoundLT, cue.LessThanEqualOp: plan.BoundLE,
					cue.GreaterThanOp: plan.BoundGT, cue.GreaterThanEqualOp: plan.BoundGE}[op]
				return &plan.ValueCheck{Op: plan.CheckBound, Bound: bound, Num: f}
			}
		}
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		if len(args) == 1 {
			if s, err := args[0].String(); err == nil {
				if re, err := b.regexp(s); err == nil {
					c := &plan.ValueCheck{Op: plan.CheckRegex, Re: re}
					if op == cue.NotRegexMatchOp {
						c.Op = plan.CheckNotRegex
					}
					return c
				}
			}
		}
	case cue.NotEqualOp:
		if len(args) == 1 && args[0].IsConcrete() {
			if lit, ok := literalOf(args[0]); ok {
				return &plan.ValueCheck{Op: plan.CheckNotEqual, Lit: lit}
			}
		}
	default:
		// strings.MaxRunes(n) and strings.MinRunes(n).
		if op == cue.CallOp && len(args) == 2 {
			if n, err := args[1].Int64(); err == nil {
				switch fmt.Sprint(args[0]) {
				case "strings.MaxRunes":
					return &plan.ValueCheck{Op: plan.CheckMaxRunes, Num: float64(n)}
				case "strings.MinRunes":
					return &plan.ValueCheck{Op: plan.CheckMinRunes, Num: float64(n)}
				}
			}
		}
		// A reference or another call: evaluate once and retry.
		if ev := v.Eval(); depth < 2 {
			if eop, _ := ev.Expr(); eop != op {
				return b.checkFrom(ev, depth+1)
			}
		}
	}
	return nil
}

// kindsOf maps CUE's scalar kinds to the validator's; ok is false for
// anything else.
func kindsOf(k cue.Kind) (plan.ValueKind, bool) {
	var out plan.ValueKind
	for _, m := range []struct {
		c cue.Kind
		v plan.ValueKind
	}{{cue.NullKind, plan.KindNull}, {cue.BoolKind, plan.KindBool}, {cue.IntKind, plan.KindInt}, {cue.FloatKind, plan.KindFloat}, {cue.StringKind, plan.KindString}} {
		if k&m.c != 0 {
			out |= m.v
			k &^= m.c
		}
	}
	return out, k == 0 && out != 0
}

// stringSet returns the literals of a disjunction made only of string
// literals, nil otherwise.
func stringSet(c *plan.ValueCheck) map[string]bool {
	set := make(map[string]bool, len(c.Args))
	for _, a := range c.Args {
		s, ok := a.Lit.(string)
		if a.Op != plan.CheckLit || !ok {
			return nil
		}
		set[s] = true
	}
	return set
}

// regexp compiles a pattern once per schema, so checks share it.
func (b *Build) regexp(s string) (*regexp.Regexp, error) {
	if re, ok := b.regexps[s]; ok {
		return re, nil
	}
	re, err := regexp.Compile(s)
	if err == nil {
		b.regexps[s] = re
	}
	return re, err
}

func literalOf(v cue.Value) (any, bool) {
	switch v.Kind() {
	case cue.StringKind:
		s, err := v.String()
		return s, err == nil
	case cue.IntKind:
		i, err := v.Int64()
		return i, err == nil
	case cue.FloatKind:
		f, err := v.Float64()
		return f, err == nil
	case cue.BoolKind:
		bv, err := v.Bool()
		return bv, err == nil
	case cue.NullKind:
		return nil, true
	}
	return nil, false
}

// CUEValid asks CUE whether doc satisfies v.
func (b *Build) CUEValid(v cue.Value, doc any) error {
	return v.Unify(b.ctx.Encode(canonicalDoc(doc))).Validate(cue.Concrete(true))
}

// deepestViolations drops CUE's echoes of an error further up the tree: a
// failing field inside a disjunction ("T | null") also fails each
// alternative, reported at the parent as "empty disjunction" and
// "conflicting values". Only violations with no deeper one below them are
// kept.
func deepestViolations(vs []violation) []violation {
	var out []violation
	for i, v := range vs {
		deeper := false
		for j, w := range vs {
			if i != j && len(w.Path) > len(v.Path) && plan.ComparePaths(w.Path[:len(v.Path)], v.Path) == 0 {
				deeper = true
				break
			}
		}
		if !deeper {
			out = append(out, v)
		}
	}
	return out
}

// cueViolation converts a CUE error on a sub-document into a violation
// with a path relative to that sub-document. CUE reports paths from the
// definition that declared the failing field, so the document path is the
// longest suffix of the error path that resolves in doc (the last element
// may be a missing key).
func cueViolation(e errors.Error, doc any) violation {
	segs := e.Path()
	var path []any
	for i := 0; i <= len(segs); i++ {
		if p, ok := resolvePath(doc, segs[i:]); ok {
			path = p
			break
		}
	}
	format, args := e.Msg()
	return violation{Path: path, Message: fmt.Sprintf(format, args...)}
}

// resolvePath follows CUE path segments through doc; every segment but the
// last must exist.
func resolvePath(doc any, segs []string) ([]any, bool) {
	path := make([]any, 0, len(segs))
	cur := doc
	for i, s := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case []any:
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n >= len(c) {
				return nil, false
			}
			path = append(path, n)
			cur = c[n]
		case map[string]any:
			if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
				s = u
			}
			v, ok := c[s]
			if !ok && !last {
				return nil, false
			}
			path = append(path, s)
			cur = v
		default:
			return nil, false
		}
	}
	return path, true
}

// canonicalDoc copies a document into the types CUE's encoder and
// encoding/json handle, with numbers normalised as the Go checks see them.
func canonicalDoc(doc any) any {
	switch x := doc.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = canonicalDoc(v)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[fmt.Sprint(k)] = canonicalDoc(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = canonicalDoc(v)
		}
		return out
	}
	return plan.ScalarOf(doc)
}
