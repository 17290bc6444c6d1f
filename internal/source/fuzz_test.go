package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// fuzzLimits keep fuzz inputs cheap.
var fuzzLimits = Limits{MaxBytes: 1 << 16, MaxDepth: 64, MaxNodes: 5000}

// addSeeds adds the edit-case inputs, the benchmark fixtures and a few
// tricky snippets to a fuzz corpus.
func addSeeds(f *testing.F, add func(data []byte)) {
	for _, data := range caseInputs(f) {
		add(data)
	}
	for _, s := range []string{
		"", "{}", "[]", "{\"a\": [1, 2.5, true, null, \"\\u00e9\"]}", "\ufeff{\"a\": 1}",
		"{\n\t\"a\": 1, // c\n}", "a: &x [1]\nb: *x\nc:\n  <<: {d: 1}\n",
		"a: |\n  x\n\n  y\nb: >-\n  z\n", "--- |2\n   x\n", "k: \"a\\\"\n  b\"\n", "a: 1\r\nb:\r\n- 2\r\n",
		"{a, b: }", "? x\n: y\n", "a: !!int 5\n", billionLaughs(),
	} {
		add([]byte(s))
	}
}

// caseInputs returns the edit cases' inputs and the benchmark fixtures,
// by name.
func caseInputs(tb testing.TB) map[string][]byte {
	in := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join("testdata", "edits", "*.txtar"))
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		for _, file := range a.Files {
			if strings.HasPrefix(file.Name, "input") {
				in[p+":"+file.Name] = file.Data
			}
		}
	}
	for _, name := range []string{"ds_config.json", "lws.yaml"} {
		p := filepath.Join("testdata", "bench", name)
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		in[p] = data
	}
	return in
}

// checkErr fails unless err is nil or a *Error whose position is in data.
func checkErr(t *testing.T, f *File, err error) {
	t.Helper()
	if f == nil {
		t.Fatal("nil File")
	}
	if err == nil {
		return
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *Error", err)
	}
	if pe.Pos.Offset < 0 || pe.Pos.Offset > len(f.Data) || (f.Lines != nil && f.PosAt(pe.Pos.Offset) != pe.Pos) {
		t.Fatalf("error position %+v is not a valid position (want %+v)", pe.Pos, f.PosAt(pe.Pos.Offset))
	}
}

func FuzzParseJSON(f *testing.F) {
	addSeeds(f, func(d []byte) { f.Add(d) })
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseJSON("f.json", data, fuzzLimits)
		checkErr(t, file, err)
		checkTree(t, file)
		if err == nil {
			if _, err := file.Docs[0].Root.ToValue(fuzzLimits.MaxNodes); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzParseYAML(f *testing.F) {
	addSeeds(f, func(d []byte) { f.Add(d) })
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseYAML("f.yaml", data, fuzzLimits)
		checkErr(t, file, err)
		checkTree(t, file)
		for _, d := range file.Docs {
			// Aliases may expand past MaxNodes here; only the budget matters.
			if _, err := d.Root.ToValue(fuzzLimits.MaxNodes); err != nil && !errors.Is(err, ErrTooManyNodes) && !strings.Contains(err.Error(), "not a scalar") {
				t.Fatal(err)
			}
		}
	})
}

// fuzzPaths lists paths to existing nodes of n (at most max), plus paths
// one step past them (a new key, an appended index).
func fuzzPaths(n *Node, prefix []any, max int, out *[][]any) {
	if n == nil || len(*out) >= max {
		return
	}
	*out = append(*out, append([]any(nil), prefix...))
	switch n.Kind {
	case MapNode:
		*out = append(*out, append(append([]any(nil), prefix...), "new_key"))
		for _, e := range n.Entries {
			if e.Key.Kind == ScalarNode {
				fuzzPaths(e.Value, append(append([]any(nil), prefix...), e.Key.Text), max, out)
			}
		}
	case SeqNode:
		*out = append(*out, append(append([]any(nil), prefix...), len(n.Items)))
		for i, it := range n.Items {
			fuzzPaths(it, append(append([]any(nil), prefix...), i), max, out)
		}
	}
}

func FuzzEdits(f *testing.F) {
	addSeeds(f, func(d []byte) {
		f.Add(d, true, uint16(1), uint8(0), "bf16")
		f.Add(d, false, uint16(3), uint8(1), "x y")
	})
	f.Fuzz(func(t *testing.T, data []byte, yaml bool, pick uint16, kind uint8, s string) {
		name := "f.json"
		if yaml {
			name = "f.yaml"
		}
		file, err := Parse(name, data, fuzzLimits)
		if err != nil || len(file.Docs) == 0 {
			return
		}
		doc := int(pick) % len(file.Docs)
		var paths [][]any
		fuzzPaths(file.Docs[doc].Root, nil, 200, &paths)
		if len(paths) == 0 {
			paths = [][]any{{"new_key"}}
		}
		path := paths[int(pick)%len(paths)]
		values := []any{s, int64(len(s)), len(s)%2 == 0, 0.25, nil, map[string]any{"k": s}, []any{s, 1}}
		op := Op{Kind: Set, Path: path, Value: values[int(kind)%len(values)]}
		if kind >= 200 && len(path) > 0 {
			op = Op{Kind: Remove, Path: path}
		}
		es, err := file.Edits(doc, []Op{op})
		if errors.Is(err, errEditCheck) {
			t.Fatalf("%s %v on %q: %v", op.Kind, op.Path, data, err)
		}
		if err != nil {
			return
		}
		out := applyTo(data, es)
		got, err := Parse(name, out, Limits{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatalf("result does not parse: %v\n%q", err, out)
		}
		if ok, err := holds(got.Docs[doc].Root, op.Kind, op.Path, mustNorm(t, op.Value)); err != nil || (!ok && !(op.Kind == Remove && isIndex(op.Path))) {
			t.Fatalf("result does not hold %s %v: %v\n%q", op.Kind, op.Path, err, out)
		}
	})
}

func mustNorm(t *testing.T, v any) any {
	n, err := normValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func isIndex(path []any) bool {
	_, ok := path[len(path)-1].(int)
	return ok
}
