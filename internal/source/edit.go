package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/gpulint/gpulint/internal/finding"
)

// OpKind says what an Op does.
type OpKind uint8

// Op kinds.
const (
	// Set writes Value at Path, replacing what is there or inserting the
	// key (and any missing parent maps). An int index equal to a
	// sequence's length appends to it.
	Set OpKind = iota + 1
	// Remove deletes the map key or sequence item at Path. Removing
	// something that is not there does nothing.
	Remove
)

func (k OpKind) String() string {
	switch k {
	case Set:
		return "set"
	case Remove:
		return "remove"
	}
	return "unknown"
}

// Op is a structural change to a document: a path of string keys and int
// indices from the document's root, and for Set the new value. Values may
// be nil, bool, string, any integer or float type, json.Number, or
// map[string]any / []any of those ([]string and map[string]string too).
// A float64 with an integral value is written as an integer (64, not 64.0):
// configs want integers for sizes and counts, and Rego numbers arrive as
// float64.
type Op struct {
	Kind  OpKind
	Path  []any
	Value any
}

// errEditCheck marks an edit whose result failed re-parsing or did not
// hold the requested value: a bug in this package, never in the input.
var errEditCheck = errors.New("edit check failed")

// Edits turns ops on document doc into byte edits on f.Data, without
// re-serializing the file: each op locates its node and splices text
// written in the file's own style (indentation, quotes, line ends,
// spacing). Ops apply in order, each seeing the result of the previous
// ones. Outside the changed lines the result is byte-identical to f.Data.
//
// The edits are sorted, do not overlap and name f.Path. Before returning,
// Edits applies them, re-parses the result and checks that every op's path
// holds its value; it returns an error when that fails or when an op cannot
// be carried out (a path through a scalar, an index past the end, a path
// through an alias or merge key).
func (f *File) Edits(doc int, ops []Op) ([]finding.Edit, error) {
	if doc < 0 || doc >= len(f.Docs) {
		return nil, fmt.Errorf("edit %s: no document %d (the file has %d)", f.Path, doc, len(f.Docs))
	}
	if err := f.editable(); err != nil {
		return nil, err
	}
	b := &editBuf{orig: f.Data, cur: f.Data}
	cur := f
	for _, op := range ops {
		where := fmt.Sprintf("%s %s", op.Kind, finding.PathString(op.Path))
		path, err := normPath(op.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		want, err := normValue(op.Value)
		if err != nil && op.Kind == Set {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		// Remove drops one duplicate key per round.
		for round := 0; ; round++ {
			items := removedItemParentLen(cur.Docs[doc].Root, op.Kind, path)
			es, err := cur.opEdits(cur.Docs[doc], op.Kind, path, want)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if len(es) > 0 {
				b.apply(es)
				if cur, err = f.reparse(b.cur); err != nil {
					if _, origErr := f.reparse(f.Data); origErr != nil {
						return nil, fmt.Errorf("edit %s: the file does not parse: %w", f.Path, origErr)
					}
					return nil, fmt.Errorf("%s: result does not parse: %w: %w", where, errEditCheck, err)
				}
				if len(cur.Docs) != len(f.Docs) {
					return nil, fmt.Errorf("%s: result has %d documents, not %d: %w", where, len(cur.Docs), len(f.Docs), errEditCheck)
				}
			}
			var done bool
			if items >= 0 {
				// Removing item i shifts the next one into its place:
				// check the sequence got shorter instead.
				done = seqLen(cur.Docs[doc].Root, path[:len(path)-1]) == items-1
			} else if done, err = holds(cur.Docs[doc].Root, op.Kind, path, want); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if done {
				break
			}
			if op.Kind != Remove || items >= 0 || len(es) == 0 || round > len(f.Data) {
				return nil, fmt.Errorf("%s: result does not hold the change: %w", where, errEditCheck)
			}
		}
	}
	out := b.result(f.Path)
	if err := f.CheckEdits(out); err != nil {
		return nil, err
	}
	if got := applyTo(f.Data, out); !bytes.Equal(got, b.cur) {
		return nil, fmt.Errorf("edit %s: composed edits disagree with the result: %w", f.Path, errEditCheck)
	}
	return out, nil
}

// reparse parses edited bytes with f's syntax.
func (f *File) reparse(data []byte) (*File, error) {
	lim := DefaultLimits()
	lim.MaxBytes = int64(len(data)) + 1
	if f.Format == FormatJSON {
		return ParseJSON(f.Path, data, lim)
	}
	return ParseYAML(f.Path, data, lim)
}

// holds reports whether the document rooted at root has carried out the op.
func holds(root *Node, kind OpKind, path []any, want any) (bool, error) {
	var node *Node
	matched := 0
	if root != nil {
		node, _, matched = root.Lookup(path)
	}
	if kind == Remove {
		return root == nil || matched < len(path), nil
	}
	if root == nil || matched < len(path) {
		return false, nil
	}
	got, err := node.ToValue(0)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(numbersToFloat(got), numbersToFloat(want)), nil
}

// removedItemParentLen returns the length of the sequence an op removes an
// existing item from, or -1 when the op is not such a removal.
func removedItemParentLen(root *Node, kind OpKind, path []any) int {
	if kind != Remove || root == nil || len(path) == 0 {
		return -1
	}
	i, ok := path[len(path)-1].(int)
	if !ok {
		return -1
	}
	n := seqLen(root, path[:len(path)-1])
	if i >= n {
		return -1
	}
	return n
}

// seqLen returns the length of the sequence at path, or -1.
func seqLen(root *Node, path []any) int {
	if root == nil {
		return -1
	}
	n, _, matched := root.Lookup(path)
	if matched < len(path) || n.Kind != SeqNode {
		return -1
	}
	return len(n.Items)
}

// numbersToFloat makes int64 and float64 comparable.
func numbersToFloat(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64() // normValue checked the syntax
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = numbersToFloat(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = numbersToFloat(e)
		}
		return s
	}
	return v
}

// opEdits computes one op's edits on f in f's coordinates.
func (f *File) opEdits(d *Document, kind OpKind, path []any, v any) ([]finding.Edit, error) {
	if f.Format == FormatYAML {
		for _, p := range path {
			if p == "<<" {
				return nil, errThroughAlias
			}
		}
		if kind == Set && longKey(path, v) {
			return nil, errLongKey
		}
	}
	switch kind {
	case Set:
		return f.setEdits(d, path, v)
	case Remove:
		return f.removeEdits(d, path)
	}
	return nil, fmt.Errorf("unknown op kind %d", kind)
}

// editBuf accumulates edits in the coordinates of the original bytes while
// ops apply one after another to the current bytes.
type editBuf struct {
	orig, cur []byte
	edits     []finding.Edit // sorted, in orig coordinates
}

// apply applies edits given in cur coordinates (non-overlapping).
func (b *editBuf) apply(es []finding.Edit) {
	es = append([]finding.Edit(nil), es...)
	sort.Slice(es, func(i, j int) bool { return es[i].Start > es[j].Start })
	for _, e := range es {
		b.compose(e)
	}
}

// compose records one edit given in cur coordinates and applies it to cur.
// Recorded edits it overlaps or touches are merged with it.
func (b *editBuf) compose(e finding.Edit) {
	delta, before := 0, 0
	k0, k1 := -1, -1
	for k, x := range b.edits {
		cs := x.Start + delta
		ce := cs + len(x.NewText)
		if ce < e.Start {
			delta += len(x.NewText) - (x.End - x.Start)
			continue
		}
		if cs > e.End {
			break
		}
		if k0 < 0 {
			k0, before = k, delta
		}
		k1 = k
		delta += len(x.NewText) - (x.End - x.Start)
	}
	var merged finding.Edit
	if k0 < 0 {
		merged = finding.Edit{Start: e.Start - delta, End: e.End - delta, NewText: e.NewText}
		k0, k1 = sort.Search(len(b.edits), func(i int) bool { return b.edits[i].Start >= merged.Start }), -1
		k1 = k0 - 1
	} else {
		after := delta
		cs := b.edits[k0].Start + before
		ce := b.edits[k1].End + after
		curStart, curEnd := min(e.Start, cs), max(e.End, ce)
		merged = finding.Edit{
			Start:   min(e.Start-before, b.edits[k0].Start),
			End:     max(e.End-after, b.edits[k1].End),
			NewText: string(b.cur[curStart:e.Start]) + e.NewText + string(b.cur[e.End:curEnd]),
		}
	}
	b.edits = append(b.edits[:k0], append([]finding.Edit{merged}, b.edits[k1+1:]...)...)
	next := make([]byte, 0, len(b.cur)+len(e.NewText)-(e.End-e.Start))
	next = append(next, b.cur[:e.Start]...)
	next = append(next, e.NewText...)
	b.cur = append(next, b.cur[e.End:]...)
}

// result returns the recorded edits that change something, for file.
func (b *editBuf) result(file string) []finding.Edit {
	var out []finding.Edit
	for _, e := range b.edits {
		if string(b.orig[e.Start:e.End]) == e.NewText {
			continue
		}
		e = trimLines(b.orig, e)
		e.File = file
		out = append(out, e)
	}
	return out
}

// trimLines drops the whole lines an edit leaves unchanged at its start
// and end, so that a replaced block shows only the lines that differ.
func trimLines(orig []byte, e finding.Edit) finding.Edit {
	old, nw := string(orig[e.Start:e.End]), e.NewText
	startsLine := e.Start == 0 || orig[e.Start-1] == '\n'
	lineStart := func(s string, i int) bool {
		if i == 0 {
			return startsLine
		}
		return s[i-1] == '\n'
	}
	p := 0
	for p < len(old) && p < len(nw) && old[p] == nw[p] {
		p++
	}
	for p > 0 && old[p-1] != '\n' {
		p--
	}
	k := 0
	for k < len(old)-p && k < len(nw)-p && old[len(old)-1-k] == nw[len(nw)-1-k] {
		k++
	}
	for k > 0 && !(lineStart(old, len(old)-k) && lineStart(nw, len(nw)-k)) {
		k--
	}
	return finding.Edit{Start: e.Start + p, End: e.End - k, NewText: nw[p : len(nw)-k]}
}

// applyTo applies sorted, non-overlapping edits to data.
func applyTo(data []byte, es []finding.Edit) []byte {
	var out []byte
	last := 0
	for _, e := range es {
		out = append(out, data[last:e.Start]...)
		out = append(out, e.NewText...)
		last = e.End
	}
	return append(out, data[last:]...)
}
