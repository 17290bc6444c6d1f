package source

import (
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
)

// setEdits computes the edits that make path hold v in document d.
func (f *File) setEdits(d *Document, path []any, v any) ([]finding.Edit, error) {
	if d.Root == nil {
		return f.fillEmptyDoc(d, path, v)
	}
	steps, err := walk(d.Root, path)
	if err != nil {
		return nil, err
	}
	matched := len(steps) - 1
	last := steps[matched]
	if matched == len(path) {
		return f.replace(d, last, v)
	}
	nested, err := nestValue(path[matched+1:], v)
	if err != nil {
		return nil, err
	}
	n := last.node
	switch k := path[matched].(type) {
	case string:
		switch {
		case n.Kind == MapNode && (n.Flow || f.Format == FormatJSON):
			return f.flowInsert(n, k, nested)
		case n.Kind == MapNode:
			return f.blockInsert(d, n, k, nested)
		case isNull(n):
			return f.replace(d, last, map[string]any{k: nested})
		}
	case int:
		switch {
		case n.Kind == SeqNode && k == len(n.Items) && (n.Flow || f.Format == FormatJSON):
			return f.flowInsert(n, "", nested)
		case n.Kind == SeqNode && k == len(n.Items):
			return f.blockAppend(d, n, nested)
		case n.Kind == SeqNode:
			return nil, fmt.Errorf("index %d is past the end of a sequence of %d items", k, len(n.Items))
		case isNull(n) && k == 0:
			return f.replace(d, last, []any{nested})
		}
	}
	return nil, fmt.Errorf("cannot follow %s into %s", describeElem(path[matched]), describeKind(n))
}

// fillEmptyDoc writes a value into a document with no content.
func (f *File) fillEmptyDoc(d *Document, path []any, v any) ([]finding.Edit, error) {
	nested, err := nestValue(path, v)
	if err != nil {
		return nil, err
	}
	var text string
	if isCollection(nested) {
		text = f.blockValue(d, nested, 0)
	} else if text, err = yamlScalar(nested, Plain, false); err != nil {
		return nil, err
	}
	at := d.Start.Offset
	nl := f.newline(at)
	if at > 0 && f.Data[at-1] != '\n' {
		text = nl + text // after "---"
	}
	if at == len(f.Data) || f.Data[at] != '\n' && f.Data[at] != '\r' {
		text += nl
	}
	return []finding.Edit{{Start: at, End: at, NewText: text}}, nil
}

// replace writes v in place of the node at s.
func (f *File) replace(d *Document, s step, v any) ([]finding.Edit, error) {
	n := s.node
	start, end := n.Start.Offset, n.End.Offset
	if f.Format == FormatJSON {
		text, err := f.jsonValue(v, f.indentAt(start), f.jsonMultiline(s))
		if err != nil {
			return nil, err
		}
		return []finding.Edit{{Start: start, End: end, NewText: text}}, nil
	}
	flow := s.parent != nil && s.parent.Flow
	if flow || n.Flow {
		return f.replaceFlowYAML(s, v, flow)
	}
	if !isCollection(v) {
		text, err := yamlScalar(v, scalarStyle(n), false)
		if err != nil {
			return nil, err
		}
		if n.Kind == ScalarNode {
			return []finding.Edit{f.scalarEdit(n, text)}, nil
		}
		// A block collection becomes a scalar: write it after the key.
		if s.parent != nil && s.parent.Kind == MapNode {
			colon, err := f.colonEnd(s.parent.Entries[s.at].Key)
			if err != nil {
				return nil, err
			}
			return []finding.Edit{{Start: colon, End: end, NewText: " " + text}}, nil
		}
		return []finding.Edit{{Start: start, End: end, NewText: text}}, nil
	}
	if n.Kind != ScalarNode && !n.Flow {
		// Block collection replaced by a block collection at its column.
		return []finding.Edit{{Start: start, End: end, NewText: f.blockValue(d, v, n.Start.Col-1)}}, nil
	}
	if s.parent == nil || s.parent.Kind == SeqNode {
		// Root or "- item": the block starts where the scalar was.
		return []finding.Edit{{Start: start, End: end, NewText: f.blockValue(d, v, n.Start.Col-1)}}, nil
	}
	// "key: scalar" becomes "key:" and a nested block.
	key := s.parent.Entries[s.at].Key
	colon, err := f.colonEnd(key)
	if err != nil {
		return nil, err
	}
	indent := key.Start.Col - 1 + f.yamlUnit(d)
	if _, isList := v.([]any); isList && f.yamlIndentless(d) {
		indent = key.Start.Col - 1
	}
	nl := f.newline(end)
	block := nl + strings.Repeat(" ", indent) + f.blockValue(d, v, indent)
	if rest := f.restOfLine(end); f.isCommentStart(rest) {
		// Keep the comment on the key's line.
		eol := f.lineEnd(end)
		return []finding.Edit{{Start: colon, End: end}, {Start: eol, End: eol, NewText: block}}, nil
	}
	return []finding.Edit{{Start: colon, End: end, NewText: block}}, nil
}

// scalarStyle returns n's style, or Plain for collections.
func scalarStyle(n *Node) ScalarStyle {
	if n.Kind == ScalarNode {
		return n.Style
	}
	return Plain
}

// replaceFlowYAML replaces a node inside (or as) a YAML flow collection.
func (f *File) replaceFlowYAML(s step, v any, flow bool) ([]finding.Edit, error) {
	n := s.node
	var text string
	var err error
	if isCollection(v) {
		text, err = yamlFlowValue(v, n.Kind == ScalarNode && n.Style == DoubleQuoted || n.Kind != ScalarNode && flowQuoted(n))
	} else {
		text, err = yamlScalar(v, scalarStyle(n), flow)
	}
	if err != nil {
		return nil, err
	}
	if n.Kind == ScalarNode {
		return []finding.Edit{f.scalarEdit(n, text)}, nil
	}
	return []finding.Edit{{Start: n.Start.Offset, End: n.End.Offset, NewText: text}}, nil
}

// scalarEdit replaces a YAML scalar's text with text, keeping its anchor
// (a tag is dropped: the new text carries its own type).
func (f *File) scalarEdit(n *Node, text string) finding.Edit {
	start, end := n.Start.Offset, n.End.Offset
	var anchors []string
	for i := start; ; {
		j := skipBlank(f.Data[:end], i)
		if j >= end || (f.Data[j] != '&' && f.Data[j] != '!') {
			break
		}
		k := propEnd(f.Data[:end], j)
		if f.Data[j] == '&' {
			anchors = append(anchors, string(f.Data[j:k]))
		}
		i = k
	}
	if len(anchors) > 0 {
		text = strings.Join(anchors, " ") + " " + text
	}
	if start == end {
		text = f.emptyValuePrefix(start) + text
	}
	return finding.Edit{Start: start, End: end, NewText: text}
}

// emptyValuePrefix returns what must precede a value written where an
// empty scalar sits: a space after "key:" or "-", or ": " after a flow key
// that has no colon.
func (f *File) emptyValuePrefix(at int) string {
	i := at
	for i > 0 && isSpaceTab(f.Data[i-1]) {
		i--
	}
	if i > 0 && strings.IndexByte(":-?", f.Data[i-1]) >= 0 {
		if i < at {
			return ""
		}
		return " "
	}
	return ": "
}

// colonEnd returns the offset after the ':' that follows a block key.
func (f *File) colonEnd(key *Node) (int, error) {
	i := key.End.Offset
	for i < len(f.Data) && isSpaceTab(f.Data[i]) {
		i++
	}
	if i >= len(f.Data) || f.Data[i] != ':' {
		return 0, fmt.Errorf("cannot find the ':' after key %q", key.Text)
	}
	return i + 1, nil
}
