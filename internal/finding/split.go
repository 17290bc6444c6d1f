package finding

import (
	"strings"
	"unicode/utf8"
)

// LineWidth is the longest message text output prints on one line.
const LineWidth = 160

// Split divides a message too long for one line into a summary (its first
// clause, without the parenthesised arithmetic) and details (that
// arithmetic and the remaining clauses, one each). Clauses are separated
// by "; " outside parentheses. A message that fits gives "" and nil. A
// first clause that is still too long is cut at a word and ends in "…";
// the details then start with it whole.
func Split(msg string) (summary string, details []string) {
	if utf8.RuneCountInString(msg) <= LineWidth {
		return "", nil
	}
	clauses := topLevel(msg, "; ")
	first, asides := dropAsides(clauses[0])
	details = append(details, asides...)
	if utf8.RuneCountInString(first) > LineWidth {
		details = append([]string{clauses[0]}, clauses[1:]...)
		return cut(first, LineWidth-1) + "…", details
	}
	return first, append(details, clauses[1:]...)
}

// topLevel splits s at sep where sep is not inside parentheses.
func topLevel(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

// dropAsides removes the top-level parenthesised groups of a clause and
// returns them, without their parentheses, as asides.
func dropAsides(s string) (string, []string) {
	var b strings.Builder
	var asides []string
	depth, open := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			if depth == 0 {
				open = i
			}
			depth++
		case c == ')' && depth > 0:
			depth--
			if depth == 0 {
				asides = append(asides, s[open+1:i])
			}
		case depth == 0:
			b.WriteByte(c)
		}
	}
	if depth > 0 { // unbalanced: keep the clause as written
		return s, nil
	}
	return strings.Join(strings.Fields(b.String()), " "), asides
}

// cut returns the longest prefix of s of at most n runes that ends at a
// word boundary (or at n runes when there is none).
func cut(s string, n int) string {
	i, runes, lastSpace := 0, 0, -1
	for i < len(s) && runes < n {
		if s[i] == ' ' {
			lastSpace = i
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		runes++
	}
	if i >= len(s) {
		return s
	}
	if lastSpace > 0 {
		return strings.TrimRight(s[:lastSpace], " ,:")
	}
	return s[:i]
}
