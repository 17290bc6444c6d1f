package source

import (
	"bytes"
	"fmt"
	"regexp"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
)

// Tutorials and deployment scripts often keep a manifest with mustache-style
// placeholders that sed or a template tool replaces before the file is used
// (`sed -e "s/{{HF_TOKEN}}/$HF_TOKEN/" manifest.yaml | kubectl apply -f -`).
// Unquoted, `key: {{NAME}}` is not a string to a YAML parser but a flow
// mapping whose key is itself a mapping, which PyYAML, yaml.v3 and
// Kubernetes' sigs.k8s.io/yaml all reject. A file that fails to parse only
// because of such placeholders is a template, not a broken file: it is read
// with each placeholder as a string whose value is unknown, and no edit
// writes into a placeholder. Placeholders inside a longer scalar
// ("repo/{{NAME}}:tag") parse already and are left as they are; other
// template syntax (Helm control structures, {{ include }} blocks spanning
// lines) is not this: such a file keeps its parse error.

// mustacheScalar matches a line whose value is one {{ ... }} placeholder:
// after the indentation, "- " sequence indicators or a "key: " (or both),
// the placeholder, then only blanks and an optional comment. A placeholder
// alone on its line is a template directive, not a value, and mustache
// sections ({{#x}}, {{/x}}, {{^x}}), comments ({{!x}}) and partials
// ({{>x}}) are not values either: none of them is matched.
var mustacheScalar = sync.OnceValue(func() *regexp.Regexp {
	const key = `[^\s#\-{][^\n#{]*?:[ \t]+`
	return regexp.MustCompile(`(?m)^[ \t]*(?:(?:-[ \t]+)+(?:` + key + `)?|` + key + `)(\{\{[ \t]*[^{}\n#/^!> \t][^{}\n]*\}\})[ \t]*(?:#[^\n]*)?\r?$`)
})

// mustacheSpans returns the byte ranges of the placeholders that stand as
// whole plain scalars.
func mustacheSpans(data []byte) [][2]int {
	if !bytes.Contains(data, []byte("{{")) {
		return nil
	}
	var out [][2]int
	for _, m := range mustacheScalar().FindAllSubmatchIndex(data, -1) {
		out = append(out, [2]int{m[2], m[3]})
	}
	return out
}

// mustacheAsMap reports whether a whole-scalar placeholder of f.Data was
// read as a flow mapping: yaml.v3 accepts `{{NAME}}` as a map with a map
// key, which PyYAML ("found unhashable key") and Kubernetes reject.
func (f *File) mustacheAsMap() bool {
	spans := mustacheSpans(f.Data)
	if len(spans) == 0 {
		return false
	}
	starts := make(map[int]bool, len(spans))
	for _, sp := range spans {
		starts[sp[0]] = true
	}
	found := false
	walkNodes(f, func(n *Node) {
		found = found || (n.Kind == MapNode && starts[n.Start.Offset])
	})
	return found
}

// walkNodes calls fn once on every node of f's documents, keys included.
func walkNodes(f *File, fn func(*Node)) {
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		fn(n)
		for _, e := range n.Entries {
			walk(e.Key)
			walk(e.Value)
		}
		for _, it := range n.Items {
			walk(it)
		}
	}
	for _, d := range f.Docs {
		walk(d.Root)
	}
}

// parseMustache parses data with each whole-scalar placeholder replaced by
// a single-quoted scalar of the same byte length, so every position stays
// exact, then restores the original bytes and gives each placeholder node
// its text as written. ok is false when data has no such placeholder or
// still does not parse.
func parseMustache(path string, data []byte, lim Limits) (*File, bool) {
	spans := mustacheSpans(data)
	if len(spans) == 0 {
		return nil, false
	}
	masked := bytes.Clone(data)
	for _, sp := range spans {
		masked[sp[0]], masked[sp[1]-1] = '\'', '\''
		for i := sp[0] + 1; i < sp[1]-1; i++ {
			masked[i] = 'x'
		}
	}
	f := newFile(path, masked, FormatYAML)
	if !parseYAMLFast(f, lim) {
		f.Docs = nil
		if err := parseYAMLFull(f, lim); err != nil {
			return nil, false
		}
	}
	f.Data = data
	at := make(map[int]int, len(spans))
	for _, sp := range spans {
		at[sp[0]] = sp[1]
	}
	walkNodes(f, func(n *Node) {
		if end, ok := at[n.Start.Offset]; ok && n.Kind == ScalarNode && n.End.Offset == end {
			n.Text = string(data[n.Start.Offset:end])
			n.Value, n.Tag, n.Style = n.Text, "str", Plain
		}
	})
	f.Placeholders = spans
	return f, true
}

// CheckEdits returns an error when an edit meant for f.Data writes into a
// template placeholder (see File.Placeholders): replaces any of its bytes,
// or writes text against it with no blank in between.
func (f *File) CheckEdits(es []finding.Edit) error {
	blank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for _, e := range es {
		for _, p := range f.Placeholders {
			n := len(e.NewText)
			touches := (e.Start < p[1] && e.End > p[0]) ||
				(e.End == p[0] && n > 0 && !blank(e.NewText[n-1])) ||
				(e.Start == p[1] && n > 0 && !blank(e.NewText[0]))
			if touches {
				pos := f.PosAt(p[0])
				return fmt.Errorf("edit %s: the change would write into the template placeholder %s at %d:%d, which is replaced before the file is used; change it by hand",
					f.Path, f.Data[p[0]:p[1]], pos.Line, pos.Col)
			}
		}
	}
	return nil
}
