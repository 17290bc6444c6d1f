package edit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

func ed(start, end int, text string) finding.Edit {
	return finding.Edit{File: "f.yaml", Start: start, End: end, NewText: text}
}

func TestValidate(t *testing.T) {
	const ascii = "key: value\n"
	// "é" is 2 bytes (offsets 4-5), "€" 3 bytes (10-12).
	const utf = "ab: é\nc: €\n"
	const crlf = "a: 1\r\nb: 2\r\n"
	tests := []struct {
		name      string
		data      string
		edits     []finding.Edit
		want      Problem // 0: valid
		wantIndex int
		wantOther int
	}{
		{name: "no edits", data: ascii},
		{name: "replace value", data: ascii, edits: []finding.Edit{ed(5, 10, "other")}},
		{name: "insert at start and end", data: ascii, edits: []finding.Edit{ed(0, 0, "# c\n"), ed(11, 11, "x: 1\n")}},
		{name: "empty data insertion", data: "", edits: []finding.Edit{ed(0, 0, "a")}},
		{name: "adjacent replacements", data: ascii, edits: []finding.Edit{ed(5, 8, "x"), ed(0, 5, "y")}},
		{name: "two insertions at one offset", data: ascii, edits: []finding.Edit{ed(3, 3, "a"), ed(3, 3, "b")}},
		{name: "insertion at both ends of a replacement", data: ascii, edits: []finding.Edit{ed(5, 10, "v"), ed(5, 5, "<"), ed(10, 10, ">")}},
		{name: "wrong file", data: ascii, edits: []finding.Edit{ed(0, 1, "x"), {File: "g.yaml", Start: 0, End: 0}},
			want: ErrWrongFile, wantIndex: 1, wantOther: -1},
		{name: "negative start", data: ascii, edits: []finding.Edit{ed(-1, 2, "")}, want: ErrOutOfRange, wantOther: -1},
		{name: "end past data", data: ascii, edits: []finding.Edit{ed(5, 12, "")}, want: ErrOutOfRange, wantOther: -1},
		{name: "start past data", data: ascii, edits: []finding.Edit{ed(12, 12, "")}, want: ErrOutOfRange, wantOther: -1},
		{name: "reversed", data: ascii, edits: []finding.Edit{ed(6, 5, "")}, want: ErrReversed, wantOther: -1},
		{name: "utf8 boundaries fine", data: utf, edits: []finding.Edit{ed(4, 6, "e"), ed(10, 13, "$")}},
		{name: "start inside 2-byte rune", data: utf, edits: []finding.Edit{ed(5, 6, "")}, want: ErrSplitsRune, wantOther: -1},
		{name: "end inside 3-byte rune", data: utf, edits: []finding.Edit{ed(9, 11, "")}, want: ErrSplitsRune, wantOther: -1},
		{name: "invalid utf8 bytes are single units", data: "a\x80\x80b", edits: []finding.Edit{ed(2, 3, "")}},
		{name: "crlf boundary fine", data: crlf, edits: []finding.Edit{ed(3, 4, "2"), ed(6, 6, "c: 3\r\n")}},
		{name: "start between cr and lf", data: crlf, edits: []finding.Edit{ed(5, 6, "")}, want: ErrSplitsCRLF, wantOther: -1},
		{name: "end between cr and lf", data: crlf, edits: []finding.Edit{ed(3, 5, "")}, want: ErrSplitsCRLF, wantOther: -1},
		{name: "lone cr is no pair", data: "a\rb", edits: []finding.Edit{ed(2, 2, "x")}},
		{name: "overlapping replacements", data: ascii, edits: []finding.Edit{ed(0, 4, "x"), ed(3, 6, "y")},
			want: ErrOverlap, wantIndex: 1, wantOther: 0},
		{name: "same range twice", data: ascii, edits: []finding.Edit{ed(5, 10, "x"), ed(5, 10, "x")},
			want: ErrOverlap, wantIndex: 1, wantOther: 0},
		{name: "insertion inside replacement", data: ascii, edits: []finding.Edit{ed(7, 7, "x"), ed(5, 10, "y")},
			want: ErrOverlap, wantIndex: 0, wantOther: 1},
		{name: "overlap with an earlier long edit", data: ascii, edits: []finding.Edit{ed(0, 10, "x"), ed(2, 3, "y"), ed(8, 9, "z")},
			want: ErrOverlap, wantIndex: 1, wantOther: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate([]byte(tc.data), "f.yaml", tc.edits)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("Validate: unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate error = %v, want %v", err, tc.want)
			}
			var ie *InvalidEditError
			if !errors.As(err, &ie) {
				t.Fatalf("Validate error %T is not *InvalidEditError", err)
			}
			if diff := cmp.Diff([]int{tc.wantIndex, tc.wantOther}, []int{ie.Index, ie.Other}); diff != "" {
				t.Errorf("index, other (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidEditErrorMessage(t *testing.T) {
	err := Validate([]byte("abcdef"), "f.yaml", []finding.Edit{ed(0, 3, "x"), ed(2, 4, "y")})
	var ie *InvalidEditError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not *InvalidEditError", err)
	}
	ie.Rule, ie.Fix = "DS001", "set train_batch_size to 64"
	want := `invalid edit from rule DS001 in fix "set train_batch_size to 64": edit 1 [2,4) of f.yaml: edits overlap (edit 0 [0,3))`
	if diff := cmp.Diff(want, ie.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		edits []finding.Edit
		want  string
	}{
		{name: "no edits copies", data: "abc", want: "abc"},
		{name: "replace", data: "batch: 48\n", edits: []finding.Edit{ed(7, 9, "64")}, want: "batch: 64\n"},
		{name: "delete", data: "a: 1\nb: 2\n", edits: []finding.Edit{ed(0, 5, "")}, want: "b: 2\n"},
		{name: "unsorted edits", data: "0123456789", edits: []finding.Edit{ed(8, 9, "E"), ed(1, 2, "B"), ed(4, 6, "")},
			want: "0B2367E9"},
		{name: "insertions at one offset keep order", data: "ab", edits: []finding.Edit{ed(1, 1, "1"), ed(1, 1, "2"), ed(1, 1, "3")},
			want: "a123b"},
		{name: "insertion before and after a replacement", data: "[x]", edits: []finding.Edit{ed(2, 2, ">"), ed(1, 2, "y"), ed(1, 1, "<")},
			want: "[<y>]"},
		{name: "into empty", data: "", edits: []finding.Edit{ed(0, 0, "new\n")}, want: "new\n"},
		{name: "whole file", data: "old", edits: []finding.Edit{ed(0, 3, "new")}, want: "new"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			got, err := Apply(data, tc.edits)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			if string(data) != tc.data {
				t.Errorf("Apply changed its input to %q", data)
			}
		})
	}
}

func TestApplyRejectsInvalid(t *testing.T) {
	tests := []struct {
		name  string
		edits []finding.Edit
		want  Problem
	}{
		{name: "out of range", edits: []finding.Edit{ed(2, 9, "")}, want: ErrOutOfRange},
		{name: "overlap", edits: []finding.Edit{ed(0, 2, ""), ed(1, 3, "")}, want: ErrOverlap},
		{name: "reversed", edits: []finding.Edit{ed(2, 1, "")}, want: ErrReversed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply([]byte("abcd"), tc.edits)
			if !errors.Is(err, tc.want) || got != nil {
				t.Fatalf("Apply = %q, %v; want nil, %v", got, err, tc.want)
			}
		})
	}
}
