// Package regobin stores OPA modules in a compact binary form and reads
// them back. gpulint uses it to ship its built-in policies already
// compiled: parsing and compiling about 100 KB of Rego costs tens of
// milliseconds at every start, decoding the compiled modules well under
// one.
//
// The form covers the nodes gpulint's policies compile to: terms of every
// scalar, collection, comprehension and call kind; expressions holding a
// term, a call, a some declaration or an every loop; with modifiers; rules
// with else chains. Source text, comments and annotations are left out:
// evaluation needs none of them. Locations (file, row, column) are kept
// where evaluation reports errors: packages, rules, rule heads and their
// values, expressions and with modifiers; the terms inside an expression
// go without.
// Encoding a node outside that set fails with an error naming it, so a
// caller can fall back to parsing the source.
package regobin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/open-policy-agent/opa/v1/ast"
)

// magic opens every encoded module; the digit is the form's version.
const magic = "regobin1"

// Value tags.
const (
	tNull byte = iota + 1
	tTrue
	tFalse
	tNumber
	tString
	tVar
	tRef
	tArray
	tObject
	tSet
	tArrayCompr
	tObjectCompr
	tSetCompr
	tCall
)

// Expression term tags.
const (
	eTerm byte = iota + 1
	eCall
	eSome
	eEvery
)

// Flags on expressions and rules.
const (
	fNegated = 1 << iota
	fGenerated
	fDefault
	fAssign
)

// ErrUnsupported reports a node the form does not cover.
var ErrUnsupported = errors.New("regobin: unsupported node")

// EncodeModule writes mod in the binary form.
func EncodeModule(mod *ast.Module) ([]byte, error) {
	e := &encoder{strs: map[string]uint64{}}
	e.module(mod)
	if e.err != nil {
		return nil, e.err
	}
	// The string table goes first so the decoder can resolve references as
	// it reads.
	out := make([]byte, 0, len(e.buf)+e.strBytes+len(e.strList)*2+16)
	out = append(out, magic...)
	out = binary.AppendUvarint(out, uint64(len(e.strList)))
	for _, s := range e.strList {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return append(out, e.buf...), nil
}

type encoder struct {
	buf      []byte
	strs     map[string]uint64
	strList  []string
	strBytes int
	err      error
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
	}
}

func (e *encoder) byte1(b byte)  { e.buf = append(e.buf, b) }
func (e *encoder) uint(n uint64) { e.buf = binary.AppendUvarint(e.buf, n) }
func (e *encoder) int(n int)     { e.buf = binary.AppendVarint(e.buf, int64(n)) }
func (e *encoder) bool(b bool) {
	if b {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
}
func (e *encoder) count(n int)     { e.uint(uint64(n)) }
func (e *encoder) string(s string) { e.uint(e.intern(s)) }

func (e *encoder) intern(s string) uint64 {
	if i, ok := e.strs[s]; ok {
		return i
	}
	i := uint64(len(e.strList))
	e.strs[s] = i
	e.strList = append(e.strList, s)
	e.strBytes += len(s)
	return i
}

func (e *encoder) module(m *ast.Module) {
	if m.Package == nil {
		e.fail("module without a package")
		return
	}
	e.ref(m.Package.Path)
	e.location(m.Package.Location)
	e.count(len(m.Imports))
	for _, imp := range m.Imports {
		e.term(imp.Path)
		e.string(string(imp.Alias))
		e.location(imp.Location)
	}
	e.count(len(m.Rules))
	for _, r := range m.Rules {
		e.rule(r)
	}
}

func (e *encoder) rule(r *ast.Rule) {
	var flags byte
	if r.Default {
		flags |= fDefault
	}
	if r.Head.Assign {
		flags |= fAssign
	}
	e.byte1(flags)
	h := r.Head
	e.string(string(h.Name))
	e.ref(h.Reference)
	e.terms(h.Args)
	e.optLocatedTerm(h.Key)
	e.optLocatedTerm(h.Value)
	e.location(h.Location)
	e.body(r.Body)
	e.location(r.Location)
	e.bool(r.Else != nil)
	if r.Else != nil {
		e.rule(r.Else)
	}
}

func (e *encoder) body(b ast.Body) {
	e.count(len(b))
	for _, x := range b {
		e.expr(x)
	}
}

func (e *encoder) expr(x *ast.Expr) {
	var flags byte
	if x.Negated {
		flags |= fNegated
	}
	if x.Generated {
		flags |= fGenerated
	}
	e.byte1(flags)
	e.int(x.Index)
	e.location(x.Location)
	switch t := x.Terms.(type) {
	case *ast.Term:
		e.byte1(eTerm)
		e.term(t)
	case []*ast.Term:
		e.byte1(eCall)
		e.terms(t)
	case *ast.SomeDecl:
		e.byte1(eSome)
		e.terms(t.Symbols)
		e.location(t.Location)
	case *ast.Every:
		e.byte1(eEvery)
		e.optTerm(t.Key)
		e.optTerm(t.Value)
		e.term(t.Domain)
		e.body(t.Body)
		e.location(t.Location)
	default:
		e.fail("expression of type %T", x.Terms)
	}
	e.count(len(x.With))
	for _, w := range x.With {
		e.term(w.Target)
		e.term(w.Value)
		e.location(w.Location)
	}
}

func (e *encoder) location(l *ast.Location) {
	if l == nil {
		e.byte1(0)
		return
	}
	e.byte1(1)
	e.string(l.File)
	e.int(l.Row)
	e.int(l.Col)
}

func (e *encoder) optTerm(t *ast.Term) {
	e.bool(t != nil)
	if t != nil {
		e.term(t)
	}
}

func (e *encoder) optLocatedTerm(t *ast.Term) {
	e.bool(t != nil)
	if t != nil {
		e.locatedTerm(t)
	}
}

func (e *encoder) terms(ts []*ast.Term) {
	e.count(len(ts))
	for _, t := range ts {
		e.term(t)
	}
}

func (e *encoder) ref(r ast.Ref) { e.terms(r) }

// term writes a term without its location: evaluation reports errors at
// the expression or rule, whose locations are kept.
func (e *encoder) term(t *ast.Term) {
	if t == nil {
		e.fail("nil term")
		return
	}
	e.value(t)
}

// locatedTerm writes a term with its location (rule heads: a conflict
// between rules names the values' locations).
func (e *encoder) locatedTerm(t *ast.Term) {
	e.location(t.Location)
	e.value(t)
}

func (e *encoder) value(t *ast.Term) {
	switch v := t.Value.(type) {
	case ast.Null:
		e.byte1(tNull)
	case ast.Boolean:
		if v {
			e.byte1(tTrue)
		} else {
			e.byte1(tFalse)
		}
	case ast.Number:
		e.byte1(tNumber)
		e.string(string(v))
	case ast.String:
		e.byte1(tString)
		e.string(string(v))
	case ast.Var:
		e.byte1(tVar)
		e.string(string(v))
	case ast.Ref:
		e.byte1(tRef)
		e.ref(v)
	case *ast.Array:
		e.byte1(tArray)
		e.count(v.Len())
		v.Foreach(e.term)
	case ast.Object:
		e.byte1(tObject)
		e.count(v.Len())
		v.Foreach(func(k, x *ast.Term) { e.term(k); e.term(x) })
	case ast.Set:
		e.byte1(tSet)
		e.count(v.Len())
		v.Foreach(e.term)
	case *ast.ArrayComprehension:
		e.byte1(tArrayCompr)
		e.term(v.Term)
		e.body(v.Body)
	case *ast.ObjectComprehension:
		e.byte1(tObjectCompr)
		e.term(v.Key)
		e.term(v.Value)
		e.body(v.Body)
	case *ast.SetComprehension:
		e.byte1(tSetCompr)
		e.term(v.Term)
		e.body(v.Body)
	case ast.Call:
		e.byte1(tCall)
		e.terms(v)
	default:
		e.fail("term of type %T", t.Value)
	}
}

// DecodeModule reads a module written by EncodeModule. The module and its
// rules are linked as the parser links them, and it is marked Rego v1.
func DecodeModule(data []byte) (mod *ast.Module, err error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, errors.New("regobin: not an encoded module")
	}
	d := &decoder{data: data, pos: len(magic)}
	// The string table is copied once; every string is a slice of it.
	n := d.count()
	d.strs = make([]string, 0, min(n, len(data)))
	start := d.pos
	for i := 0; i < n && d.err == nil; i++ {
		d.take(d.count())
	}
	if d.err == nil {
		table := string(data[start:d.pos])
		d.pos = start
		for i := 0; i < n; i++ {
			l := d.count()
			off := d.pos - start
			d.take(l)
			d.strs = append(d.strs, table[off:off+l])
		}
	}
	mod = d.module()
	if d.err == nil && d.pos != len(d.data) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	mod.SetRegoVersion(ast.RegoV1)
	return mod, nil
}

// maxDepth bounds nesting so a damaged input cannot exhaust the stack.
const maxDepth = 1000

// slab is how many nodes of a kind the decoder allocates at once.
const slab = 256

type decoder struct {
	data  []byte
	pos   int
	strs  []string
	depth int
	err   error

	// Slabs the decoder hands nodes out of.
	termSlab []ast.Term
	exprSlab []ast.Expr
	locSlab  []ast.Location
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("regobin: corrupt module at byte %d: %s", d.pos, what)
	}
}

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= len(d.data) {
		d.fail("unexpected end")
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.data)-d.pos {
		d.fail("length out of range")
		return nil
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.pos:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data[d.pos:])
	if n <= 0 || v > math.MaxInt32 || v < math.MinInt32 {
		d.fail("bad varint")
		return 0
	}
	d.pos += n
	return int(v)
}

// count reads a length; no count can exceed the bytes left, since every
// element takes at least one byte.
func (d *decoder) count() int {
	v := d.uint()
	if v > uint64(len(d.data)-d.pos) {
		d.fail("count out of range")
		return 0
	}
	return int(v)
}

func (d *decoder) bool() bool { return d.byte1() != 0 }

func (d *decoder) string() string {
	i := d.uint()
	if i >= uint64(len(d.strs)) {
		d.fail("string index out of range")
		return ""
	}
	return d.strs[i]
}

func (d *decoder) enter() bool {
	d.depth++
	if d.depth > maxDepth {
		d.fail("nesting too deep")
		return false
	}
	return d.err == nil
}

func (d *decoder) leave() { d.depth-- }

func (d *decoder) module() *ast.Module {
	m := &ast.Module{Package: &ast.Package{}}
	m.Package.Path = d.ref()
	m.Package.Location = d.location()
	if n := d.count(); n > 0 {
		m.Imports = make([]*ast.Import, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			imp := &ast.Import{Path: d.term()}
			imp.Alias = ast.Var(d.string())
			imp.Location = d.location()
			m.Imports = append(m.Imports, imp)
		}
	}
	n := d.count()
	m.Rules = make([]*ast.Rule, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		m.Rules = append(m.Rules, d.rule(m))
	}
	return m
}

func (d *decoder) rule(m *ast.Module) *ast.Rule {
	if !d.enter() {
		return nil
	}
	defer d.leave()
	flags := d.byte1()
	r := &ast.Rule{Module: m, Default: flags&fDefault != 0}
	h := &ast.Head{Assign: flags&fAssign != 0}
	h.Name = ast.Var(d.string())
	h.Reference = d.ref()
	h.Args = d.terms()
	h.Key = d.optLocatedTerm()
	h.Value = d.optLocatedTerm()
	h.Location = d.location()
	r.Head = h
	r.Body = d.body()
	r.Location = d.location()
	if d.bool() {
		r.Else = d.rule(m)
	}
	return r
}

func (d *decoder) body() ast.Body {
	n := d.count()
	b := make(ast.Body, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		b = append(b, d.expr())
	}
	return b
}

func (d *decoder) expr() *ast.Expr {
	if !d.enter() {
		return nil
	}
	defer d.leave()
	flags := d.byte1()
	x := d.newExpr()
	x.Negated, x.Generated = flags&fNegated != 0, flags&fGenerated != 0
	x.Index = d.int()
	x.Location = d.location()
	switch tag := d.byte1(); tag {
	case eTerm:
		x.Terms = d.term()
	case eCall:
		x.Terms = d.terms()
	case eSome:
		s := &ast.SomeDecl{Symbols: d.terms()}
		s.Location = d.location()
		x.Terms = s
	case eEvery:
		ev := &ast.Every{Key: d.optTerm(), Value: d.optTerm()}
		ev.Domain = d.term()
		ev.Body = d.body()
		ev.Location = d.location()
		x.Terms = ev
	default:
		d.fail(fmt.Sprintf("expression tag %d", tag))
	}
	if n := d.count(); n > 0 {
		x.With = make([]*ast.With, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			w := &ast.With{Target: d.term()}
			w.Value = d.term()
			w.Location = d.location()
			x.With = append(x.With, w)
		}
	}
	return x
}

func (d *decoder) location() *ast.Location {
	if !d.bool() {
		return nil
	}
	if len(d.locSlab) == 0 {
		d.locSlab = make([]ast.Location, slab)
	}
	l := &d.locSlab[0]
	d.locSlab = d.locSlab[1:]
	l.File = d.string()
	l.Row = d.int()
	l.Col = d.int()
	return l
}

// newTerm hands out terms from a slab: one allocation per slab instead of
// one per term.
func (d *decoder) newTerm() *ast.Term {
	if len(d.termSlab) == 0 {
		d.termSlab = make([]ast.Term, slab)
	}
	t := &d.termSlab[0]
	d.termSlab = d.termSlab[1:]
	return t
}

func (d *decoder) newExpr() *ast.Expr {
	if len(d.exprSlab) == 0 {
		d.exprSlab = make([]ast.Expr, slab/4)
	}
	x := &d.exprSlab[0]
	d.exprSlab = d.exprSlab[1:]
	return x
}

func (d *decoder) optTerm() *ast.Term {
	if !d.bool() {
		return nil
	}
	return d.term()
}

func (d *decoder) optLocatedTerm() *ast.Term {
	if !d.bool() {
		return nil
	}
	loc := d.location()
	t := d.term()
	t.Location = loc
	return t
}

func (d *decoder) terms() []*ast.Term {
	n := d.count()
	if n == 0 {
		return nil
	}
	ts := make([]*ast.Term, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		ts = append(ts, d.term())
	}
	return ts
}

func (d *decoder) ref() ast.Ref { return ast.Ref(d.terms()) }

func (d *decoder) term() *ast.Term {
	if !d.enter() {
		return ast.NullTerm()
	}
	defer d.leave()
	t := d.newTerm()
	switch tag := d.byte1(); tag {
	case tNull:
		t.Value = ast.Null{}
	case tTrue:
		t.Value = ast.Boolean(true)
	case tFalse:
		t.Value = ast.Boolean(false)
	case tNumber:
		t.Value = ast.Number(d.string())
	case tString:
		t.Value = ast.String(d.string())
	case tVar:
		t.Value = ast.Var(d.string())
	case tRef:
		t.Value = d.ref()
	case tArray:
		t.Value = ast.NewArray(d.terms()...)
	case tObject:
		n := d.count()
		pairs := make([][2]*ast.Term, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.term()
			pairs = append(pairs, [2]*ast.Term{k, d.term()})
		}
		t.Value = ast.NewObject(pairs...)
	case tSet:
		t.Value = ast.NewSet(d.terms()...)
	case tArrayCompr:
		c := &ast.ArrayComprehension{Term: d.term()}
		c.Body = d.body()
		t.Value = c
	case tObjectCompr:
		c := &ast.ObjectComprehension{Key: d.term()}
		c.Value = d.term()
		c.Body = d.body()
		t.Value = c
	case tSetCompr:
		c := &ast.SetComprehension{Term: d.term()}
		c.Body = d.body()
		t.Value = c
	case tCall:
		t.Value = ast.Call(d.terms())
	default:
		d.fail(fmt.Sprintf("term tag %d", tag))
		t.Value = ast.Null{}
	}
	return t
}
