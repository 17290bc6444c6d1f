package edit

import (
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
)

func TestConflict(t *testing.T) {
	fix := func(file string, start, end int) finding.Fix {
		return finding.Fix{Edits: []finding.Edit{{File: file, Start: start, End: end, NewText: "x"}}}
	}
	tests := []struct {
		name string
		a, b finding.Fix
		want bool
	}{
		{"same range", fix("a", 4, 5), fix("a", 4, 5), true},
		{"overlapping ranges", fix("a", 4, 8), fix("a", 6, 9), true},
		{"adjacent ranges", fix("a", 4, 6), fix("a", 6, 9), false},
		{"insertion inside a range", fix("a", 5, 5), fix("a", 4, 8), true},
		{"same bytes, other file", fix("a", 4, 5), fix("b", 4, 5), false},
		{"no edits", finding.Fix{}, fix("a", 4, 5), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Conflict(tc.a, tc.b); got != tc.want {
				t.Errorf("Conflict = %v, want %v", got, tc.want)
			}
		})
	}
}
