package source

import (
	"errors"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/value"
)

// removeEdits computes the edits that delete path from document d.
func (f *File) removeEdits(d *Document, path []any) ([]finding.Edit, error) {
	if len(path) == 0 {
		return nil, errors.New("cannot remove a document's root")
	}
	if d.Root == nil {
		return nil, nil
	}
	steps, err := walk(d.Root, path)
	if err != nil {
		return nil, err
	}
	if len(steps)-1 < len(path) {
		return nil, nil // not there: nothing to do
	}
	s := steps[len(steps)-1]
	ps := steps[len(steps)-2]
	c := s.parent
	if f.Format == FormatJSON || c.Flow {
		return f.flowRemove(c, s.at)
	}
	spans, err := members(c)
	if err != nil {
		return nil, err
	}
	i := ownIndex(spans, s.at)
	if i < 0 {
		return nil, errThroughAlias
	}
	if len(spans) == 1 {
		// The collection would be empty: write {} or [] in its place.
		var empty any = map[string]any{}
		if c.Kind == SeqNode {
			empty = []any{}
		}
		return f.replace(d, ps, empty)
	}
	if c.Kind == MapNode {
		if err := f.checkBlockMap(c, spans); err != nil {
			return nil, err
		}
	}
	start := spans[i].start
	var nextStart int
	if c.Kind == SeqNode {
		if start, err = f.dashBefore(c.Items[s.at]); err != nil {
			return nil, err
		}
		if i+1 < len(spans) {
			if nextStart, err = f.dashBefore(c.Items[spans[i+1].at]); err != nil {
				return nil, err
			}
		}
	} else if i+1 < len(spans) {
		nextStart = spans[i+1].start
	}
	if f.startsLine(start) {
		return []finding.Edit{f.removeLines(start, spans[i].end)}, nil
	}
	if i+1 < len(spans) {
		// First entry of a compact "- key: value" item, or of "- - item".
		return []finding.Edit{{Start: start, End: nextStart}}, nil
	}
	return nil, errors.New("cannot remove an item that shares its line with its parent")
}

// errLayout is returned for block maps written in ways the edits do not
// handle: explicit "? key" entries and keys spanning lines.
var errLayout = errors.New("cannot edit this map: it uses explicit '?' keys or multi-line keys")

// checkBlockMap fails with errLayout unless every key of block map m sits
// on one line and is followed by its ':'.
func (f *File) checkBlockMap(m *Node, spans []span) error {
	for _, s := range spans {
		k := m.Entries[s.at].Key
		if k.Start.Line != k.End.Line {
			return errLayout
		}
		if _, err := f.colonEnd(k); err != nil {
			return errLayout
		}
	}
	return nil
}

// dashBefore returns the offset of the '-' that introduces a block
// sequence item.
func (f *File) dashBefore(it *Node) (int, error) {
	i := it.Start.Offset - 1
	for i >= 0 && (isSpaceTab(f.Data[i]) || f.Data[i] == '\n' || f.Data[i] == '\r') {
		i--
	}
	if i < 0 || f.Data[i] != '-' {
		return 0, errors.New("cannot find the '-' of a sequence item")
	}
	return i, nil
}

// blockStyle is how a YAML document lays out nested blocks.
type blockStyle struct {
	unit       int    // indentation step
	indentless bool   // "key:\n- item": sequence dashes at the key's column
	nl         string // line ending
}

// yamlStyle looks at d for the indentation step (the first nested block
// map, default 2) and whether sequences under keys are indentless.
func (f *File) yamlStyle(d *Document) blockStyle {
	st := blockStyle{nl: f.newline(d.Start.Offset)}
	var unit, seq int // 0: not seen yet
	budget := 10000
	var visit func(n *Node)
	visit = func(n *Node) {
		if budget <= 0 || n.Flow {
			return
		}
		budget--
		for _, it := range n.Items {
			if within(it, n) {
				visit(it)
			}
		}
		for _, e := range n.Entries {
			v := e.Value
			if !within(v, n) {
				continue
			}
			if !v.Flow && v.Start.Line > e.Key.Start.Line {
				switch {
				case v.Kind == MapNode && unit == 0:
					unit = v.Start.Col - e.Key.Start.Col
				case v.Kind == SeqNode && seq == 0:
					seq = 1
					if v.Start.Col == e.Key.Start.Col {
						seq = 2
					}
				}
			}
			visit(v)
		}
	}
	if d.Root != nil {
		visit(d.Root)
	}
	st.unit = 2
	if unit > 0 {
		st.unit = unit
	}
	st.indentless = seq == 2
	return st
}

// blockValue writes v as block YAML whose first line starts at column
// indent (the caller writes that line's indentation) and whose other lines
// are indented to fit. Scalars and empty collections are written inline.
func (f *File) blockValue(d *Document, v any, indent int) string {
	st := f.yamlStyle(d)
	return st.value(v, indent)
}

func (st blockStyle) value(v any, indent int) string {
	pad := st.nl + strings.Repeat(" ", indent)
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			parts := make([]string, 0, len(x))
			for _, k := range value.SortedKeys(x) {
				parts = append(parts, st.member(k, x[k], indent))
			}
			return strings.Join(parts, pad)
		}
	case []any:
		if len(x) > 0 {
			parts := make([]string, 0, len(x))
			for _, it := range x {
				parts = append(parts, "-"+st.item(it, indent+2))
			}
			return strings.Join(parts, pad)
		}
	}
	s, _ := yamlScalar(v, Plain, false) // v was normalized: no error
	return s
}

// member writes "key: value" for a block map at column indent.
func (st blockStyle) member(k string, v any, indent int) string {
	key := yamlKey(k, false) + ":"
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			ci := indent + st.unit
			return key + st.nl + strings.Repeat(" ", ci) + st.value(x, ci)
		}
	case []any:
		if len(x) > 0 {
			ci := indent + st.unit
			if st.indentless {
				ci = indent
			}
			return key + st.nl + strings.Repeat(" ", ci) + st.value(x, ci)
		}
	}
	return key + " " + st.value(v, indent)
}

// item writes what follows "-" for a block sequence item whose content
// starts at column indent.
func (st blockStyle) item(v any, indent int) string {
	return " " + st.value(v, indent)
}

// blockInsert adds key: v after the last entry of block map m, at the
// column of its keys.
func (f *File) blockInsert(d *Document, m *Node, key string, v any) ([]finding.Edit, error) {
	spans, err := members(m)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return nil, errThroughAlias // only merged entries: nowhere to write
	}
	if err := f.checkBlockMap(m, spans); err != nil {
		return nil, err
	}
	indent := f.col0(m.Entries[spans[0].at].Key.Start)
	st := f.yamlStyle(d)
	return []finding.Edit{f.insertLine(m.End.Offset, strings.Repeat(" ", indent)+st.member(key, v, indent))}, nil
}

// blockAppend adds "- v" after the last item of block sequence s.
func (f *File) blockAppend(d *Document, s *Node, v any) ([]finding.Edit, error) {
	if _, err := members(s); err != nil {
		return nil, err
	}
	dash := f.col0(s.Start)
	st := f.yamlStyle(d)
	return []finding.Edit{f.insertLine(s.End.Offset, strings.Repeat(" ", dash)+"-"+st.item(v, dash+2))}, nil
}

// insertLine inserts text as a new line after the line holding off.
func (f *File) insertLine(off int, text string) finding.Edit {
	at := f.nextLineStart(off)
	nl := f.newline(off)
	if at == len(f.Data) && !f.endsWithNewline() {
		return finding.Edit{Start: at, End: at, NewText: nl + text}
	}
	return finding.Edit{Start: at, End: at, NewText: text + nl}
}
