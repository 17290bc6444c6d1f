package source

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fastFullSnippets exercise the shapes the fast reader takes and the
// places where it must give up.
var fastFullSnippets = []string{
	"a: 1\n", "a:\nb: 1\n", "a: 1\nb:\n", "a: 1\nb:", "a: 1\nb:\n\n# c\n", "a: # c\nb: 1\n",
	"- \n- a\n", "-\n", "- # c\n-  x\n", "a:\n  - x\n  -\n", "k:\n- a\n- b\nz: 1\n", "- - a\n  - b\n- c\n",
	"- a: 1\n  b: 2\n- c: 3\n", "- a:\n  - x\n  b: 1\n", "a:\n  b:\n    c: d\n  e: f\ng: h\n",
	"---\na: 1\n---\n", "a: 1\n---\n", "---\n", "--- # c\na: 1\n", "# only\n---\n# x\n", "---\n---\n",
	"a: 1\n---\nb: 2\n", "--- \na: 1\n...\n", "%YAML 1.1\n---\na: 1\n",
	"a: [1, 2]\nb: {c: d}\n", "a: []\nb: {}\nc: [ ]\n", "a: [[1, 2], {x: y}, 'q', \"r\"]\n", "a: [-1, -x]\n",
	"a: {\"b\":1, 'c': [2]}\n", "a: [b: 1]\n", "a: {b}\n", "a: {b: }\n", "a: [1, 2,]\n", "a: [1,\n  2]\n",
	"a: 'x'\nb: \"y\"  # c\n", "a: 'it''s'\n", "a: \"x\\ty\\n\\\\\\\"\\/\"\n", "a: \"\\u00e9\"\n", "a: 'x\n  y'\n",
	"a: b c  d \n", "a: b # c\n", "a: b#c\n", "a: http://x:80/y\n", "a: 1:30\n", "a: b: c\n", "a: b:\n",
	"a  : 1\n", "'a b': 1\n\"c\": 2\n", "a: -1\nb: --flag\nc: -\n", "a: ~\nb: null\nc: yes\nd: 0x1f\ne: 2e-5\nf: 1.5\n",
	"a: b\n  c\n", "a: b\n  # c\nd: e\n", "a:\n  b\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "<<: {a: 1}\n",
	"a: |\n  x\n", "a: >-\n  x\n", "a: |\n  x", "a: |-\n\n  x\n\n  y\n\n\nb: 1\n", "a: >\n  x\n  y\n\n  z\n",
	"a: |\n    x\n  y\n", "- |\n  x\n- >-\n  y\n", "a: |\n  x\n# c\nb: 1\n", "a: |\n  x\n  # c\n", "a: |\n\n", "a: |\n   \n  x\n",
	"a: |\n  x\n    \n", "a: | # c\n  x\n", "a: |x\n", "a: [1,\n  2]\n", "a: [1,\n2]\n", "a: {\n  b: 1, # c\n  c: 2,\n}\n", "{\n\"a\": 1,\n}\n",
	"a: [1, # c\n  2]\n", "a: [1 # c\n  , 2]\n", "a: {b:\n  1}\n", "a: {b\n  : 1}\n", "a: [\n]\n", "- [\n  1]\n- 2\n", "a:\tb\n", "a: 1\r\n", "\ufeffa: 1\n", "a: \u2028\n", "a: é\n",
	"hello\n", "hello\nworld\n", "[1, 2]\n", "{a: 1}\n", "[1]: 2\n", "- a\nb: 1\n", "a: 1\n- b\n", "a:\n - b\n c: 1\n",
	"a: 1\n b: 2\n", "- a\n - b\n", "- a: 1\n b: 2\n", "a: - b\n", "a: 'x' y\n", "a: [1] x\n", "---x: 1\n", "a: x\n---\n# c\n",
	"a: ,b\n", "a: [a#b]\n", "a: [a #b]\n", "a: [x] # c\n", "a: [x]#c\n", "a: 'x'#c\n", "k: @x\n", "k: `x\n",
	"a:\n\n\n  b: 1\n", "a:    \n  - 1\n", strings.Repeat("k: v\n", 3) + "---\n" + strings.Repeat("- x\n", 3),
	"a: [" + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "]\n",
}

// fastInputs returns the inputs TestYAMLFastMatchesFull compares on
// besides the corpus: the snippets above, the edit cases' inputs and the
// benchmark fixtures.
func fastInputs(t *testing.T) map[string][]byte {
	in := caseInputs(t)
	for i, s := range fastFullSnippets {
		in[fmt.Sprintf("snippet %d %q", i, s)] = []byte(s)
	}
	return in
}

// compareFastFull parses data with the fast reader and, when it takes the
// file, with the full path, and fails unless both give the same
// documents. It reports whether the fast reader took the file.
func compareFastFull(t testing.TB, name string, data []byte, lim Limits) bool {
	t.Helper()
	lim = lim.withDefaults()
	fast := newFile("f.yaml", data, FormatYAML)
	if invalidUTF8(data) >= 0 || !parseYAMLFast(fast, lim) {
		return false
	}
	full := newFile("f.yaml", data, FormatYAML)
	if err := parseYAMLFull(full, lim); err != nil {
		t.Fatalf("%s: the fast reader took a file the full path rejects: %v\n%s", name, err, dumpDocs(fast.Docs))
	}
	if !reflect.DeepEqual(fast.Docs, full.Docs) {
		a, b := strings.Split(dumpDocs(fast.Docs), "\n"), strings.Split(dumpDocs(full.Docs), "\n")
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("%s: the fast reader and the full path disagree from line %d of their dumps\nfast: %s\nfull: %s",
			name, i+1, strings.Join(a[i:min(i+3, len(a))], "\n      "), strings.Join(b[i:min(i+3, len(b))], "\n      "))
	}
	return true
}

func TestYAMLFastMatchesFull(t *testing.T) {
	took, inputs := 0, fastInputs(t)
	for name, data := range inputs {
		if compareFastFull(t, name, data, Limits{}) {
			took++
		}
	}
	// The corpus: the fast reader must agree wherever it reads, and must
	// read most of it, or it has stopped earning its keep.
	var yamls, fast int
	for _, p := range corpusFiles(t) {
		if filepath.Ext(p) == ".json" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		yamls++
		if compareFastFull(t, p, data, Limits{}) {
			fast++
		}
	}
	t.Logf("fast reader took %d of %d other inputs, %d of %d corpus YAML files", took, len(inputs), fast, yamls)
	if fast*10 < yamls*8 {
		t.Errorf("the fast reader took only %d of %d corpus YAML files; want at least 80%%", fast, yamls)
	}
}

// TestYAMLFastGivesUp checks inputs the fast reader must leave to the
// full path, because it would read them differently or not see an error.
func TestYAMLFastGivesUp(t *testing.T) {
	for _, s := range []string{
		"a: b\n  c\n", "a: b: c\n", "a: 'x\n  y'\n", "a: &x 1\nb: *x\n", "a: |+\n  x\n", "a: |2\n  x\n", "a: >\n  x\n   y\n", "? a\n: b\n", "a:\tb\n",
		"a: 1\r\n", "a: \"\\u00e9\"\n", "<<: {a: 1}\n", "- a\nb: 1\n", "a: 1\n b: 2\n", "a: [1,\n  b\n  c]\n", "a: {b}\n",
		"a: 1\n---\nb: 2\n...\n", "%YAML 1.1\n---\na: 1\n", "a: - b\n", "[1]: 2\n", "a: [b: 1]\n", "hello\nworld\n",
	} {
		f := newFile("f.yaml", []byte(s), FormatYAML)
		if parseYAMLFast(f, DefaultLimits()) {
			t.Errorf("%q: the fast reader took it:\n%s", s, dumpDocs(f.Docs))
		}
		if f.Docs != nil {
			t.Errorf("%q: the fast reader left documents behind after giving up", s)
		}
	}
}

// TestYAMLFastLimits checks that the fast reader leaves a file over the
// depth or node limit to the full path, which reports it.
func TestYAMLFastLimits(t *testing.T) {
	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10) + "\n"
	if _, err := ParseYAML("f.yaml", []byte(deep), Limits{MaxDepth: 5}); err == nil || !strings.Contains(err.Error(), "nesting depth") {
		t.Errorf("depth: got %v", err)
	}
	many := strings.Repeat("- 1\n", 50)
	if _, err := ParseYAML("f.yaml", []byte(many), Limits{MaxNodes: 20}); err == nil || !strings.Contains(err.Error(), "more than 20 nodes") {
		t.Errorf("nodes: got %v", err)
	}
}

func FuzzYAMLFast(f *testing.F) {
	addSeeds(f, func(d []byte) { f.Add(d) })
	for _, s := range fastFullSnippets {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareFastFull(t, "input", data, fuzzLimits)
	})
}

func dumpDocs(docs []*Document) string {
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "doc %d %v-%v\n", d.Index, d.Start, d.End)
		dumpNode(&b, d.Root, "  ")
	}
	return b.String()
}

func dumpNode(b *strings.Builder, n *Node, ind string) {
	if n == nil {
		b.WriteString(ind + "nil\n")
		return
	}
	fmt.Fprintf(b, "%skind=%d %v-%v flow=%v style=%d tag=%q text=%q value=%#v\n", ind, n.Kind, n.Start, n.End, n.Flow, n.Style, n.Tag, n.Text, n.Value)
	for _, e := range n.Entries {
		dumpNode(b, e.Key, ind+"  key ")
		dumpNode(b, e.Value, ind+"  val ")
	}
	for _, it := range n.Items {
		dumpNode(b, it, ind+"  - ")
	}
}
