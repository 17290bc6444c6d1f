package cmdline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/gpulint/gpulint/internal/finding"
)

// This file turns yaml.v3 nodes into Args and list editors, standing in
// for the source package in tests.

// yfile is a YAML file with its line starts, for line/column → offset.
type yfile struct {
	name  string
	src   []byte
	lines []int
}

func newYFile(name string, src []byte) *yfile {
	f := &yfile{name: name, src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			f.lines = append(f.lines, i+1)
		}
	}
	return f
}

// offset converts yaml.v3's 1-based line and (rune) column to a byte offset.
func (f *yfile) offset(line, col int) int {
	if line < 1 || line > len(f.lines) {
		return -1
	}
	off := f.lines[line-1]
	for c := 1; c < col && off < len(f.src); c++ {
		_, w := utf8.DecodeRune(f.src[off:])
		off += w
	}
	return off
}

// docs decodes every document of the file.
func (f *yfile) docs() ([]*yaml.Node, error) {
	d := yaml.NewDecoder(bytes.NewReader(f.src))
	var out []*yaml.Node
	for {
		var n yaml.Node
		err := d.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, &n)
	}
}

// arg builds an Arg for a scalar node.
func (f *yfile) arg(n *yaml.Node) Arg {
	return ScalarArg(f.src, f.offset(n.Line, n.Column), -1, n.Value)
}

// scalarEnd is the offset just past a scalar as written.
func (f *yfile) scalarEnd(n *yaml.Node) int {
	a := f.arg(n)
	if a.Quote == '"' || a.Quote == '\'' {
		return a.Raw.End + 1
	}
	return a.Raw.End
}

func (f *yfile) args(seq *yaml.Node) []Arg {
	if seq == nil {
		return nil
	}
	var out []Arg
	for _, n := range seq.Content {
		out = append(out, f.arg(n))
	}
	return out
}

// get returns the value of key in a mapping node, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// seqOf returns key's value when it is a sequence of scalars.
func seqOf(m *yaml.Node, key string) *yaml.Node {
	n := get(m, key)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil
		}
	}
	return n
}

// yList edits one YAML sequence for tests: it implements ListAppender and
// ListRemover by writing double-quoted items.
type yList struct {
	f   *yfile
	seq *yaml.Node
}

func (l yList) Append(values ...string) ([]finding.Edit, error) {
	src := l.f.src
	var b strings.Builder
	if l.seq.Style&yaml.FlowStyle != 0 {
		start := l.f.offset(l.seq.Line, l.seq.Column)
		end := matchingBracket(src, start)
		if end < 0 {
			return nil, errors.New("no closing bracket")
		}
		for i, v := range values {
			if i > 0 || len(l.seq.Content) > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"` + escapeDouble(v) + `"`)
		}
		p := end
		if len(l.seq.Content) > 0 {
			p = l.f.scalarEnd(l.seq.Content[len(l.seq.Content)-1])
		}
		return []finding.Edit{{File: l.f.name, Start: p, End: p, NewText: b.String()}}, nil
	}
	if len(l.seq.Content) == 0 {
		return nil, errors.New("empty block sequence")
	}
	last := l.seq.Content[len(l.seq.Content)-1]
	dash := l.dash(last)
	indent := dash - lineStart(src, dash)
	p := l.f.scalarEnd(last)
	if p > 0 && src[p-1] != '\n' {
		if nl := bytes.IndexByte(src[p:], '\n'); nl >= 0 {
			p += nl + 1
		} else {
			p = len(src)
			b.WriteString("\n")
		}
	}
	for _, v := range values {
		fmt.Fprintf(&b, "%s- \"%s\"\n", strings.Repeat(" ", indent), escapeDouble(v))
	}
	return []finding.Edit{{File: l.f.name, Start: p, End: p, NewText: b.String()}}, nil
}

func (l yList) Remove(from, to int) ([]finding.Edit, error) {
	items := l.seq.Content
	if from < 0 || to > len(items) || from >= to {
		return nil, fmt.Errorf("bad range %d..%d", from, to)
	}
	src := l.f.src
	if l.seq.Style&yaml.FlowStyle != 0 {
		var start, end int
		if from > 0 {
			start, end = l.f.scalarEnd(items[from-1]), l.f.scalarEnd(items[to-1])
		} else {
			start = l.f.offset(items[0].Line, items[0].Column)
			end = l.f.scalarEnd(items[to-1])
			if to < len(items) {
				end = l.f.offset(items[to].Line, items[to].Column)
			}
		}
		return []finding.Edit{{File: l.f.name, Start: start, End: end}}, nil
	}
	start := lineStart(src, l.dash(items[from]))
	end := l.f.scalarEnd(items[to-1])
	if end > 0 && src[end-1] != '\n' {
		if nl := bytes.IndexByte(src[end:], '\n'); nl >= 0 {
			end += nl + 1
		} else {
			end = len(src)
		}
	}
	return []finding.Edit{{File: l.f.name, Start: start, End: end}}, nil
}

// dash finds the "-" that introduces a block sequence item.
func (l yList) dash(item *yaml.Node) int {
	p := l.f.offset(item.Line, item.Column) - 1
	for p > 0 && l.f.src[p] != '-' {
		p--
	}
	return p
}

func lineStart(src []byte, p int) int {
	return bytes.LastIndexByte(src[:p], '\n') + 1
}

func matchingBracket(src []byte, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(src) && src[i] != '\''; i++ {
			}
		}
	}
	return -1
}

// applyEdits applies non-overlapping edits to src.
func applyEdits(t *testing.T, src []byte, edits []finding.Edit) []byte {
	t.Helper()
	es := slices.Clone(edits)
	slices.SortFunc(es, func(a, b finding.Edit) int { return a.Start - b.Start })
	var out []byte
	prev := 0
	for _, e := range es {
		if e.Start < prev || e.End < e.Start || e.End > len(src) {
			t.Fatalf("bad edit %+v (prev end %d, len %d)", e, prev, len(src))
		}
		out = append(out, src[prev:e.Start]...)
		out = append(out, e.NewText...)
		prev = e.End
	}
	return append(out, src[prev:]...)
}

// container reads a container mapping node.
func (f *yfile) container(m *yaml.Node) Container {
	ct := Container{File: f.name}
	if img := get(m, "image"); img != nil && img.Kind == yaml.ScalarNode {
		ct.Image = img.Value
	}
	if s := seqOf(m, "command"); s != nil {
		ct.Command = f.args(s)
		ct.CommandList = yList{f, s}
	}
	if s := seqOf(m, "args"); s != nil {
		ct.Args = f.args(s)
		ct.ArgsList = yList{f, s}
	}
	return ct
}

// recognizeYAML parses a one-document YAML container and recognises it.
func recognizeYAML(t *testing.T, src string) (*Command, *yfile) {
	t.Helper()
	f := newYFile("c.yaml", []byte(src))
	docs, err := f.docs()
	if err != nil || len(docs) == 0 {
		t.Fatalf("parse test YAML: %v", err)
	}
	return Recognize(f.container(docs[0].Content[0])), f
}
