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

func TestInt(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int64
		ok   bool
	}{
		{name: "int64", in: int64(8), want: 8, ok: true},
		{name: "int", in: 8, want: 8, ok: true},
		{name: "negative", in: int64(-1), want: -1, ok: true},
		{name: "integral float", in: 8.0, want: 8, ok: true},
		{name: "fraction", in: 0.5, ok: false},
		{name: "float past 2^53", in: 1e17, ok: false},
		{name: "numeric string with spaces", in: " 16 ", want: 16, ok: true},
		{name: "float string", in: "8.0", want: 8, ok: true},
		{name: "exponent string", in: "1e3", want: 1000, ok: true},
		{name: "fraction string", in: "1.5", ok: false},
		{name: "word", in: "auto", ok: false},
		{name: "bool", in: true, ok: false},
		{name: "nil", in: nil, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := value.Int(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Int(%#v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFloat(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want float64
		ok   bool
	}{
		{name: "float", in: 0.9, want: 0.9, ok: true},
		{name: "int64", in: int64(2), want: 2, ok: true},
		{name: "string", in: " 0.95", want: 0.95, ok: true},
		{name: "word", in: "auto", ok: false},
		{name: "nil", in: nil, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := value.Float(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Float(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
