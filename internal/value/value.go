// Package value reads the plain Go values a parsed document decodes to
// (source.Node.ToValue: map[string]any, []any, string, int64, float64,
// bool, nil) without type switches at every call: a value of another type
// reads as the zero value. It imports nothing from gpulint, so every
// format package can use it.
package value

import "sort"

// List returns v as a list, nil when it is not one.
func List(v any) []any {
	l, _ := v.([]any)
	return l
}

// String returns v as a string, "" when it is not one.
func String(v any) string {
	s, _ := v.(string)
	return s
}

// SortedKeys returns a map's keys in order, so that walking a decoded map
// gives the same findings and edits on every run. An empty map gives an
// empty, non-nil slice.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
