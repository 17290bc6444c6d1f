package edit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

func cand(idx int, edits ...finding.Edit) Candidate {
	return Candidate{FindingIndex: idx, Fix: finding.Fix{Message: "fix", Edits: edits}}
}

// skipView is what a test compares of a Skipped.
type skipView struct {
	Finding       int
	Reason        string
	ConflictsWith int
	Bug           Problem
}

func TestMerge(t *testing.T) {
	// offsets: "a: 1\n" 0-5, "b: 2\n" 5-10, "c: 3\n" 10-15
	const data = "a: 1\nb: 2\nc: 3\n"
	other := finding.Edit{File: "other.yaml", Start: 0, End: 0, NewText: "x"}
	tests := []struct {
		name        string
		cands       []Candidate
		wantApplied []int
		wantSkipped []skipView
		want        string
	}{
		{name: "nothing", want: data},
		{
			name:        "independent fixes",
			cands:       []Candidate{cand(0, ed(3, 4, "10")), cand(1, ed(13, 14, "30"))},
			wantApplied: []int{0, 1},
			want:        "a: 10\nb: 2\nc: 30\n",
		},
		{
			name:        "conflict keeps the first",
			cands:       []Candidate{cand(0, ed(8, 9, "20")), cand(1, ed(5, 10, ""))},
			wantApplied: []int{0},
			wantSkipped: []skipView{{Finding: 1, Reason: "conflicts with the fix for finding 0", ConflictsWith: 0}},
			want:        "a: 1\nb: 20\nc: 3\n",
		},
		{
			name: "a skipped fix applies none of its edits",
			cands: []Candidate{
				cand(4, ed(13, 14, "30")),
				cand(7, ed(3, 4, "10"), ed(12, 14, ": 9")),
			},
			wantApplied: []int{4},
			wantSkipped: []skipView{{Finding: 7, Reason: "conflicts with the fix for finding 4", ConflictsWith: 4}},
			want:        "a: 1\nb: 2\nc: 30\n",
		},
		{
			name:        "identical edits count once",
			cands:       []Candidate{cand(0, ed(8, 9, "20")), cand(1, ed(8, 9, "20"))},
			wantApplied: []int{0, 1},
			want:        "a: 1\nb: 20\nc: 3\n",
		},
		{
			name:        "identical edit plus a new one",
			cands:       []Candidate{cand(0, ed(8, 9, "20")), cand(1, ed(8, 9, "20"), ed(0, 0, "# top\n"))},
			wantApplied: []int{0, 1},
			want:        "# top\na: 1\nb: 20\nc: 3\n",
		},
		{
			name:        "same range, other text conflicts",
			cands:       []Candidate{cand(0, ed(8, 9, "20")), cand(1, ed(8, 9, "21"))},
			wantApplied: []int{0},
			wantSkipped: []skipView{{Finding: 1, Reason: "conflicts with the fix for finding 0", ConflictsWith: 0}},
			want:        "a: 1\nb: 20\nc: 3\n",
		},
		{
			name:        "insertions at one offset from two fixes keep finding order",
			cands:       []Candidate{cand(0, ed(15, 15, "d: 4\n")), cand(1, ed(15, 15, "e: 5\n"))},
			wantApplied: []int{0, 1},
			want:        data + "d: 4\ne: 5\n",
		},
		{
			name:        "insertion inside an accepted replacement conflicts",
			cands:       []Candidate{cand(0, ed(5, 10, "")), cand(1, ed(7, 7, " "))},
			wantApplied: []int{0},
			wantSkipped: []skipView{{Finding: 1, Reason: "conflicts with the fix for finding 0", ConflictsWith: 0}},
			want:        "a: 1\nc: 3\n",
		},
		{
			name: "insertion next to a deduplicated insertion conflicts",
			cands: []Candidate{
				cand(0, ed(15, 15, "d: 4\n")),
				cand(1, ed(15, 15, "z: 0\n"), ed(15, 15, "d: 4\n")),
			},
			wantApplied: []int{0},
			wantSkipped: []skipView{{Finding: 1, Reason: "conflicts with the fix for finding 0", ConflictsWith: 0}},
			want:        data + "d: 4\n",
		},
		{
			name:        "edits for other files are ignored",
			cands:       []Candidate{cand(0, other, ed(3, 4, "10"))},
			wantApplied: []int{0},
			want:        "a: 10\nb: 2\nc: 3\n",
		},
		{
			name:        "fix without edits for the file",
			cands:       []Candidate{cand(2, other)},
			wantSkipped: []skipView{{Finding: 2, Reason: "the fix has no edits for f.yaml", ConflictsWith: -1}},
			want:        data,
		},
		{
			name:        "invalid fix is a bug, others still apply",
			cands:       []Candidate{cand(0, ed(3, 99, "")), cand(1, ed(3, 4, "10"))},
			wantApplied: []int{1},
			wantSkipped: []skipView{{
				Finding:       0,
				Reason:        `the fix for finding 0 is invalid: invalid edit in fix "fix": edit 0 [3,99) of f.yaml: offset out of range (offset 99)`,
				ConflictsWith: -1,
				Bug:           ErrOutOfRange,
			}},
			want: "a: 10\nb: 2\nc: 3\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied, skipped, out, err := Merge("f.yaml", []byte(data), tc.cands)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			var gotApplied []int
			for _, c := range applied {
				gotApplied = append(gotApplied, c.FindingIndex)
			}
			var gotSkipped []skipView
			for _, s := range skipped {
				v := skipView{Finding: s.Candidate.FindingIndex, Reason: s.Reason, ConflictsWith: s.ConflictsWith}
				if s.Err != nil {
					var ie *InvalidEditError
					if !errors.As(s.Err, &ie) {
						t.Errorf("skip error %T is not *InvalidEditError", s.Err)
					}
					v.Bug = ie.Problem
				}
				gotSkipped = append(gotSkipped, v)
			}
			if diff := cmp.Diff(tc.wantApplied, gotApplied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, gotSkipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
