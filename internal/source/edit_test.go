package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/golden"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/gpulint/gpulint/internal/finding"
)

// editCase is one testdata/edits/*.txtar file. Its comment may hold a line
// "flags: crlf nofinalnewline" that turns the input and want into CRLF
// text or drops their final line break (txtar sections always end in one).
type editCase struct {
	name      string
	archive   *txtar.Archive
	inputName string
	input     []byte
	doc       int
	ops       []Op
	crlf      bool
	noFinalNL bool
}

func loadEditCase(t *testing.T, path string) editCase {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := editCase{name: filepath.Base(path), archive: a}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if flags, ok := strings.CutPrefix(line, "flags:"); ok {
			for _, fl := range strings.Fields(flags) {
				switch fl {
				case "crlf":
					c.crlf = true
				case "nofinalnewline":
					c.noFinalNL = true
				default:
					t.Fatalf("unknown flag %q", fl)
				}
			}
		}
	}
	for _, file := range a.Files {
		switch {
		case strings.HasPrefix(file.Name, "input"):
			c.inputName, c.input = file.Name, c.toTest(file.Data)
		case file.Name == "ops":
			c.doc, c.ops, err = parseOps(string(file.Data))
			if err != nil {
				t.Fatalf("ops: %v", err)
			}
		}
	}
	if c.input == nil || c.ops == nil {
		t.Fatal("case needs an input.* and an ops section")
	}
	return c
}

// toTest applies the case's flags to text from the archive.
func (c editCase) toTest(b []byte) []byte {
	if c.noFinalNL {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	if c.crlf {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	return b
}

// toArchive undoes toTest.
func (c editCase) toArchive(b []byte) []byte {
	if c.crlf {
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	if c.noFinalNL {
		b = append(b, '\n')
	}
	return b
}

// parseOps reads lines "set PATH = JSON", "remove PATH" and "doc N".
// PATH is dotted keys ("a.b"), quoted keys ("\"nvidia.com/gpu\"") and
// indices ("[0]").
func parseOps(s string) (int, []Op, error) {
	doc := 0
	ops := []Op{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "doc":
			n, err := strconv.Atoi(rest)
			if err != nil {
				return 0, nil, err
			}
			doc = n
		case "set":
			p, v, ok := strings.Cut(rest, " = ")
			if !ok {
				return 0, nil, fmt.Errorf("set needs ' = ': %q", line)
			}
			path, err := parsePath(p)
			if err != nil {
				return 0, nil, err
			}
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			var val any
			if err := dec.Decode(&val); err != nil {
				return 0, nil, fmt.Errorf("value %q: %w", v, err)
			}
			ops = append(ops, Op{Kind: Set, Path: path, Value: val})
		case "remove":
			path, err := parsePath(rest)
			if err != nil {
				return 0, nil, err
			}
			ops = append(ops, Op{Kind: Remove, Path: path})
		default:
			return 0, nil, fmt.Errorf("unknown op %q", line)
		}
	}
	return doc, ops, nil
}

func parsePath(s string) ([]any, error) {
	var path []any
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '.':
			i++
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ in %q", s)
			}
			n, err := strconv.Atoi(s[i+1 : i+end])
			if err != nil {
				return nil, err
			}
			path = append(path, n)
			i += end + 1
		case c == '"':
			var k string
			dec := json.NewDecoder(strings.NewReader(s[i:]))
			if err := dec.Decode(&k); err != nil {
				return nil, fmt.Errorf("key in %q: %w", s, err)
			}
			path = append(path, k)
			i += int(dec.InputOffset())
		default:
			end := strings.IndexAny(s[i:], ".[")
			if end < 0 {
				end = len(s) - i
			}
			path = append(path, s[i:i+end])
			i += end
		}
	}
	return path, nil
}

// checkEdits fails unless es are sorted, non-overlapping, in bounds and
// name the file.
func checkEdits(t *testing.T, file string, data []byte, es []finding.Edit) {
	t.Helper()
	last := 0
	for _, e := range es {
		if e.File != file || e.Start < last || e.End < e.Start || e.End > len(data) {
			t.Fatalf("bad edit %+v (previous ended at %d, data has %d bytes)", e, last, len(data))
		}
		last = e.End
	}
}

func TestEditsGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "edits", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		c := loadEditCase(t, path)
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.inputName, c.input, Limits{})
			if err != nil {
				t.Fatalf("input does not parse: %v", err)
			}
			es, err := f.Edits(c.doc, c.ops)
			var got []byte
			if err != nil {
				if errors.Is(err, errEditCheck) {
					t.Errorf("edit failed its own check: %v", err)
				}
				got = []byte("error: " + err.Error() + "\n")
			} else {
				checkEdits(t, c.inputName, c.input, es)
				got = applyTo(c.input, es)
				// Idempotent: the ops now change nothing (except removals
				// of sequence items, which shift the next item in).
				f2, err := Parse(c.inputName, got, Limits{})
				if err != nil {
					t.Fatalf("result does not parse: %v", err)
				}
				if !removesItems(c.ops) {
					again, err := f2.Edits(c.doc, c.ops)
					if err != nil || len(again) > 0 {
						t.Errorf("ops on the result: edits %+v, error %v; want none", again, err)
					}
				}
				got = c.toArchive(got)
			}
			gc := golden.Case{Path: path, Archive: c.archive}
			gc.Want(t, "want", got)
			gc.Save(t)
		})
	}
}

func removesItems(ops []Op) bool {
	for _, op := range ops {
		if _, ok := op.Path[len(op.Path)-1].(int); ok && op.Kind == Remove {
			return true
		}
	}
	return false
}

func TestTrimLines(t *testing.T) {
	tests := []struct {
		name, orig, newText string
		start, end          int
		want                finding.Edit
	}{
		{"same first and last lines", "a\nb\nc\n", "a\nB\nc\n", 0, 6, finding.Edit{Start: 2, End: 4, NewText: "B\n"}},
		{"no line break", "fp16", "bf16", 0, 4, finding.Edit{Start: 0, End: 4, NewText: "bf16"}},
		{"inserted line", "x\ny\n", "x\nnew\ny\n", 0, 4, finding.Edit{Start: 2, End: 2, NewText: "new\n"}},
		{"shared tail only", "0", "ǧ0", 0, 1, finding.Edit{Start: 0, End: 1, NewText: "ǧ0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := trimLines([]byte(tc.orig), finding.Edit{Start: tc.start, End: tc.end, NewText: tc.newText})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if a, b := string(applyTo([]byte(tc.orig), []finding.Edit{got})), tc.orig[:tc.start]+tc.newText+tc.orig[tc.end:]; a != b {
				t.Errorf("trimmed edit gives %q, want %q", a, b)
			}
		})
	}
}

// TestEditsLongKeys checks YAML's limit on keys written without '?': the
// ':' must come within 1024 characters of the key's start, so longer keys
// are refused rather than written into a file that no longer parses.
func TestEditsLongKeys(t *testing.T) {
	long, fits := strings.Repeat("k", 1100), strings.Repeat("k", 1000)
	tests := []struct {
		name, in string
		op       Op
		wantErr  bool
	}{
		{"existing key without a colon", "{" + long + ", b: 1}\n", Op{Kind: Set, Path: []any{long}, Value: 1}, true},
		{"new block key", "a: 1\n", Op{Kind: Set, Path: []any{long}, Value: 1}, true},
		{"new flow key", "{a: 1}\n", Op{Kind: Set, Path: []any{long, "x"}, Value: 1}, true},
		{"key inside the value", "a: 1\n", Op{Kind: Set, Path: []any{"b"}, Value: map[string]any{"c": []any{map[string]any{long: 1}}}}, true},
		{"long string value", "a: 1\n", Op{Kind: Set, Path: []any{"b"}, Value: []any{long}}, false},
		{"key within the limit", "{" + fits + ", b: 1}\n", Op{Kind: Set, Path: []any{fits}, Value: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(tc.in), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Edits(0, []Op{tc.op})
			if got := errors.Is(err, errLongKey); got != tc.wantErr {
				t.Errorf("refused for a long key: %v, want %v (error %v)", got, tc.wantErr, err)
			}
			if !tc.wantErr && err != nil {
				t.Errorf("edit failed: %v", err)
			}
		})
	}
}
