package source

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/value"
)

// span is the text of one member of a collection: "key: value" of a map
// entry or a sequence item. at indexes Entries or Items.
type span struct {
	start, end, at int
}

// members returns the spans of c's own members (merged map entries left
// out), or errThroughAlias when one is an alias.
func members(c *Node) ([]span, error) {
	var out []span
	if c.Kind == MapNode {
		for i, e := range c.Entries {
			if !within(e.Key, c) {
				continue // merged from an anchored map
			}
			if !ownChild(c, i) {
				return nil, errThroughAlias
			}
			out = append(out, span{e.Key.Start.Offset, e.Value.End.Offset, i})
		}
		return out, nil
	}
	for i, it := range c.Items {
		if !ownChild(c, i) {
			return nil, errThroughAlias
		}
		out = append(out, span{it.Start.Offset, it.End.Offset, i})
	}
	return out, nil
}

// ownIndex returns the position of the member with entry/item index at.
func ownIndex(spans []span, at int) int {
	for i, s := range spans {
		if s.at == at {
			return i
		}
	}
	return -1
}

// brackets returns the offsets of a flow collection's brackets, or
// errLayout for a YAML "key: value" pair in a flow sequence, which has
// none.
func (f *File) brackets(c *Node) (open, close int, err error) {
	open = c.Start.Offset
	if f.Format == FormatYAML {
		open = flowOpen(f.Data, open)
	}
	close = c.End.Offset - 1
	if open >= len(f.Data) || close < 0 || strings.IndexByte("{[", f.Data[open]) < 0 || strings.IndexByte("}]", f.Data[close]) < 0 {
		return 0, 0, errLayout
	}
	return open, close, nil
}

func (f *File) line(off int) int { return f.PosAt(off).Line }

// flowInsert adds key: v to a JSON object or YAML flow map, or appends v to
// a JSON array or flow sequence when c is a sequence.
func (f *File) flowInsert(c *Node, key string, v any) ([]finding.Edit, error) {
	spans, err := members(c)
	if err != nil {
		return nil, err
	}
	open, closeAt, err := f.brackets(c)
	if err != nil {
		return nil, err
	}
	dq := f.Format == FormatYAML && flowQuoted(c)
	render := func(indent string, multi bool) (string, error) {
		var val string
		var err error
		if f.Format == FormatJSON {
			val, err = f.jsonValue(v, indent, multi)
		} else {
			val, err = yamlFlowValue(v, dq)
		}
		if err != nil || c.Kind != MapNode {
			return val, err
		}
		if f.Format == FormatJSON {
			return jsonQuote(key) + f.colonSep(c) + val, nil
		}
		k, sep := yamlFlowKey(key, dq), f.colonSep(c)
		if strings.HasSuffix(sep, ":") && !strings.HasPrefix(k, `"`) {
			// Only after a quoted (JSON-like) key may the value touch the
			// ':'; after a plain key, "k:v" is one plain scalar.
			sep += " "
		}
		return k + sep + val, nil
	}
	if len(spans) == 0 {
		if f.line(open) == f.line(closeAt) {
			m, err := render(f.indentAt(open), false)
			return []finding.Edit{{Start: open + 1, End: closeAt, NewText: m}}, err
		}
		indent := f.indentAt(closeAt) + f.jsonUnit()
		m, err := render(indent, true)
		at := open + 1
		if rest := f.restOfLine(at); strings.TrimSpace(rest) == "" || f.isCommentStart(rest) {
			// After a comment on the bracket's line, which would
			// otherwise trail the member, or end its value when it
			// touches it ("{##" made "A##").
			at = f.lineEnd(at)
		}
		return []finding.Edit{{Start: at, End: at, NewText: f.newline(open) + indent + m}}, err
	}
	last := spans[len(spans)-1]
	// A member that ends in a tag with no content ("!") must keep a blank
	// before the comma: yaml.v3 reads "!,new" as one tag.
	comma := ","
	if f.Format == FormatYAML && f.endsBare(c, last) {
		comma = " ,"
	}
	if f.startsLine(last.start) && f.line(last.start) != f.line(open) {
		indent := f.indentAt(last.start)
		m, err := render(indent, true)
		if err != nil {
			return nil, err
		}
		nl := f.newline(last.end)
		rest := strings.TrimLeft(f.restOfLine(last.end), " \t")
		after, hadComma := strings.CutPrefix(rest, ",")
		if f.isCommentStart(after) {
			// Keep the comment with the member it follows.
			eol := f.lineEnd(last.end)
			text := nl + indent + m
			if hadComma {
				return []finding.Edit{{Start: eol, End: eol, NewText: text + ","}}, nil
			}
			return []finding.Edit{{Start: last.end, End: last.end, NewText: comma}, {Start: eol, End: eol, NewText: text}}, nil
		}
		return []finding.Edit{{Start: last.end, End: last.end, NewText: comma + nl + indent + m}}, nil
	}
	sep := ", "
	if len(spans) >= 2 {
		if between := string(f.Data[spans[0].end:spans[1].start]); sepRE().MatchString(between) {
			sep = between
		}
	}
	m, err := render(f.indentAt(last.start), false)
	if comma != "," {
		sep = " " + sep
	}
	return []finding.Edit{{Start: last.end, End: last.end, NewText: sep + m}}, err
}

// endsBare reports whether member m of c ends with a node that is only a
// tag or anchor: a tag's characters include ',' ':' and brackets, so
// "!,next" or "!]" would read as one tag.
func (f *File) endsBare(c *Node, m span) bool {
	if c.Kind == SeqNode {
		return f.bareProps(c.Items[m.at])
	}
	e := c.Entries[m.at]
	if e.Value != nil && e.Value.End.Offset == m.end && f.bareProps(e.Value) {
		return true
	}
	return e.Key.End.Offset == m.end && f.bareProps(e.Key)
}

// bareProps reports whether n is an empty scalar written as only its tag
// or anchor.
func (f *File) bareProps(n *Node) bool {
	return n != nil && n.Kind == ScalarNode && n.Style == Plain && n.Text == "" &&
		n.End.Offset > n.Start.Offset && hasProperties(f.Data, n.Start.Offset)
}

var (
	sepRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*,[ \t]*$`) })
	colonRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*:[ \t]*$`) })
)

// colonSep returns the text between keys and values in c (": " by
// default).
func (f *File) colonSep(c *Node) string {
	for _, e := range c.Entries {
		if within(e.Key, c) && e.Key.End.Offset <= e.Value.Start.Offset {
			if s := string(f.Data[e.Key.End.Offset:e.Value.Start.Offset]); colonRE().MatchString(s) {
				return s
			}
		}
	}
	return ": "
}

// flowRemove deletes member at (entry or item index) of a JSON or flow
// collection, fixing the commas around it.
func (f *File) flowRemove(c *Node, at int) ([]finding.Edit, error) {
	spans, err := members(c)
	if err != nil {
		return nil, err
	}
	i := ownIndex(spans, at)
	if i < 0 {
		return nil, errThroughAlias
	}
	open, closeAt, err := f.brackets(c)
	if err != nil {
		return nil, err
	}
	if len(spans) == 1 {
		return []finding.Edit{{Start: open + 1, End: closeAt}}, nil
	}
	s := spans[i]
	rest := strings.TrimLeft(f.restOfLine(s.end), " \t")
	after, hadComma := strings.CutPrefix(rest, ",")
	clean := strings.TrimSpace(after) == "" || f.isCommentStart(after)
	if f.startsLine(s.start) && clean && f.line(s.start) != f.line(open) {
		es := []finding.Edit{f.removeLines(s.start, s.end)}
		if i == len(spans)-1 && !hadComma {
			if comma := f.commaAfter(spans[i-1].end, s.start); comma >= 0 {
				es = append(es, finding.Edit{Start: comma, End: comma + 1})
			}
		}
		return es, nil
	}
	if i < len(spans)-1 {
		return []finding.Edit{{Start: s.start, End: spans[i+1].start}}, nil
	}
	e := finding.Edit{Start: spans[i-1].end, End: s.end}
	if f.Format == FormatYAML && f.endsBare(c, spans[i-1]) {
		e.NewText = " " // "!]" does not end a tag
	}
	return []finding.Edit{e}, nil
}

// commaAfter returns the offset of the first ',' in [from, to) outside
// comments, or -1.
func (f *File) commaAfter(from, to int) int {
	for i := from; i < to; i++ {
		switch f.Data[i] {
		case ',':
			return i
		case '#':
			i = f.lineEnd(i)
		case '/':
			switch {
			case i+1 < to && f.Data[i+1] == '/':
				i = f.lineEnd(i)
			case i+1 < to && f.Data[i+1] == '*':
				end := bytes.Index(f.Data[i+2:to], []byte("*/"))
				if end < 0 {
					return -1
				}
				i += 2 + end + 1
			}
		}
	}
	return -1
}

// removeLines deletes the whole lines holding [from, to). When they are
// the last lines of a file without a final line break, the break before
// them goes instead, so the file still ends without one.
func (f *File) removeLines(from, to int) finding.Edit {
	s, e := f.lineStart(from), f.nextLineStart(to)
	if e == len(f.Data) && !f.endsWithNewline() && s > 0 {
		s--
		if s > 0 && f.Data[s-1] == '\r' {
			s--
		}
	}
	return finding.Edit{Start: s, End: e}
}

// jsonMultiline reports whether a collection written at s should span
// lines: at the root, or inside a collection that does.
func (f *File) jsonMultiline(s step) bool {
	if s.parent == nil {
		return true
	}
	return s.parent.Start.Line != s.parent.End.Line || s.node.Start.Line != s.node.End.Line
}

// jsonUnit returns the file's indentation step, taken from the first
// member of the root collection ("  " when it cannot tell).
func (f *File) jsonUnit() string {
	if len(f.Docs) == 0 || f.Docs[0].Root == nil {
		return "  "
	}
	root := f.Docs[0].Root
	spans, err := members(root)
	if err != nil || len(spans) == 0 || !f.startsLine(spans[0].start) {
		return "  "
	}
	ind, base := f.indentAt(spans[0].start), f.indentAt(root.Start.Offset)
	if len(ind) > len(base) && strings.HasPrefix(ind, base) {
		return ind[len(base):]
	}
	return "  "
}

// jsonColon returns the file's key-value separator (": " by default).
func (f *File) jsonColon() string {
	if len(f.Docs) > 0 && f.Docs[0].Root != nil && f.Docs[0].Root.Kind == MapNode {
		return f.colonSep(f.Docs[0].Root)
	}
	return ": "
}

// jsonValue writes v as JSON. Collections span lines when multi is set,
// their members indented one step past indent.
func (f *File) jsonValue(v any, indent string, multi bool) (string, error) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{}", nil
		}
		parts := make([]string, 0, len(x))
		for _, k := range value.SortedKeys(x) {
			val, err := f.jsonValue(x[k], indent+f.jsonUnit(), multi)
			if err != nil {
				return "", err
			}
			parts = append(parts, jsonQuote(k)+f.jsonColon()+val)
		}
		return f.jsonJoin("{", "}", parts, indent, multi), nil
	case []any:
		if len(x) == 0 {
			return "[]", nil
		}
		parts := make([]string, 0, len(x))
		for _, it := range x {
			val, err := f.jsonValue(it, indent+f.jsonUnit(), multi)
			if err != nil {
				return "", err
			}
			parts = append(parts, val)
		}
		return f.jsonJoin("[", "]", parts, indent, multi), nil
	}
	return jsonScalar(v)
}

func (f *File) jsonJoin(open, close string, parts []string, indent string, multi bool) string {
	if !multi {
		return open + strings.Join(parts, ", ") + close
	}
	nl := f.newline(0)
	inner := indent + f.jsonUnit()
	return open + nl + inner + strings.Join(parts, ","+nl+inner) + nl + indent + close
}

// flowQuoted reports whether a YAML flow collection writes its keys (or,
// for a sequence, its string items) double-quoted, JSON-style.
func flowQuoted(c *Node) bool {
	for _, e := range c.Entries {
		return e.Key.Style == DoubleQuoted
	}
	for _, it := range c.Items {
		if it.Kind == ScalarNode && it.Tag == "str" {
			return it.Style == DoubleQuoted
		}
	}
	return false
}

func yamlFlowKey(k string, dq bool) string {
	if dq {
		return yamlDoubleQuote(k)
	}
	return yamlKey(k, true)
}

// yamlFlowValue writes v as a YAML flow value; dq double-quotes keys and
// strings.
func yamlFlowValue(v any, dq bool) (string, error) {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range value.SortedKeys(x) {
			val, err := yamlFlowValue(x[k], dq)
			if err != nil {
				return "", err
			}
			parts = append(parts, yamlFlowKey(k, dq)+": "+val)
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case []any:
		parts := make([]string, 0, len(x))
		for _, it := range x {
			val, err := yamlFlowValue(it, dq)
			if err != nil {
				return "", err
			}
			parts = append(parts, val)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	style := Plain
	if dq {
		style = DoubleQuoted
	}
	return yamlScalar(v, style, true)
}
