package cmdline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestScalarArg(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string // one document "k: <scalar>"
		wantQuote byte
		wantExact bool
		wantRaw   string // file[Raw.Start:Raw.End]
	}{
		{name: "plain", yaml: "k: --port\n", wantExact: true, wantRaw: "--port"},
		{name: "double quoted", yaml: "k: \"--port\"\n", wantQuote: '"', wantExact: true, wantRaw: "--port"},
		{name: "double quoted escapes", yaml: "k: \"a \\\"b\\\" \\\\ \\t\"\n", wantQuote: '"', wantRaw: `a \"b\" \\ \t`},
		{name: "single quoted doubled quote", yaml: "k: 'it''s'\n", wantQuote: '\'', wantRaw: "it''s"},
		{name: "plain multi-line", yaml: "k: vllm serve\n  --port 1\n", wantRaw: "vllm serve\n  --port 1"},
		{name: "literal block", yaml: "k: |\n  vllm serve \\\n    --port 1\n", wantQuote: '|', wantRaw: "  vllm serve \\\n    --port 1\n"},
		{name: "folded block", yaml: "k: >-\n  vllm serve\n  --port 1\nj: 2\n", wantQuote: '>', wantRaw: "  vllm serve\n  --port 1"},
		{name: "folded CRLF", yaml: "k: >\r\n  a\r\n  b\r\n", wantQuote: '>', wantRaw: "  a\r\n  b\r\n"},
		{name: "double quoted folded", yaml: "k: \"a\n   b\\\n   c\"\n", wantQuote: '"', wantRaw: "a\n   b\\\n   c"},
		// The content starts with the text but the text ends inside an
		// escape: the end must come from the closing quote.
		{name: "single quoted ending in doubled quotes", yaml: "k: 'serve m'''''\n", wantQuote: '\'', wantRaw: "serve m''''"},
		{name: "double quoted ending in an escaped backslash", yaml: `k: "serve m\\\\"` + "\n", wantQuote: '"', wantRaw: `serve m\\\\`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newYFile("f", []byte(tc.yaml))
			docs, err := f.docs()
			if err != nil {
				t.Fatal(err)
			}
			n := get(docs[0].Content[0], "k")
			a := f.arg(n)
			got := struct {
				Quote byte
				Exact bool
				Raw   string
			}{a.Quote, a.Raw.Exact, string(f.src[a.Raw.Start:a.Raw.End])}
			want := struct {
				Quote byte
				Exact bool
				Raw   string
			}{tc.wantQuote, tc.wantExact, tc.wantRaw}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Arg (-want +got):\n%s", diff)
			}
			checkPositions(t, f.src, a)
			// The same Arg with the end known.
			b := ScalarArg(f.src, f.offset(n.Line, n.Column), f.scalarEnd(n), n.Value)
			if diff := cmp.Diff(a, b); diff != "" {
				t.Errorf("known end changes the Arg (-unknown +known):\n%s", diff)
			}
		})
	}
}

// checkPositions verifies that every non-blank byte of the Arg's text maps
// to a file range that holds it, possibly escaped.
func checkPositions(t *testing.T, src []byte, a Arg) {
	t.Helper()
	m := a.positions()
	if m == nil {
		t.Fatalf("no positions for %+v", a)
	}
	for i := range len(a.Text) {
		c := a.Text[i]
		if c == ' ' || c == '\n' {
			continue
		}
		s, e := m.start[i], m.end[i]
		if s < a.Raw.Start || e > a.Raw.End || s >= e {
			t.Fatalf("byte %d (%q) maps to [%d,%d) outside %+v", i, c, s, e, a.Raw)
		}
		raw := string(src[s:e])
		if e-s == 1 && raw[0] != c {
			t.Errorf("byte %d is %q but the file has %q", i, c, raw)
		}
		if e-s > 1 && raw[0] != '\\' && raw != "''" {
			t.Errorf("byte %d (%q) maps to %q", i, c, raw)
		}
	}
}

// TestScalarArgBlockEnd gives a block scalar's end as the end of its last
// content line, as the source package does; the chomped line break in the
// text then lies past the content.
func TestScalarArgBlockEnd(t *testing.T) {
	src := []byte("k: |\n  vllm serve m \\\n    --port 1\nj: 2\n")
	start := strings.IndexByte(string(src), '|')
	end := strings.Index(string(src), "--port 1") + len("--port 1")
	a := ScalarArg(src, start, end, "vllm serve m \\\n  --port 1\n")
	checkPositions(t, src, a)
	c := Recognize(Container{File: "f", Command: []Arg{{Text: "sh", Raw: Span{Exact: false}}, {Text: "-c"}}, Args: []Arg{a}})
	if c == nil {
		t.Fatal("not recognised")
	}
	edits, err := c.SetFlag("max-num-seqs", "8")
	if err != nil {
		t.Fatal(err)
	}
	got := string(applyEdits(t, src, edits))
	want := "k: |\n  vllm serve m \\\n    --port 1 \\\n    --max-num-seqs 8\nj: 2\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestScalarArgUnknownPosition(t *testing.T) {
	a := ScalarArg([]byte("k: v\n"), 99, -1, "v")
	if a.positions() != nil || a.Raw.Exact {
		t.Errorf("out-of-range start gave positions: %+v", a)
	}
	// Text that does not match the file gives no positions.
	b := ScalarArg([]byte("k: \"x\\u00e9\"\n"), 3, -1, "xy")
	if b.positions() != nil {
		t.Errorf("mismatched text gave positions: %+v", b)
	}
}

// FuzzScalarArg encodes a string in each YAML scalar style, reads it back
// with yaml.v3 and checks that the Arg maps every byte into the file.
func FuzzScalarArg(f *testing.F) {
	for _, s := range []string{"vllm serve m \\\n  --port 1\n", "a 'b' \"c\"", "x\ty", "é\x01", "  lead", "a\n\n b"} {
		f.Add(s, uint8(0))
	}
	styles := []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle}
	f.Fuzz(func(t *testing.T, s string, style uint8) {
		if !strings.ContainsRune(s, 0) && strings.ToValidUTF8(s, "") == s {
			n := &yaml.Node{Kind: yaml.ScalarNode, Value: s, Style: styles[int(style)%len(styles)]}
			doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "k"}, n}}
			out, err := yaml.Marshal(doc)
			if err != nil {
				return
			}
			yf := newYFile("f", out)
			docs, err := yf.docs()
			if err != nil || len(docs) == 0 {
				return
			}
			v := get(docs[0].Content[0], "k")
			if v == nil || v.Kind != yaml.ScalarNode || v.Value != s {
				return
			}
			a := yf.arg(v)
			if a.positions() == nil {
				if strings.ContainsAny(string(out), "\\") {
					return // escapes beyond the simple set may defeat alignment
				}
				t.Fatalf("no positions for %q in %q", s, out)
			}
			checkPositions(t, yf.src, a)
		}
	})
}

// FuzzRecognizeScript puts a script into a `sh -c` container in each YAML
// style and checks that whatever is recognised has in-bounds spans and
// that setting and removing a flag keeps the file valid and takes effect.
func FuzzRecognizeScript(f *testing.F) {
	for _, s := range []string{
		"vllm serve m --port 8000",
		"ulimit -n 1; $RAY; vllm serve m --tensor-parallel-size 16 --distributed-executor-backend ray",
		"vllm serve \\\n  --host \"0.0.0.0\" \\\n  --kv-transfer-config '{\"kv_connector\":\"N\"}' \\\n  --tensor-parallel-size=2\n",
		"python3 -m vllm.entrypoints.openai.api_server --port 8080 --model m --pipeline_parallel_size 2",
		"vllm serve /mnt/models\n--served-model-name \"{{ .Spec.Model.Name }}\"\n--disable-log-requests\n$VLLM_ADDITIONAL_ARGS\n",
	} {
		f.Add(s, uint8(3))
	}
	styles := []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle}
	f.Fuzz(func(t *testing.T, script string, style uint8) {
		if strings.ContainsRune(script, 0) || strings.ToValidUTF8(script, "") != script {
			return
		}
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: script, Style: styles[int(style)%len(styles)]}
		cmd := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "sh"}, {Kind: yaml.ScalarNode, Value: "-c"}, n}}
		doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "command"}, cmd}}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return
		}
		yf := newYFile("c.yaml", out)
		docs, err := yf.docs()
		if err != nil || len(docs) == 0 || seqOf(docs[0].Content[0], "command") == nil {
			return
		}
		c := Recognize(yf.container(docs[0].Content[0]))
		if c == nil {
			return
		}
		for _, fl := range c.Flags {
			for _, s := range []Span{fl.NameSpan, fl.ValueSpan} {
				if s.Start < 0 || s.End > len(out) || s.Start > s.End {
					t.Fatalf("span %+v out of bounds", s)
				}
			}
		}
		for _, o := range []op{{true, "max-num-seqs", "7"}, {true, "enforce-eager", "true"}, {false, "port", ""}} {
			edits, err := o.run(c)
			if err != nil || len(edits) == 0 {
				continue
			}
			fixed := applyEdits(t, out, edits)
			f2 := newYFile("c.yaml", fixed)
			d2, err := f2.docs()
			if err != nil || len(d2) == 0 {
				t.Fatalf("%v broke the YAML: %v\n%s\n->\n%s", o, err, out, fixed)
			}
			c2 := Recognize(f2.container(d2[0].Content[0]))
			if c2 == nil {
				t.Fatalf("%v: not recognised after the edit\n%s\n->\n%s", o, out, fixed)
			}
			if o.set && c2.Config()[CanonicalName(o.name)] == nil {
				t.Fatalf("%v did not take\n%s\n->\n%s", o, out, fixed)
			}
		}
	})
}
