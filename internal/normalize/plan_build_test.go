package normalize

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"

	"github.com/gpulint/gpulint/schemas"
)

// The builder: it compiles a schema with CUE and derives the tree of Go
// checks the validator walks. It lives in the tests so that the gpulint
// binary carries the checks (plans_gen.go, rendered from these trees by
// TestGeneratedPlans) but not CUE, whose package initialisation and
// per-run schema compile cost every run about 1 ms and 3-4 ms of CPU
// (docs/performance.md). A constraint the checks cannot express is an
// error here, never a silent pass at run time.

// schemaSpec names the file and definition that hold a schema.
type schemaSpec struct {
	file, def string
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

// cueBuild is one schema compiled and turned into checks, with the CUE
// value behind each node for the equivalence tests.
type cueBuild struct {
	name    string
	ctx     *cue.Context
	def     cue.Value // the schema's root definition
	root    *schemaNode
	vals    map[*schemaNode]cue.Value
	regexps map[string]*regexp.Regexp
}

// buildFromCUE compiles schema's file from fsys and derives its checks.
func buildFromCUE(fsys fs.FS, schema string) (b *cueBuild, err error) {
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
	b = &cueBuild{name: schema, ctx: ctx, def: def, vals: map[*schemaNode]cue.Value{}, regexps: map[string]*regexp.Regexp{}}
	defer func() {
		if r := recover(); r != nil { // the CUE API panics on some misuse; report it as a broken schema
			b, err = nil, fmt.Errorf("schema %s: %v", schema, r)
		}
	}()
	if b.root, err = b.build(def, 0); err != nil {
		return nil, fmt.Errorf("schema %s: %w", schema, err)
	}
	return b, nil
}

var (
	builtOnce sync.Once
	built     map[string]*cueBuild
	builtErr  error
)

// builtSchemas builds every schema in schemas.FS once per test binary.
func builtSchemas(t testing.TB) map[string]*cueBuild {
	t.Helper()
	builtOnce.Do(func() {
		built = map[string]*cueBuild{}
		for _, s := range schemaNames() {
			b, err := buildFromCUE(schemas.FS, s)
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

func (b *cueBuild) node(n *schemaNode, v cue.Value) *schemaNode {
	b.vals[n] = v
	return n
}

// build derives the node for a schema value.
func (b *cueBuild) build(v cue.Value, depth int) (*schemaNode, error) {
	if depth > maxDepth {
		return b.node(&schemaNode{kind: nodeAny, desc: "any value"}, v), nil
	}
	ev := v.Eval()
	if ev.Err() != nil {
		return b.node(&schemaNode{kind: nodeNever, desc: "nothing"}, ev), nil
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
		return b.node(&schemaNode{kind: nodeAny, desc: "any value"}, ev), nil
	case cue.StructKind:
		return b.buildStruct(v, ev, depth)
	case cue.ListKind:
		return b.buildList(ev, depth)
	case cue.BottomKind:
		return b.node(&schemaNode{kind: nodeNever, desc: "nothing"}, ev), nil
	}
	c, err := b.check(ev)
	if err != nil {
		return nil, err
	}
	return b.node(&schemaNode{kind: nodeLeaf, check: c, desc: c.describe()}, ev), nil
}

// maxDepth guards against runaway recursion in a (mistakenly) recursive
// schema; deeper positions accept anything.
const maxDepth = 40

func (b *cueBuild) buildUnion(ev cue.Value, args []cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeUnion}
	var leaves []*valueCheck
	add := func(a *schemaNode) {
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
		an, err := b.build(a, depth+1)
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
		n.leafAlt = b.node(&schemaNode{kind: nodeLeaf, check: c, desc: c.describe()}, ev)
	}
	if n.anyAlt {
		return b.node(&schemaNode{kind: nodeAny, desc: "any value"}, ev), nil
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
	return b.node(n, ev), nil
}

// buildStruct derives a mapping's node from its evaluated value ev; v is
// the value as written, unevaluated, on which cross-field constraints are
// probed.
func (b *cueBuild) buildStruct(v, ev cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeStruct, desc: "a mapping", unknown: SeverityError, fields: map[string]*schemaField{}}
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
			case "exclusive":
				n.exclusive = &exclusiveKeys{keys: strings.Fields(val)}
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
			n.patterns = append(n.patterns, schemaPattern{label: label, field: f})
			n.names = label.stringLiterals(n.names)
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
	if n.exclusive != nil {
		if err := b.exclusive(v, n); err != nil {
			return nil, fmt.Errorf("%v: %w", ev.Pos(), err)
		}
	}
	return b.node(n, v), nil
}

// field builds a declared field (or a pattern's value) with its
// attributes.
func (b *cueBuild) field(name string, required bool, v cue.Value, depth int) (*schemaField, error) {
	f := &schemaField{name: name, required: required}
	if err := f.parseAttr(v); err != nil {
		return nil, err
	}
	var err error
	if f.node, err = b.build(v, depth); err != nil {
		return nil, err
	}
	return f, nil
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

// exclusive reads from CUE what happens when the keys of an
// @gpulint(exclusive=...) group are set together: the struct's own
// constraints (a comprehension) must reject every two of them with one
// error, and accept each alone. Where CUE reports the conflict and its
// message become the check's.
func (b *cueBuild) exclusive(v cue.Value, n *schemaNode) error {
	x := n.exclusive
	if len(x.keys) < 2 {
		return fmt.Errorf("exclusive=%q names fewer than two keys", strings.Join(x.keys, " "))
	}
	probe := func(keys ...string) []Violation {
		doc := map[string]any{}
		for _, k := range keys {
			doc[k] = map[string]any{}
		}
		err := v.Unify(b.ctx.Encode(doc)).Validate(cue.Concrete(true))
		var vs []Violation
		for _, e := range errors.Errors(err) {
			vs = append(vs, cueViolation(e, doc))
		}
		return deepestViolations(vs)
	}
	for _, k := range x.keys {
		if n.fields[k] == nil {
			return fmt.Errorf("exclusive=%q: no field %q", strings.Join(x.keys, " "), k)
		}
		if vs := probe(k); len(vs) > 0 {
			return fmt.Errorf("exclusive: %s alone (as {}) is rejected: %v", k, vs)
		}
	}
	for i, k := range x.keys {
		for _, l := range x.keys[i+1:] {
			vs := probe(k, l)
			if len(vs) != 1 || len(vs[0].Path) != 1 {
				return fmt.Errorf("exclusive: %s and %s together should give one error on one of them; CUE gives %v", k, l, vs)
			}
			at, msg := fmt.Sprint(vs[0].Path[0]), vs[0].Message
			if x.at == "" {
				x.at, x.msg = at, msg
			} else if x.at != at || x.msg != msg {
				return fmt.Errorf("exclusive: the pairs of %q disagree on where and how CUE reports the conflict", strings.Join(x.keys, " "))
			}
		}
	}
	return nil
}

func (b *cueBuild) buildList(ev cue.Value, depth int) (*schemaNode, error) {
	n := &schemaNode{kind: nodeList, desc: "a list"}
	for i := 0; ; i++ {
		e := ev.LookupPath(cue.MakePath(cue.Index(i)))
		if !e.Exists() {
			break
		}
		en, err := b.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.prefix = append(n.prefix, en)
	}
	if e := ev.LookupPath(cue.MakePath(cue.AnyIndex)); e.Exists() {
		en, err := b.build(e, depth+1)
		if err != nil {
			return nil, err
		}
		n.elem = en
	}
	return b.node(n, ev), nil
}

// check derives a scalar check from a CUE constraint, or fails for one
// the checks cannot express.
func (b *cueBuild) check(v cue.Value) (*valueCheck, error) {
	if c := b.checkFrom(v, 0); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("%v: constraint %v has no Go check: rewrite it with the operators the validator supports (validate_check.go), or add one", v.Pos(), v)
}

// checkFrom returns nil for a constraint it cannot translate.
func (b *cueBuild) checkFrom(v cue.Value, depth int) *valueCheck {
	if depth > maxDepth {
		return nil
	}
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		if v.IsConcrete() {
			if lit, ok := literalOf(v); ok {
				return &valueCheck{op: checkLit, lit: lit}
			}
			return nil
		}
		k := v.IncompleteKind()
		if k == cue.TopKind {
			return &valueCheck{op: checkTop}
		}
		kinds, ok := kindsOf(k)
		if !ok {
			return nil
		}
		return &valueCheck{op: checkKind, kinds: kinds}
	case cue.AndOp, cue.OrOp:
		c := &valueCheck{op: checkAnd}
		if op == cue.OrOp {
			c.op = checkOr
		}
		for _, a := range args {
			ac := b.checkFrom(a, depth+1)
			if ac == nil {
				return nil
			}
			c.args = append(c.args, ac)
		}
		if set := stringSet(c); op == cue.OrOp && len(set) >= 8 {
			return &valueCheck{op: checkSet, set: set}
		}
		return c
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if len(args) == 1 {
			if f, err := args[0].Float64(); err == nil {
				bound := map[cue.Op]boundOp{cue.LessThanOp: boundLT, cue.LessThanEqualOp: boundLE,
					cue.GreaterThanOp: boundGT, cue.GreaterThanEqualOp: boundGE}[op]
				return &valueCheck{op: checkBound, bound: bound, num: f}
			}
		}
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		if len(args) == 1 {
			if s, err := args[0].String(); err == nil {
				if re, err := b.regexp(s); err == nil {
					c := &valueCheck{op: checkRegex, re: re}
					if op == cue.NotRegexMatchOp {
						c.op = checkNotRegex
					}
					return c
				}
			}
		}
	case cue.NotEqualOp:
		if len(args) == 1 && args[0].IsConcrete() {
			if lit, ok := literalOf(args[0]); ok {
				return &valueCheck{op: checkNotEqual, lit: lit}
			}
		}
	default:
		// strings.MaxRunes(n) and strings.MinRunes(n).
		if op == cue.CallOp && len(args) == 2 {
			if n, err := args[1].Int64(); err == nil {
				switch fmt.Sprint(args[0]) {
				case "strings.MaxRunes":
					return &valueCheck{op: checkMaxRunes, num: float64(n)}
				case "strings.MinRunes":
					return &valueCheck{op: checkMinRunes, num: float64(n)}
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
func kindsOf(k cue.Kind) (valueKind, bool) {
	var out valueKind
	for _, m := range []struct {
		c cue.Kind
		v valueKind
	}{{cue.NullKind, kindNull}, {cue.BoolKind, kindBool}, {cue.IntKind, kindInt}, {cue.FloatKind, kindFloat}, {cue.StringKind, kindString}} {
		if k&m.c != 0 {
			out |= m.v
			k &^= m.c
		}
	}
	return out, k == 0 && out != 0
}

// stringSet returns the literals of a disjunction made only of string
// literals, nil otherwise.
func stringSet(c *valueCheck) map[string]bool {
	set := make(map[string]bool, len(c.args))
	for _, a := range c.args {
		s, ok := a.lit.(string)
		if a.op != checkLit || !ok {
			return nil
		}
		set[s] = true
	}
	return set
}

// regexp compiles a pattern once per schema, so checks share it.
func (b *cueBuild) regexp(s string) (*regexp.Regexp, error) {
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

// cueValid asks CUE whether doc satisfies v.
func (b *cueBuild) cueValid(v cue.Value, doc any) error {
	return v.Unify(b.ctx.Encode(canonicalDoc(doc))).Validate(cue.Concrete(true))
}

// deepestViolations drops CUE's echoes of an error further up the tree: a
// failing field inside a disjunction ("T | null") also fails each
// alternative, reported at the parent as "empty disjunction" and
// "conflicting values". Only violations with no deeper one below them are
// kept.
func deepestViolations(vs []Violation) []Violation {
	var out []Violation
	for i, v := range vs {
		deeper := false
		for j, w := range vs {
			if i != j && len(w.Path) > len(v.Path) && comparePaths(w.Path[:len(v.Path)], v.Path) == 0 {
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
func cueViolation(e errors.Error, doc any) Violation {
	segs := e.Path()
	var path []any
	for i := 0; i <= len(segs); i++ {
		if p, ok := resolvePath(doc, segs[i:]); ok {
			path = p
			break
		}
	}
	format, args := e.Msg()
	return Violation{Path: path, Message: fmt.Sprintf(format, args...), Severity: SeverityError}
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
	return scalarOf(doc)
}

// allNodes returns every node of a tree, parents first.
func allNodes(root *schemaNode) []*schemaNode {
	var out []*schemaNode
	seen := map[*schemaNode]bool{}
	var visit func(n *schemaNode)
	visit = func(n *schemaNode) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for _, name := range slices.Sorted(mapsKeys(n.fields)) {
			visit(n.fields[name].node)
		}
		for _, pt := range n.patterns {
			visit(pt.field.node)
		}
		visit(n.elem)
		for _, e := range n.prefix {
			visit(e)
		}
		for _, a := range n.structAlts {
			visit(a)
		}
		for _, a := range n.listAlts {
			visit(a)
		}
		visit(n.leafAlt)
	}
	visit(root)
	return out
}
