package source

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

// checkTree fails unless every node of f lies within f.Data, starts before
// it ends, and has Line/Col that agree with its Offset.
func checkTree(t testing.TB, f *File) {
	t.Helper()
	seen := map[*Node]bool{}
	var visit func(n *Node)
	visit = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, p := range []finding.Pos{n.Start, n.End} {
			if p.Offset < 0 || p.Offset > len(f.Data) || f.PosAt(p.Offset) != p {
				t.Fatalf("%s: position %+v does not match offset (want %+v)", f.Path, p, f.PosAt(p.Offset))
			}
		}
		if n.Start.Offset > n.End.Offset {
			t.Fatalf("%s: node starts at %+v after it ends at %+v", f.Path, n.Start, n.End)
		}
		for _, e := range n.Entries {
			visit(e.Key)
			visit(e.Value)
		}
		for _, it := range n.Items {
			visit(it)
		}
	}
	for _, d := range f.Docs {
		if d.Start.Offset > d.End.Offset || d.End.Offset > len(f.Data) {
			t.Fatalf("%s: document %d range %+v-%+v", f.Path, d.Index, d.Start, d.End)
		}
		visit(d.Root)
	}
}

// lookup returns the key and value nodes at path in document doc.
func lookup(t *testing.T, f *File, doc int, path ...any) (key, val *Node) {
	t.Helper()
	n, e, matched := f.Docs[doc].Root.Lookup(path)
	if matched != len(path) {
		t.Fatalf("path %v not found (matched %d)", path, matched)
	}
	return e.Key, n
}

func TestPositions(t *testing.T) {
	type lc struct{ Line, Col, Offset int }
	tests := []struct {
		name    string
		path    string
		data    string
		doc     int
		key     []any
		wantKey lc
		wantVal lc
		text    string // the value's source text
	}{
		{
			name: "key in third YAML document", path: "m.yaml",
			data: "a: 1\n---\nb: 2\n---\n# c\nc:\n  d: x\n",
			doc:  2, key: []any{"c", "d"},
			wantKey: lc{7, 3, 27}, wantVal: lc{7, 6, 30}, text: "x",
		},
		{
			name: "CRLF YAML", path: "c.yaml",
			data:    "a: 1\r\nb:\r\n  c: 'x y'\r\n",
			key:     []any{"b", "c"},
			wantKey: lc{3, 3, 12}, wantVal: lc{3, 6, 15}, text: "'x y'",
		},
		{
			name: "tabs in JSON", path: "t.json",
			data:    "{\n\t\"a\": {\n\t\t\"b\": 1.5\n\t}\n}",
			key:     []any{"a", "b"},
			wantKey: lc{3, 3, 12}, wantVal: lc{3, 8, 17}, text: "1.5",
		},
		{
			name: "BOM in JSON", path: "b.json",
			data:    "\ufeff{\"a\": true}",
			key:     []any{"a"},
			wantKey: lc{1, 5, 4}, wantVal: lc{1, 10, 9}, text: "true",
		},
		{
			name: "BOM in YAML", path: "b.yaml",
			data:    "\ufeffa: yes\n",
			key:     []any{"a"},
			wantKey: lc{1, 4, 3}, wantVal: lc{1, 7, 6}, text: "yes",
		},
		{
			name: "multi-byte UTF-8 before a JSON key", path: "u.json",
			data:    `{"é": "ü", "b": 2}`,
			key:     []any{"b"},
			wantKey: lc{1, 14, 13}, wantVal: lc{1, 19, 18}, text: "2",
		},
		{
			name: "multi-byte UTF-8 before a YAML flow key", path: "u.yaml",
			data:    "éé: {ü: 1, b: 2}\n",
			key:     []any{"éé", "b"},
			wantKey: lc{1, 15, 14}, wantVal: lc{1, 18, 17}, text: "2",
		},
		{
			name: "YAML multi-line plain and block scalars", path: "s.yaml",
			data:    "a: one\n  two\nb: |\n  x\n\n  y\n\nc: 1\n",
			key:     []any{"b"},
			wantKey: lc{3, 1, 13}, wantVal: lc{3, 4, 16}, text: "|\n  x\n\n  y",
		},
		{
			name: "YAML double-quoted over two lines", path: "q.yaml",
			data:    "k: \"a \\\" b\n  c\"  # note\n",
			key:     []any{"k"},
			wantKey: lc{1, 1, 0}, wantVal: lc{1, 4, 3}, text: "\"a \\\" b\n  c\"",
		},
		{
			name: "YAML block sequence under a key", path: "l.yaml",
			data:    "list:\n- a\n- {b: [1, 2]}\n",
			key:     []any{"list"},
			wantKey: lc{1, 1, 0}, wantVal: lc{2, 1, 6}, text: "- a\n- {b: [1, 2]}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.path, []byte(tc.data), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, f)
			k, v := lookup(t, f, tc.doc, tc.key...)
			got := []lc{{k.Start.Line, k.Start.Col, k.Start.Offset}, {v.Start.Line, v.Start.Col, v.Start.Offset}}
			if diff := cmp.Diff([]lc{tc.wantKey, tc.wantVal}, got); diff != "" {
				t.Errorf("key and value starts (-want +got):\n%s", diff)
			}
			if text := tc.data[v.Start.Offset:v.End.Offset]; text != tc.text {
				t.Errorf("value text = %q, want %q", text, tc.text)
			}
		})
	}
}

func TestParseJSONValues(t *testing.T) {
	f, err := ParseJSON("v.json", []byte(`{"i": 3, "neg": -0, "big": 9223372036854775808, "f": 5e8, "g": 1.5,
		"s": "a\u00e9\ud83d\ude00\n\"", "t": true, "n": null, "dup": 1, "dup": 2, "arr": []}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	root := f.Docs[0].Root
	type scalar struct {
		Tag   string
		Text  string
		Value any
		Style ScalarStyle
	}
	tests := []struct {
		key  string
		want scalar
	}{
		{"i", scalar{"int", "3", int64(3), Plain}},
		{"neg", scalar{"int", "-0", int64(0), Plain}},
		{"big", scalar{"float", "9223372036854775808", 9223372036854775808.0, Plain}},
		{"f", scalar{"float", "5e8", 5e8, Plain}},
		{"g", scalar{"float", "1.5", 1.5, Plain}},
		{"s", scalar{"str", "aé😀\n\"", "aé😀\n\"", DoubleQuoted}},
		{"t", scalar{"bool", "true", true, Plain}},
		{"n", scalar{"null", "null", nil, Plain}},
		{"dup", scalar{"int", "2", int64(2), Plain}},
	}
	for _, tc := range tests {
		n := root.Get(tc.key)
		got := scalar{n.Tag, n.Text, n.Value, n.Style}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.key, diff)
		}
	}
	var keys []string
	for _, e := range root.Entries {
		keys = append(keys, e.Key.Text)
	}
	if diff := cmp.Diff([]string{"i", "neg", "big", "f", "g", "s", "t", "n", "dup", "dup", "arr"}, keys); diff != "" {
		t.Errorf("entries lose source order or duplicates (-want +got):\n%s", diff)
	}
}

func TestParseJSONLenient(t *testing.T) {
	data := "{\n  // line\n  \"a\": 1, # hash\n  /* block */ \"b\": [1, 2,],\n}\n"
	f, err := ParseJSON("l.json", []byte(data), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []LenientNote{
		{finding.Pos{Offset: 4, Line: 2, Col: 3}, LenientComment},
		{finding.Pos{Offset: 22, Line: 3, Col: 11}, LenientComment},
		{finding.Pos{Offset: 31, Line: 4, Col: 3}, LenientComment},
		{finding.Pos{Offset: 53, Line: 4, Col: 25}, LenientTrailingComma},
		{finding.Pos{Offset: 55, Line: 4, Col: 27}, LenientTrailingComma},
	}
	if diff := cmp.Diff(want, f.Lenient); diff != "" {
		t.Errorf("lenient notes (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, path, data, want string
	}{
		{"bare placeholder", "ds.json", "{\n  \"train_batch_size\": BATCH_SIZE\n}", "ds.json:2:23: invalid character 'B' looking for beginning of value"},
		{"shell placeholder", "ds.json", `{"stage": ${zero_stage}}`, `ds.json:1:11: invalid character '$' looking for beginning of value`},
		{"missing comma", "a.json", "{\"a\": 1\n \"b\": 2}", `a.json:2:2: expected ',' or '}' after object member, found character '"'`},
		{"missing array comma", "a.json", "[1 2]", `a.json:1:4: expected ',' or ']' after array element, found character '2'`},
		{"missing colon", "a.json", `{"a" 1}`, `a.json:1:6: expected ':' after object key, found character '1'`},
		{"unquoted key", "a.json", `{a: 1}`, `a.json:1:2: invalid character 'a' looking for beginning of object key string`},
		{"unterminated string", "a.json", `{"a": "xyz`, "a.json:1:7: unterminated string"},
		{"line break in string", "a.json", "{\"a\": \"x\ny\"}", "a.json:1:7: unterminated string (line break before the closing quote)"},
		{"bad escape", "a.json", `{"a": "\q"}`, `a.json:1:8: invalid escape sequence "\\q" in string`},
		{"invalid UTF-8 in string", "a.json", "{\"a\": \"x\xff\"}", "a.json:1:9: invalid UTF-8 in string (byte 0xff)"},
		{"invalid UTF-8 outside strings", "a.json", "{\"a\": \xff}", "a.json:1:1: binary file (invalid UTF-8 byte 0xff at line 1, column 7)"},
		{"Python True", "a.json", `{"a": True}`, `a.json:1:7: invalid character 'T' looking for beginning of value`},
		{"leading zero", "a.json", `{"a": 01}`, `a.json:1:8: invalid character '1' in number`},
		{"bad fraction", "a.json", `[1.]`, `a.json:1:4: invalid number: expected a digit after the decimal point, found character ']'`},
		{"trailing garbage", "a.json", `{} x`, `a.json:1:4: invalid character 'x' after top-level value`},
		{"unterminated comment", "a.json", "{ /* x", "a.json:1:3: unterminated /* comment"},
		{"unexpected end", "a.json", `{"a": [1,`, "a.json:1:10: unexpected end of input, expected a value"},
		{"empty JSON file", "a.json", "", "a.json:1:1: unexpected end of input, expected a value"},
		{"NUL bytes", "a.yaml", "a: 1\x00\x00", "a.yaml:1:1: binary file (NUL byte in the first 8 KiB)"},
		{"YAML invalid UTF-8", "a.yaml", "a: 1\nb: caf\xe9\n", "a.yaml:1:1: binary file (invalid UTF-8 byte 0xe9 at line 2, column 7)"},
		{"YAML flow placeholder", "k.yaml", "a: 1\nb:\n  - image: {username}/torchserve:latest\n", "k.yaml:3:22: did not find expected key"},
		{"YAML bad indentation", "k.yaml", "a:\n  b: 1\n c: 2\n", "k.yaml:3:2: did not find expected key"},
		{"YAML unterminated quote", "k.yaml", "a: 1\nb: \"xyz\n", "k.yaml:2:4: found unexpected end of stream"},
		{"YAML unknown alias", "k.yaml", "a: *nope\n", "k.yaml:1:4: unknown anchor 'nope' referenced"},
		{"YAML tab indentation", "k.yaml", "a:\n\tb: 1\n", "k.yaml:2:1: found character that cannot start any token"},
		{"YAML bad explicit int", "k.yaml", "a: !!int x\n", "k.yaml:1:4: cannot read \"x\" as !!int"},
		{"YAML recursive alias", "k.yaml", "a: &x [*x]\n", "k.yaml:1:8: recursive alias *x refers to a node that contains it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.path, []byte(tc.data), Limits{})
			if f == nil {
				t.Fatal("nil File")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *Error", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error = %q\n     want %q", got, tc.want)
			}
		})
	}
}

func TestParseYAMLKeepsGoodDocuments(t *testing.T) {
	f, err := Parse("m.yaml", []byte("a: 1\n---\nb: 2\n---\nc: [\n"), Limits{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Pos.Line != 5 {
		t.Fatalf("error = %v, want one on line 5", err)
	}
	if len(f.Docs) != 2 || f.Docs[1].Root.Get("b") == nil {
		t.Fatalf("got %d documents, want the 2 before the error", len(f.Docs))
	}
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name, path, data string
		want             Format
		docs             int
	}{
		{"json by name", "a.json", `{"a": 1}`, FormatJSON, 1},
		{"yaml by name even if JSON", "a.yml", `{"a": 1}`, FormatYAML, 1},
		{"sniffed JSON", "config", ` // c` + "\n" + `{"a": 1}`, FormatJSON, 1},
		{"sniffed neox braces fall back to YAML", "config", "{\n  \"a\": True,\n}\n", FormatYAML, 1},
		{"sniffed YAML", "config", "a: 1\n", FormatYAML, 1},
		{"empty YAML", "a.yaml", "", FormatYAML, 0},
		{"whitespace-only YAML", "a.yaml", " \n\t\n", FormatYAML, 0},
		{"comment-only YAML", "a.yaml", "# nothing\n# here\n", FormatYAML, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.path, []byte(tc.data), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Format != tc.want || len(f.Docs) != tc.docs {
				t.Errorf("format %v with %d documents, want %v with %d", f.Format, len(f.Docs), tc.want, tc.docs)
			}
		})
	}
}

func TestEmptyDocuments(t *testing.T) {
	f, err := ParseYAML("e.yaml", []byte("# lead\n---\n# only a comment\n---\n---\na: 1\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var roots []bool
	for _, d := range f.Docs {
		roots = append(roots, d.Root != nil)
	}
	if diff := cmp.Diff([]bool{false, false, true}, roots); diff != "" {
		t.Errorf("documents with a root (-want +got):\n%s", diff)
	}
	if got := f.Docs[2].Start; got.Line != 6 {
		t.Errorf("third document starts at %+v, want line 6", got)
	}
}

func TestYAMLAnchorsAndMerge(t *testing.T) {
	data := "base: &b {x: 1, y: 2}\nother: &o {y: 3, z: 4}\nm:\n  <<: [*b, *o]\n  x: 9\nalias: *b\n"
	f, err := ParseYAML("a.yaml", []byte(data), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	root := f.Docs[0].Root
	if root.Get("alias") != root.Get("base") {
		t.Error("an alias should share the anchored node")
	}
	m := root.Get("m")
	got, err := m.ToValue(0)
	if err != nil {
		t.Fatal(err)
	}
	// PyYAML: own keys win, then earlier merge sources.
	want := map[string]any{"x": int64(9), "y": int64(2), "z": int64(4)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged map (-want +got):\n%s", diff)
	}
	if v := m.Get("z"); v == nil || v.Value != int64(4) {
		t.Errorf("Get does not see merged key z: %+v", v)
	}
	// A path through a merged key or an alias is not editable.
	if _, err := f.Edits(0, []Op{{Kind: Set, Path: []any{"m", "z"}, Value: 5}}); !errors.Is(err, errThroughAlias) {
		t.Errorf("edit through merge key: error %v, want errThroughAlias", err)
	}
}

func TestToValue(t *testing.T) {
	f, err := ParseYAML("v.yaml", []byte("a: [1, 2.5, yes, ~, 'x']\nb: {c: d}\nb: {e: f}\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Docs[0].Root.ToValue(0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{int64(1), 2.5, true, nil, "x"}, "b": map[string]any{"e": "f"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := f.Docs[0].Root.ToValue(3); !errors.Is(err, ErrTooManyNodes) {
		t.Errorf("ToValue(3) error = %v, want ErrTooManyNodes", err)
	}
}

func TestYAMLFloatSpecials(t *testing.T) {
	f, err := ParseYAML("f.yaml", []byte("a: .inf\nb: -.Inf\nc: .NaN\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	root := f.Docs[0].Root
	if v := root.Get("a").Value.(float64); !math.IsInf(v, 1) {
		t.Errorf("a = %v", v)
	}
	if v := root.Get("b").Value.(float64); !math.IsInf(v, -1) {
		t.Errorf("b = %v", v)
	}
	if v := root.Get("c").Value.(float64); !math.IsNaN(v) {
		t.Errorf("c = %v", v)
	}
}

func TestPosAt(t *testing.T) {
	f, err := Parse("p.yaml", []byte("ab\r\ncd\n\nx"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		off  int
		want finding.Pos
	}{
		{-5, finding.Pos{Offset: 0, Line: 1, Col: 1}},
		{2, finding.Pos{Offset: 2, Line: 1, Col: 3}}, // the '\r'
		{4, finding.Pos{Offset: 4, Line: 2, Col: 1}},
		{7, finding.Pos{Offset: 7, Line: 3, Col: 1}},
		{8, finding.Pos{Offset: 8, Line: 4, Col: 1}},
		{99, finding.Pos{Offset: 9, Line: 4, Col: 2}},
	}
	for _, tc := range tests {
		if got := f.PosAt(tc.off); got != tc.want {
			t.Errorf("PosAt(%d) = %+v, want %+v", tc.off, got, tc.want)
		}
	}
}
