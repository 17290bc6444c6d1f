package value_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/value"
)

func TestList(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want []any
	}{
		{name: "list", in: []any{"a", int64(1)}, want: []any{"a", int64(1)}},
		{name: "map is not a list", in: map[string]any{"a": 1}, want: nil},
		{name: "string is not a list", in: "a", want: nil},
		{name: "nil", in: nil, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, value.List(tc.in)); diff != "" {
				t.Errorf("List(%v) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "string", in: "bf16", want: "bf16"},
		{name: "int is not a string", in: int64(16), want: ""},
		{name: "bool is not a string", in: true, want: ""},
		{name: "nil", in: nil, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := value.String(tc.in); got != tc.want {
				t.Errorf("String(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSortedKeys(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		{name: "sorted bytewise", in: map[string]any{"b": 1, "a": 2, "B": 3, "a.b": 4}, want: []string{"B", "a", "a.b", "b"}},
		{name: "empty", in: map[string]any{}, want: []string{}},
		{name: "nil", in: nil, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, value.SortedKeys(tc.in)); diff != "" {
				t.Errorf("SortedKeys (-want +got):\n%s", diff)
			}
		})
	}
}
