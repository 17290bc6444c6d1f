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
// by "; " outside parentheses. A first clause still too long is divided at
// its last ": " or ", " outside parentheses that leaves a summary short
// enough, the rest going to the details; failing that it is cut at a word
// and ends in "…", and the details start with it whole. A message that
// fits gives "" and nil.
func Split(msg string) (summary string, details []string) {
	if utf8.RuneCountInString(msg) <= LineWidth {
		return "", nil
	}
	clauses := topLevel(msg, "; ")
	head, tail := clauses[0], ""
	if s, _ := dropAsides(head); utf8.RuneCountInString(s) > LineWidth {
		for _, k := range separators(head) {
			if s, _ := dropAsides(head[:k]); utf8.RuneCountInString(s) <= LineWidth {
				head, tail = head[:k], head[k+2:]
				break
			}
		}
	}
	summary, details = dropAsides(head)
	if utf8.RuneCountInString(summary) > LineWidth {
		return cut(summary, LineWidth-1) + "…", clauses
	}
	if tail != "" {
		details = append(details, tail)
	}
	return summary + qualifiers(clauses[1:]), append(details, clauses[1:]...)
}

// qualifiers keeps in the summary, in short, the clauses that qualify the
// verdict rather than explain it: what it assumes ("assumes seq_len 2048,
// method full", without how to state them) and that a fix is withheld. A
// reader of one line must see that a verdict rests on a guess (STYLE.md
// §5); how to settle it stays in the details.
func qualifiers(clauses []string) string {
	var b strings.Builder
	for _, c := range clauses {
		if !strings.HasPrefix(c, "assumes ") && !strings.HasPrefix(c, "no fix until ") {
			continue
		}
		c, _ = dropAsides(c)
		c = strings.ReplaceAll(c, " ,", ",")
		if i := strings.Index(c, ": "); i > 0 {
			c = c[:i]
		}
		b.WriteString("; ")
		b.WriteString(c)
	}
	return b.String()
}

// separators returns the offsets of the ": " and ", " outside parentheses
// in s, last first.
func separators(s string) []int {
	var out []int
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ':', ',':
			if depth == 0 && s[i+1] == ' ' && i > 0 {
				out = append([]int{i}, out...)
			}
		}
	}
	return out
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
	depth, open, literal := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case depth == 0 && c == '(' && (literal > 0 || i > 0 && s[i-1] == '$'):
			// $(VAR) is a Kubernetes or shell reference, part of the text,
			// not an aside: gs://$(MODEL_BUCKET_NAME)/qwen stays whole.
			literal++
			b.WriteByte(c)
		case depth == 0 && c == ')' && literal > 0:
			literal--
			b.WriteByte(c)
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
	return asideGap.Replace(strings.Join(strings.Fields(b.String()), " ")), asides
}

// asideGap closes the space a dropped aside leaves before punctuation:
// "gets 2 (its limit): TGI" reads "gets 2: TGI", not "gets 2 : TGI".
var asideGap = strings.NewReplacer(" :", ":", " ,", ",", " ;", ";", " .", ".")

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

// SplitLong sets Summary and Details on each finding whose message is too
// long for one line and has none yet.
func SplitLong(fs []Finding) {
	for i := range fs {
		if fs[i].Summary == "" {
			fs[i].Summary, fs[i].Details = Split(fs[i].Message)
		}
	}
}
