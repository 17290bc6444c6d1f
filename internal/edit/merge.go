package edit

import (
	"fmt"

	"github.com/gpulint/gpulint/internal/finding"
)

// Candidate is one fix offered for merging: the fix and the index of the
// finding it belongs to, in the caller's (sorted) list of findings.
type Candidate struct {
	FindingIndex int
	Fix          finding.Fix
}

// Skipped is a candidate Merge did not apply, and why.
type Skipped struct {
	Candidate Candidate
	// Reason is a lower-case phrase for the user, e.g.
	// "conflicts with the fix for finding 3".
	Reason string
	// ConflictsWith is the FindingIndex of the accepted fix this one
	// conflicts with, or -1 when the skip is not a conflict.
	ConflictsWith int
	// Err is non-nil when the fix's own edits are invalid: a bug in the
	// rule that produced it (an *InvalidEditError). Callers should report
	// it as an internal error, not as an ordinary skip.
	Err error
}

// Merge applies the fixes of several findings to data, the current bytes
// of file. It takes candidates in the given order and accepts a fix only
// if all its edits for file are valid (see Validate) and none overlaps an
// edit already accepted; otherwise it skips the fix with a reason. An
// edit identical to an accepted one (same range, same text) is applied
// once and is no conflict. Edits of a fix for other files are ignored, so
// a caller merging a multi-file fix must check that it was applied in
// every file it touches. out is data with the accepted edits applied;
// err is non-nil only if applying them failed, which would be a bug here.
func Merge(file string, data []byte, cands []Candidate) (applied []Candidate, skipped []Skipped, out []byte, err error) {
	var (
		accepted []finding.Edit
		owner    []int // FindingIndex of each accepted edit
	)
	for _, c := range cands {
		var mine []finding.Edit
		for _, e := range c.Fix.Edits {
			if e.File == file {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			skipped = append(skipped, Skipped{Candidate: c, Reason: "the fix has no edits for " + file, ConflictsWith: -1})
			continue
		}
		if verr := Validate(data, file, mine); verr != nil {
			if ie, ok := verr.(*InvalidEditError); ok {
				ie.Fix = c.Fix.Message
			}
			skipped = append(skipped, Skipped{
				Candidate:     c,
				Reason:        fmt.Sprintf("the fix for finding %d is invalid: %v", c.FindingIndex, verr),
				ConflictsWith: -1,
				Err:           verr,
			})
			continue
		}
		fresh, conflict := newEdits(accepted, mine)
		if conflict >= 0 {
			skipped = append(skipped, Skipped{
				Candidate:     c,
				Reason:        fmt.Sprintf("conflicts with the fix for finding %d", owner[conflict]),
				ConflictsWith: owner[conflict],
			})
			continue
		}
		for _, e := range fresh {
			accepted = append(accepted, e)
			owner = append(owner, c.FindingIndex)
		}
		applied = append(applied, c)
	}
	out, err = Apply(data, accepted)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("merge fixes for %s: %w", file, err)
	}
	return applied, skipped, out, nil
}

// newEdits returns the edits of mine not already in accepted and the
// index of the first accepted edit one of them overlaps (-1 if none).
// Each accepted edit stands in for at most one identical edit of mine, so
// a fix that inserts the same text twice still gets both insertions.
// Insertions at one offset from different fixes apply in acceptance
// order.
func newEdits(accepted, mine []finding.Edit) (fresh []finding.Edit, conflict int) {
	used := make([]bool, len(accepted))
	for _, e := range mine {
		dup := false
		for i, a := range accepted {
			if !used[i] && a == e {
				used[i], dup = true, true
				break
			}
		}
		if !dup {
			fresh = append(fresh, e)
		}
	}
	for i, a := range accepted {
		for _, e := range fresh {
			// An accepted insertion that stands in for one of mine fixes
			// its place among insertions at that offset; a new insertion
			// at the same offset could then land on the wrong side of it.
			sameSpot := used[i] && a.Start == a.End && e.Start == e.End && a.Start == e.Start
			if overlaps(a, e) || sameSpot {
				return nil, i
			}
		}
	}
	return fresh, -1
}
