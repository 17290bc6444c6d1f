// Package edit validates, merges and applies the text edits that fixes
// carry, renders unified diffs of the result, and writes fixed files
// atomically. An edit that is out of bounds, names another file, splits a
// character or a CRLF line end, or overlaps another edit is a bug in the
// rule that produced it; edit reports it as such and never guesses.
package edit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

// Problem says what is wrong with an invalid edit. Each Problem is an
// error, so callers can test for one with errors.Is(err, edit.ErrOverlap).
type Problem int

// The problems Validate and Apply detect.
const (
	// ErrWrongFile: the edit names a file other than the one being edited.
	ErrWrongFile Problem = iota + 1
	// ErrOutOfRange: Start or End lies outside [0, len(data)].
	ErrOutOfRange
	// ErrReversed: Start is greater than End.
	ErrReversed
	// ErrSplitsRune: Start or End lies inside a UTF-8 encoded character.
	ErrSplitsRune
	// ErrSplitsCRLF: Start or End lies between the \r and \n of a line end.
	ErrSplitsCRLF
	// ErrOverlap: the edit overlaps another edit of the same set.
	ErrOverlap
)

// Error describes the problem in a few lower-case words.
func (p Problem) Error() string {
	switch p {
	case ErrWrongFile:
		return "edit names another file"
	case ErrOutOfRange:
		return "offset out of range"
	case ErrReversed:
		return "start after end"
	case ErrSplitsRune:
		return "offset inside a UTF-8 sequence"
	case ErrSplitsCRLF:
		return `offset between \r and \n`
	case ErrOverlap:
		return "edits overlap"
	}
	return fmt.Sprintf("edit problem %d", int(p))
}

// InvalidEditError reports an invalid edit: a bug in the rule that
// produced it. Validate and Apply fill in where the edit is and what is
// wrong; Rule and Fix are context the caller adds (Merge sets Fix) so the
// message names the culprit.
type InvalidEditError struct {
	Rule    string       // rule id that produced the fix, when known
	Fix     string       // the fix's message, when known
	File    string       // the file being edited
	Index   int          // index of the bad edit in the list that was checked
	Edit    finding.Edit // the bad edit
	Problem Problem      // what is wrong
	// Offset is the offending offset for ErrOutOfRange, ErrSplitsRune and
	// ErrSplitsCRLF.
	Offset int
	// Other and OtherEdit name the edit this one overlaps (ErrOverlap
	// only); Other is -1 otherwise.
	Other     int
	OtherEdit finding.Edit
}

// Error names the rule and fix when known, the edit, and the problem.
func (e *InvalidEditError) Error() string {
	var b strings.Builder
	b.WriteString("invalid edit")
	if e.Rule != "" {
		fmt.Fprintf(&b, " from rule %s", e.Rule)
	}
	if e.Fix != "" {
		fmt.Fprintf(&b, " in fix %q", e.Fix)
	}
	fmt.Fprintf(&b, ": edit %d %s of %s: %s", e.Index, span(e.Edit), e.File, e.Problem)
	switch e.Problem {
	case ErrWrongFile:
		fmt.Fprintf(&b, " (%s)", e.Edit.File)
	case ErrOutOfRange, ErrSplitsRune, ErrSplitsCRLF:
		fmt.Fprintf(&b, " (offset %d)", e.Offset)
	case ErrOverlap:
		fmt.Fprintf(&b, " (edit %d %s)", e.Other, span(e.OtherEdit))
	}
	return b.String()
}

// Unwrap returns the Problem, for errors.Is.
func (e *InvalidEditError) Unwrap() error { return e.Problem }

func span(e finding.Edit) string { return fmt.Sprintf("[%d,%d)", e.Start, e.End) }

// Validate checks edits against data, the current bytes of file: every
// edit names file, 0 <= Start <= End <= len(data), neither offset splits a
// UTF-8 sequence or a CRLF pair, and no two edits overlap. Two insertions
// at one offset do not overlap (they apply in list order), nor does an
// insertion at either end of a replacement. The error is an
// *InvalidEditError for the first problem found.
func Validate(data []byte, file string, edits []finding.Edit) error {
	return check(data, file, true, edits)
}

// Apply returns a copy of data with edits applied. Edits are applied in
// order of Start, then End (so an insertion at the start of a replaced
// range lands before the replacement text); edits with equal ranges keep
// their list order. Apply checks bounds, boundaries and overlaps as
// Validate does (all but the file name) and returns an *InvalidEditError
// rather than a wrong result.
func Apply(data []byte, edits []finding.Edit) ([]byte, error) {
	if err := check(data, "", false, edits); err != nil {
		return nil, err
	}
	order := sortedOrder(edits)
	size := len(data)
	for _, e := range edits {
		size += len(e.NewText) - (e.End - e.Start)
	}
	out := make([]byte, 0, size)
	pos := 0
	for _, i := range order {
		e := edits[i]
		out = append(out, data[pos:e.Start]...)
		out = append(out, e.NewText...)
		pos = e.End
	}
	return append(out, data[pos:]...), nil
}

// check implements Validate and Apply; checkFile turns the file check on.
func check(data []byte, file string, checkFile bool, edits []finding.Edit) error {
	bad := func(i int, p Problem, off int) error {
		return &InvalidEditError{File: file, Index: i, Edit: edits[i], Problem: p, Offset: off, Other: -1}
	}
	for i, e := range edits {
		switch {
		case checkFile && e.File != file:
			return bad(i, ErrWrongFile, 0)
		case e.Start < 0 || e.Start > len(data):
			return bad(i, ErrOutOfRange, e.Start)
		case e.End < 0 || e.End > len(data):
			return bad(i, ErrOutOfRange, e.End)
		case e.Start > e.End:
			return bad(i, ErrReversed, e.Start)
		}
		for _, off := range []int{e.Start, e.End} {
			if splitsRune(data, off) {
				return bad(i, ErrSplitsRune, off)
			}
			if off > 0 && off < len(data) && data[off-1] == '\r' && data[off] == '\n' {
				return bad(i, ErrSplitsCRLF, off)
			}
		}
	}
	order := sortedOrder(edits)
	// Sorted by Start, an edit overlaps an earlier one exactly when it
	// starts before the furthest End seen so far.
	far := -1
	for _, i := range order {
		e := edits[i]
		if far >= 0 && e.Start < edits[far].End {
			err := bad(i, ErrOverlap, 0).(*InvalidEditError)
			err.Other, err.OtherEdit = far, edits[far]
			return err
		}
		if far < 0 || e.End > edits[far].End {
			far = i
		}
	}
	return nil
}

// sortedOrder returns the indices of edits sorted by Start, then End,
// stable.
func sortedOrder(edits []finding.Edit) []int {
	order := make([]int, len(edits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(
			cmp.Compare(edits[a].Start, edits[b].Start),
			cmp.Compare(edits[a].End, edits[b].End),
		)
	})
	return order
}

// splitsRune reports whether off lies strictly inside a valid multi-byte
// UTF-8 sequence. Bytes of invalid sequences count as one character each,
// so offsets around them are fine.
func splitsRune(data []byte, off int) bool {
	if off <= 0 || off >= len(data) || utf8.RuneStart(data[off]) {
		return false
	}
	for back := 1; back < utf8.UTFMax && off-back >= 0; back++ {
		start := off - back
		if utf8.RuneStart(data[start]) {
			_, size := utf8.DecodeRune(data[start:])
			return size > 1 && start+size > off
		}
	}
	return false
}

// overlaps reports whether two edits conflict: their replaced ranges
// share a byte, or one is an insertion strictly inside the other's range.
func overlaps(a, b finding.Edit) bool {
	if max(a.Start, b.Start) < min(a.End, b.End) {
		return true
	}
	inside := func(p int, r finding.Edit) bool { return r.Start < p && p < r.End }
	return (a.Start == a.End && inside(a.Start, b)) || (b.Start == b.End && inside(b.Start, a))
}

// Conflict reports whether two fixes edit overlapping bytes of one file,
// so that at most one of them can be applied.
func Conflict(a, b finding.Fix) bool {
	for _, x := range a.Edits {
		for _, y := range b.Edits {
			if x.File == y.File && overlaps(x, y) {
				return true
			}
		}
	}
	return false
}
