package source

import (
	"errors"
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
		if n.Kind == MapNode && hasMergeKey(n) {
			// Merged entries sit in Entries beside the map's own, so the
			// map's text ends somewhere its entry list does not say.
			return nil, errMergeMap
		}
		if n.Kind == MapNode && hasComplexKey(n) {
			return nil, errComplexKey
		}
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
	es, err := f.replaceText(d, s, v)
	for i, e := range es {
		// Keep the new text from running into what follows it ("]#c").
		if e.End < len(f.Data) && e.NewText != "" && strings.IndexByte(" \t\r\n,]}:", f.Data[e.End]) < 0 {
			es[i].NewText += " "
		}
	}
	return es, err
}

func (f *File) replaceText(d *Document, s step, v any) ([]finding.Edit, error) {
	n := s.node
	start, end := n.Start.Offset, n.End.Offset
	if f.Format == FormatYAML && n.Kind != ScalarNode && (f.Data[start] == '&' || f.Data[start] == '!') {
		return nil, errors.New("cannot replace a collection that has an anchor or tag")
	}
	if f.Format == FormatYAML && n.Flow {
		if _, _, err := f.brackets(n); err != nil {
			return nil, err
		}
	}
	if f.Format == FormatJSON {
		text, err := f.jsonValue(v, f.indentAt(start), f.jsonMultiline(s))
		if err != nil {
			return nil, err
		}
		return []finding.Edit{{Start: start, End: end, NewText: text}}, nil
	}
	flow := s.parent != nil && s.parent.Flow
	// A block collection cannot start after "--- " on a line.
	if flow || n.Flow || s.parent == nil && !f.startsLine(start) && isCollection(v) {
		return f.replaceFlowYAML(s, v, flow)
	}
	if n.Kind == ScalarNode && isCollection(v) && hasAnchor(f.Data, start, end) {
		// Aliases of it would lose their anchor (a scalar's anchor stays
		// when a scalar replaces it).
		return nil, errors.New("cannot replace a value that has an anchor with a list or map; change it by hand")
	}
	if !isCollection(v) {
		text, err := yamlScalar(v, scalarStyle(n), false)
		if err != nil {
			return nil, err
		}
		if lit, ok := f.literalBlock(d, s, v); ok {
			text = lit
		}
		if n.Kind == ScalarNode {
			e := f.yamlScalarEdit(s, text)
			if key := mapKey(s); key != nil && n.Start.Line > key.Start.Line && f.col0(n.Start) <= f.col0(key.Start) && e.Start == start &&
				!strings.HasPrefix(text, "|") && !strings.HasPrefix(text, ">") {
				// Only a block scalar may sit at its key's column on
				// the lines below it ("k:\n|"): indent what replaces it.
				e.Start = f.lineStart(start)
				e.NewText = strings.Repeat(" ", f.childIndent(d, key, v)) + e.NewText
			}
			return []finding.Edit{e}, nil
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
		if s.parent != nil && s.parent.Kind == MapNode && f.startsLine(start) {
			// Under a key: indent as a new block would be (an
			// indentless sequence sits at the key's own column).
			indent := f.childIndent(d, s.parent.Entries[s.at].Key, v)
			ls := f.lineStart(start)
			return []finding.Edit{{Start: ls, End: end, NewText: strings.Repeat(" ", indent) + f.blockValue(d, v, indent)}}, nil
		}
		// Block collection replaced by a block collection at its column.
		return []finding.Edit{{Start: start, End: end, NewText: f.blockValue(d, v, f.col0(n.Start))}}, nil
	}
	if s.parent == nil || s.parent.Kind == SeqNode {
		// Root or "- item": the block starts where the scalar was, after
		// a blank that an empty item ("-" alone) lacks.
		prefix := ""
		if start == end {
			prefix = f.emptyValuePrefix(start)
			if rest := f.restOfLine(end); strings.TrimRight(rest, " \t") == "" {
				end += len(rest) // trailing blanks would trail the block
			}
		}
		indent := f.col0(n.Start) + len(prefix)
		return []finding.Edit{{Start: start, End: end, NewText: prefix + f.blockValue(d, v, indent)}}, nil
	}
	// "key: scalar" becomes "key:" and a nested block.
	key := s.parent.Entries[s.at].Key
	colon, err := f.colonEnd(key)
	if err != nil {
		return nil, err
	}
	indent := f.childIndent(d, key, v)
	nl := f.newline(end)
	block := nl + strings.Repeat(" ", indent) + f.blockValue(d, v, indent)
	if rest := f.restOfLine(end); f.isCommentStart(rest) {
		// Keep the comment on the key's line.
		eol := f.lineEnd(end)
		return []finding.Edit{{Start: colon, End: end}, {Start: eol, End: eol, NewText: block}}, nil
	}
	return []finding.Edit{{Start: colon, End: end, NewText: block}}, nil
}

// literalBlock writes a multi-line string as a literal block scalar when
// it replaces a block scalar ("|" or ">"), at that scalar's content
// indentation. ok is false when the value does not suit one (a single line,
// leading spaces, more than one final line break, unprintable characters).
func (f *File) literalBlock(d *Document, s step, v any) (string, bool) {
	n := s.node
	str, isStr := v.(string)
	if n.Kind != ScalarNode || (n.Style != Literal && n.Style != Folded) || !isStr ||
		!strings.Contains(strings.TrimSuffix(str, "\n"), "\n") || strings.HasSuffix(str, "\n\n") ||
		strings.HasPrefix(str, " ") || !singleQuotable(strings.ReplaceAll(str, "\n", "")) || hasProperties(f.Data, n.Start.Offset) {
		return "", false
	}
	indent := -1
	for ls := f.nextLineStart(n.Start.Offset); ls < n.End.Offset; ls = f.nextLineStart(ls) {
		if rest := strings.TrimLeft(f.restOfLine(ls), " "); rest != "" {
			indent = len(f.restOfLine(ls)) - len(rest)
			break
		}
	}
	if indent < 0 {
		if s.parent == nil || s.parent.Kind != MapNode {
			return "", false
		}
		indent = f.childIndent(d, s.parent.Entries[s.at].Key, str)
	}
	header := "|"
	if !strings.HasSuffix(str, "\n") {
		header = "|-"
	}
	nl := f.newline(n.Start.Offset)
	lines := strings.Split(strings.TrimSuffix(str, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat(" ", indent) + l
		}
	}
	return header + nl + strings.Join(lines, nl), true
}

// childIndent returns the column of a block value v written under key.
func (f *File) childIndent(d *Document, key *Node, v any) int {
	st := f.yamlStyle(d)
	if _, isList := v.([]any); isList && st.indentless {
		return f.col0(key.Start)
	}
	return f.col0(key.Start) + st.unit
}

// mapKey returns the key of the block map entry s sits at, or nil.
func mapKey(s step) *Node {
	if s.parent == nil || s.parent.Kind != MapNode || s.parent.Flow {
		return nil
	}
	return s.parent.Entries[s.at].Key
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
		return []finding.Edit{f.yamlScalarEdit(s, text)}, nil
	}
	return []finding.Edit{{Start: n.Start.Offset, End: n.End.Offset, NewText: text}}, nil
}

// yamlScalarEdit replaces the YAML scalar at s with text.
func (f *File) yamlScalarEdit(s step, text string) finding.Edit {
	n := s.node
	if n.Start.Offset == n.End.Offset && s.parent != nil && s.parent.Kind == MapNode {
		return f.emptyValueEdit(s.parent.Entries[s.at].Key, text)
	}
	return f.scalarEdit(n, text)
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

// hasAnchor reports whether the properties at the start of the YAML node
// text data[start:end] include an anchor.
func hasAnchor(data []byte, start, end int) bool {
	for i := start; ; {
		j := skipBlank(data[:end], i)
		if j >= end || (data[j] != '&' && data[j] != '!') {
			return false
		}
		if data[j] == '&' {
			return true
		}
		i = propEnd(data[:end], j)
	}
}

// emptyValueEdit writes text as the value of a map entry whose value is
// empty: after the key's ':' or, for a flow key without one ("{a, b}"),
// as ": text" right after the key.
func (f *File) emptyValueEdit(key *Node, text string) finding.Edit {
	if colon, err := f.colonEnd(key); err == nil {
		return finding.Edit{Start: colon, End: colon, NewText: " " + text}
	}
	sep := ": "
	if f.Format == FormatYAML && f.bareProps(key) {
		sep = " : " // "!:" would be read as one tag
	}
	return finding.Edit{Start: key.End.Offset, End: key.End.Offset, NewText: sep + text}
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

// errMergeMap refuses to insert into a map holding a YAML merge key.
var errMergeMap = errors.New("the map holds a YAML merge key (<<); add the key by hand")

// hasMergeKey reports whether map n has a << merge entry.
func hasMergeKey(n *Node) bool {
	for _, e := range n.Entries {
		if isMergeKey(e.Key) {
			return true
		}
	}
	return false
}

// errComplexKey refuses to insert into a map with a map or list as a key.
var errComplexKey = errors.New("the map has a collection as a key; add the key by hand")

// hasComplexKey reports whether a map node has a non-scalar key.
func hasComplexKey(n *Node) bool {
	for _, e := range n.Entries {
		if e.Key != nil && e.Key.Kind != ScalarNode {
			return true
		}
	}
	return false
}
