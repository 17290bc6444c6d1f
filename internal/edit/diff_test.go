package edit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s)
			continue
		}
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

type diffCase struct {
	name     string
	old, new string
	context  int
	want     string // hunks only, after the two header lines
}

func diffCases() []diffCase {
	return []diffCase{
		{name: "equal", old: "a\nb\n", new: "a\nb\n", context: 3, want: ""},
		{name: "both empty", old: "", new: "", context: 3, want: ""},
		{name: "change one line", old: "a\nb\nc\n", new: "a\nB\nc\n", context: 3,
			want: "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{name: "add final newline", old: "a\nb", new: "a\nb\n", context: 3,
			want: "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{name: "drop final newline", old: "a\nb\n", new: "a\nb", context: 3,
			want: "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{name: "change last line without newline", old: "a\nb", new: "a\nc", context: 3,
			want: "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{name: "empty old", old: "", new: "x\ny\n", context: 3, want: "@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{name: "empty new", old: "x\n", new: "", context: 3, want: "@@ -1 +0,0 @@\n-x\n"},
		{name: "empty old, new without newline", old: "", new: "x", context: 3,
			want: "@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"},
		{name: "crlf value change", old: "a: 1\r\nb: 2\r\n", new: "a: 1\r\nb: 3\r\n", context: 3,
			want: "@@ -1,2 +1,2 @@\n a: 1\r\n-b: 2\r\n+b: 3\r\n"},
		{name: "lf to crlf shows", old: "a\n", new: "a\r\n", context: 3, want: "@@ -1 +1 @@\n-a\n+a\r\n"},
		{name: "two hunks far apart", old: numbered(10, nil), new: numbered(10, map[int]string{2: "two\n", 9: "nine\n"}), context: 1,
			want: "@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -8,3 +8,3 @@\n 8\n-9\n+nine\n 10\n"},
		{name: "close changes share a hunk", old: numbered(10, nil), new: numbered(10, map[int]string{2: "two\n", 4: "four\n"}), context: 1,
			want: "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n-4\n+four\n 5\n"},
		// As diff -u: a gap of twice the context joins hunks, one more splits.
		{name: "gap of twice the context joins", old: numbered(10, nil), new: numbered(10, map[int]string{2: "two\n", 5: "five\n"}), context: 1,
			want: "@@ -1,6 +1,6 @@\n 1\n-2\n+two\n 3\n 4\n-5\n+five\n 6\n"},
		{name: "gap of twice the context plus one splits", old: numbered(10, nil), new: numbered(10, map[int]string{2: "two\n", 6: "six\n"}), context: 1,
			want: "@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -5,3 +5,3 @@\n 5\n-6\n+six\n 7\n"},
		{name: "context zero", old: numbered(10, nil), new: numbered(10, map[int]string{5: "five\n"}), context: 0,
			want: "@@ -5 +5 @@\n-5\n+five\n"},
		{name: "context zero insertion", old: "1\n2\n", new: "1\nx\n2\n", context: 0, want: "@@ -1,0 +2 @@\n+x\n"},
		{name: "context zero deletion", old: "1\nx\n2\n", new: "1\n2\n", context: 0, want: "@@ -2 +1,0 @@\n-x\n"},
		{name: "negative context is zero", old: "1\n2\n3\n", new: "1\nB\n3\n", context: -5, want: "@@ -2 +2 @@\n-2\n+B\n"},
		{name: "insert at top", old: "a\nb\n", new: "# c\na\nb\n", context: 3, want: "@@ -1,2 +1,3 @@\n+# c\n a\n b\n"},
		{name: "delete several", old: numbered(6, nil), new: "1\n6\n", context: 1,
			want: "@@ -1,6 +1,2 @@\n 1\n-2\n-3\n-4\n-5\n 6\n"},
		{name: "interleaved keeps deletions first", old: "a\nb\nc\n", new: "x\nb\ny\n", context: 3,
			want: "@@ -1,3 +1,3 @@\n-a\n+x\n b\n-c\n+y\n"},
	}
}

func TestUnified(t *testing.T) {
	for _, tc := range diffCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := Unified("a/f.yaml", "b/f.yaml", []byte(tc.old), []byte(tc.new), tc.context)
			want := ""
			if tc.want != "" {
				want = "--- a/f.yaml\n+++ b/f.yaml\n" + tc.want
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Unified (-want +got):\n%s", diff)
			}
		})
	}
}

// randomPairs returns deterministic pairs of similar texts: lines from a
// small alphabet (so many lines repeat), some CRLF, some without a final
// newline.
func randomPairs(n int) [][2]string {
	r := rand.New(rand.NewPCG(1, 2))
	text := func(lines int) string {
		var b strings.Builder
		for range lines {
			b.WriteString([]string{"a", "b", "c", "key: 1", "  - x", ""}[r.IntN(6)])
			if r.IntN(8) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		s := b.String()
		if r.IntN(3) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	var pairs [][2]string
	for range n {
		old := text(r.IntN(30))
		lines := splitLinesForTest([]byte(old))
		for range r.IntN(6) {
			switch i := r.IntN(len(lines) + 1); r.IntN(3) {
			case 0:
				lines = append(lines[:i], append([]string{"new\n"}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			case 2:
				if i < len(lines) {
					lines[i] = "changed\n"
				}
			}
		}
		pairs = append(pairs, [2]string{old, strings.Join(lines, "")})
	}
	return pairs
}

// TestUnifiedApplies checks that the diffs rebuild the new text with the
// in-test applier, GNU patch and git apply (the last two when on PATH).
func TestUnifiedApplies(t *testing.T) {
	type pair struct {
		name     string
		old, new string
		maxD     int
	}
	var pairs []pair
	for _, tc := range diffCases() {
		pairs = append(pairs, pair{tc.name, tc.old, tc.new, maxDiffD})
		// Forcing the whole-middle fallback must still give a valid diff.
		pairs = append(pairs, pair{tc.name + " fallback", tc.old, tc.new, 0})
	}
	for i, p := range randomPairs(40) {
		pairs = append(pairs, pair{fmt.Sprintf("random %d", i), p[0], p[1], maxDiffD})
	}
	for _, tool := range []string{"applier", "patch", "git"} {
		t.Run(tool, func(t *testing.T) {
			for _, p := range pairs {
				t.Run(p.name, func(t *testing.T) {
					for _, context := range []int{0, 3} {
						d := unified("a/a.txt", "b/a.txt", []byte(p.old), []byte(p.new), context, p.maxD)
						if d == "" && p.old == p.new {
							continue
						}
						var got []byte
						if tool == "applier" {
							var err error
							if got, err = applyUnified([]byte(p.old), d); err != nil {
								t.Fatalf("context %d: %v\ndiff:\n%s", context, err, d)
							}
						} else {
							got = applyWithTool(t, tool, []byte(p.old), d, context == 0)
						}
						if diff := cmp.Diff(p.new, string(got)); diff != "" {
							t.Errorf("context %d: patched text (-want +got):\n%s\ndiff:\n%s", context, diff, d)
						}
					}
				})
			}
		})
	}
}

// TestDiffLinesIsShortest compares Myers' edit count with a quadratic
// longest-common-subsequence table.
func TestDiffLinesIsShortest(t *testing.T) {
	for i, p := range randomPairs(200) {
		a, b := splitLinesForTest([]byte(p[0])), splitLinesForTest([]byte(p[1]))
		ops := diffLines(a, b, maxDiffD)
		changes := bytes.Count(ops, []byte{opDelete}) + bytes.Count(ops, []byte{opInsert})
		if want := len(a) + len(b) - 2*lcsLen(a, b); changes != want {
			t.Errorf("pair %d: %d changes, shortest is %d", i, changes, want)
		}
	}
}

func lcsLen(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// TestUnifiedLargeFallsBack diffs two large, entirely different texts:
// the search gives up at its bound and the diff is still correct.
func TestUnifiedLargeFallsBack(t *testing.T) {
	var oldB, newB strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&oldB, "old %d\n", i)
		fmt.Fprintf(&newB, "new %d\n", i)
	}
	oldText, newText := []byte("same\n"+oldB.String()+"tail\n"), []byte("same\n"+newB.String()+"tail\n")
	ops := diffLines(splitLinesForTest(oldText), splitLinesForTest(newText), maxDiffD)
	want := "=" + strings.Repeat("-", 20000) + strings.Repeat("+", 20000) + "="
	got := strings.Map(func(r rune) rune {
		if r == opEqual {
			return '='
		}
		return r
	}, string(ops))
	if got != want {
		t.Errorf("ops are not one delete-all, insert-all change between the equal ends")
	}
	d := Unified("a/a.txt", "b/a.txt", oldText, newText, 3)
	patched, err := applyUnified(oldText, d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(patched, newText) {
		t.Errorf("patched text differs from new text")
	}
}
