// Package value reads the plain Go values a parsed document decodes to
// (source.Node.ToValue: map[string]any, []any, string, int64, float64,
// bool, nil) without type switches at every call: a value of another type
// reads as the zero value. It imports nothing from gpulint, so every
// format package can use it.
package value

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

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

// Int reads a whole number: an integer, an integral float below 2^53, or a
// string holding one ("8", " 8 ", "8.0", "1e3"). Frameworks that read
// their configs with Python accept all of these where they want an int.
func Int(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case int:
		return int64(t), true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t), true
		}
	case string:
		s := strings.TrimSpace(t)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	return 0, false
}

// Float reads a number: an integer, a float, or a string holding one.
func Float(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
	}
	return 0, false
}
