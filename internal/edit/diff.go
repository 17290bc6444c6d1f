package edit

import (
	"bytes"
	"fmt"
	"strings"
)

// Line-diff operations.
const (
	opEqual  = ' '
	opDelete = '-'
	opInsert = '+'
)

// diffWork bounds the Myers search: the edit distance it may explore is
// at most diffWork / (lines in the middle), and never more than maxDiffD.
// Beyond that the changed middle is shown as one delete-all, insert-all
// hunk, which is still a correct diff.
const (
	diffWork = 50_000_000
	maxDiffD = 1000
)

// Unified returns a unified diff from old to new, in the shape of
// `diff -u`: "--- oldName" and "+++ newName" header lines (the caller
// picks them, e.g. "a/path" and "b/path"), then hunks headed
// "@@ -l,n +l,n @@" with context unchanged lines around each change
// (negative context counts as 0). Lines are compared with their line
// ends, so a change from LF to CRLF shows; a last line without a newline
// is followed by "\ No newline at end of file". Unified returns "" when
// old and new are equal. The output is accepted by `patch -p1` and
// `git apply` (file names must not contain tabs or newlines; with context
// 0, git apply needs --unidiff-zero).
func Unified(oldName, newName string, oldText, newText []byte, context int) string {
	return unified(oldName, newName, oldText, newText, context, maxDiffD)
}

func unified(oldName, newName string, oldText, newText []byte, context, maxD int) string {
	if bytes.Equal(oldText, newText) {
		return ""
	}
	context = max(context, 0)
	a, b := splitLines(oldText), splitLines(newText)
	ops := diffLines(a, b, maxD)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	// lineA[i], lineB[i]: lines of a and b consumed before ops[i].
	lineA := make([]int, len(ops)+1)
	lineB := make([]int, len(ops)+1)
	for i, op := range ops {
		lineA[i+1], lineB[i+1] = lineA[i], lineB[i]
		if op != opInsert {
			lineA[i+1]++
		}
		if op != opDelete {
			lineB[i+1]++
		}
	}
	for start := 0; start < len(ops); {
		first := nextChange(ops, start)
		if first == len(ops) {
			break
		}
		lo := max(start, first-context)
		hi := first
		for {
			for hi < len(ops) && ops[hi] != opEqual {
				hi++
			}
			next := nextChange(ops, hi)
			if next == len(ops) || next-hi > 2*context {
				hi = min(hi+context, len(ops))
				break
			}
			hi = next
		}
		writeHunk(&out, ops[lo:hi], a[lineA[lo]:lineA[hi]], b[lineB[lo]:lineB[hi]], lineA[lo], lineB[lo])
		start = hi
	}
	return out.String()
}

// nextChange returns the index of the first non-equal op at or after i,
// or len(ops).
func nextChange(ops []byte, i int) int {
	for i < len(ops) && ops[i] == opEqual {
		i++
	}
	return i
}

// writeHunk writes one hunk; a and b are the lines it covers, starting
// after line offA of the old file and offB of the new.
func writeHunk(out *strings.Builder, ops []byte, a, b []string, offA, offB int) {
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(offA, len(a)), hunkRange(offB, len(b)))
	i, j := 0, 0
	for _, op := range ops {
		var line string
		switch op {
		case opEqual:
			line = a[i]
			i++
			j++
		case opDelete:
			line = a[i]
			i++
		case opInsert:
			line = b[j]
			j++
		}
		out.WriteByte(op)
		out.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats one side of a hunk header as diff -u does: "l,n";
// "l" when n is 1; and for no lines, the line before the hunk with ",0".
func hunkRange(off, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", off)
	case 1:
		return fmt.Sprintf("%d", off+1)
	}
	return fmt.Sprintf("%d,%d", off+1, n)
}

// splitLines splits data after each '\n'; each line keeps its line end,
// and a last line without one is kept as is.
func splitLines(data []byte) []string {
	var lines []string
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		lines = append(lines, string(data[:n]))
		data = data[n:]
	}
	return lines
}

// diffLines returns an edit script turning a into b: one op per equal
// pair, deleted line of a or inserted line of b, deletions before
// insertions within a change. It trims the common prefix and suffix and
// runs Myers' O(ND) search on the rest; if that needs more than maxD
// edits (or the work bound), the rest becomes one delete-all, insert-all
// change.
func diffLines(a, b []string, maxD int) []byte {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]byte, 0, len(a)+len(b))
	ops = append(ops, bytes.Repeat([]byte{opEqual}, pre)...)
	midA, midB := a[pre:len(a)-suf], b[pre:len(b)-suf]

	// Compare small integers, not strings.
	ids := make(map[string]int, len(midA)+len(midB))
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := intern(midA), intern(midB)
	if total := len(ia) + len(ib); total > 0 {
		maxD = min(maxD, max(diffWork/total, 1))
	}
	mid, ok := myers(ia, ib, maxD)
	if !ok {
		mid = append(bytes.Repeat([]byte{opDelete}, len(ia)), bytes.Repeat([]byte{opInsert}, len(ib))...)
	}
	ops = append(ops, mid...)
	return append(ops, bytes.Repeat([]byte{opEqual}, suf)...)
}

// myers finds a shortest edit script from a to b with the greedy forward
// algorithm of E. W. Myers, "An O(ND) Difference Algorithm and Its
// Variations" (Algorithmica 1, 1986), keeping V for each step (O(D²)
// memory) to trace the path back. It gives up (false) when the distance
// exceeds maxD.
func myers(a, b []int, maxD int) ([]byte, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxD)
	off := limit + 1
	v := make([]int, 2*limit+3) // v[off+k]: furthest x on diagonal k
	var trace [][]int           // trace[d]: v[-d..d] before step d
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insert b[y-1]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x-1]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the saved V arrays from (n, m) back to (0, 0) and
// returns the ops in forward order, deletions before insertions.
func backtrack(trace [][]int, n, m int) []byte {
	var rev []byte
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, opEqual)
			x--
			y--
		}
		if pk == k+1 {
			rev = append(rev, opInsert)
		} else {
			rev = append(rev, opDelete)
		}
		x, y = px, py
	}
	for x > 0 {
		rev = append(rev, opEqual)
		x--
	}
	ops := make([]byte, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return normalizeChanges(ops)
}

// normalizeChanges reorders each run of changes so that its deletions
// come before its insertions, as diff -u prints them.
func normalizeChanges(ops []byte) []byte {
	for i := 0; i < len(ops); {
		if ops[i] == opEqual {
			i++
			continue
		}
		j, dels := i, 0
		for j < len(ops) && ops[j] != opEqual {
			if ops[j] == opDelete {
				dels++
			}
			j++
		}
		for k := i; k < j; k++ {
			if k-i < dels {
				ops[k] = opDelete
			} else {
				ops[k] = opInsert
			}
		}
		i = j
	}
	return ops
}
