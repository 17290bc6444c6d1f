package normalize

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
)

// badScalar reports a scalar that fails its check, explaining the two
// usual causes: a YAML 1.1 boolean where a string was meant, and "auto"
// where no launcher fills it in.
func (w *walker) badScalar(desc string, c *plan.ValueCheck, fc fieldCtx, v any) {
	name := pathName(w.path)
	sev := fc.severity()
	if fc.f != nil && fc.f.Want != "" {
		desc = fc.f.Want
	}
	msg := fmt.Sprintf("%s is %s; allowed %s", name, plan.RenderValue(v), desc)
	if fc.f != nil && fc.f.Msg != "" {
		msg = fmt.Sprintf("%s is %s; %s", name, plan.RenderValue(v), fc.f.Msg)
	}
	switch x := v.(type) {
	case bool:
		// PyYAML (YAML 1.1) reads unquoted yes/no/on/off as booleans.
		for _, word := range yaml11Words(x) {
			if c.Ok(word) {
				msg = fmt.Sprintf("%s is %t because PyYAML (YAML 1.1) reads an unquoted %s as %t; quote it: %s: %q",
					name, x, word, x, lastKey(w.path), word)
				break
			}
		}
	case string:
		if x == "auto" && fc.parent != nil && fc.parent.Auto != "" {
			switch fc.parent.Auto {
			case "dropped":
				sev = SeverityWarning
				msg = fmt.Sprintf("%s is \"auto\", which neither the HF Trainer nor Accelerate fills in here; "+
					"DeepSpeed drops \"auto\" inside %s and uses its default (allowed %s)", name, parentName(w.path), desc)
			case "unresolved":
				msg = fmt.Sprintf("%s is \"auto\", which neither the HF Trainer nor Accelerate fills in; allowed %s", name, desc)
			}
			break
		}
		// With a single allowed string the message already says it.
		if lits := c.StringLiterals(nil); len(lits) > 1 {
			if s := didYouMean(x, lits); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
	}
	w.emit(sev, msg)
}

// yaml11Words lists the unquoted spellings PyYAML resolves to b.
func yaml11Words(b bool) []string {
	if b {
		return []string{"YES", "yes", "Yes", "ON", "on", "On", "y", "Y"}
	}
	return []string{"NO", "no", "No", "OFF", "off", "Off", "n", "N"}
}

// pathName renders the last key of a path with any list indices after it:
// "stage", "mig-configs.all-balanced[0]" style for an index, "document"
// for the root.
func pathName(path []any) string {
	if len(path) == 0 {
		return "document"
	}
	i := len(path) - 1
	for i >= 0 {
		if _, ok := path[i].(int); !ok {
			break
		}
		i--
	}
	var b strings.Builder
	if i >= 0 {
		b.WriteString(fmt.Sprint(path[i]))
	} else {
		b.WriteString("document")
	}
	for _, e := range path[i+1:] {
		b.WriteString("[" + strconv.Itoa(e.(int)) + "]")
	}
	return b.String()
}

// parentName names the container of the last path element.
func parentName(path []any) string {
	if len(path) <= 1 {
		return "the top level"
	}
	return pathName(path[:len(path)-1])
}

func lastKey(path []any) string {
	for i := len(path) - 1; i >= 0; i-- {
		if s, ok := path[i].(string); ok {
			return s
		}
	}
	return "value"
}

// didYouMean returns the candidate closest to s when it is close enough to
// be a likely typo: an edit distance of at most a third of the longer
// name (at least 1, at most 4), or the same name up to case, '-' and '_',
// or one name extending the other by at most half its length. A name
// longer than maxSuggestLen gets no suggestion: no schema name is that
// long, and the edit distance costs len(s) x len(candidate) per candidate,
// which a hostile megabyte-long key would turn into seconds.
func didYouMean(s string, candidates []string) string {
	if len(s) > maxSuggestLen {
		return ""
	}
	best, bestD := "", 1<<30
	fold := foldName(s)
	for _, c := range candidates {
		if c == s {
			continue
		}
		d := editDistance(s, c)
		fc := foldName(c)
		short, long := min(len(fold), len(fc)), max(len(fold), len(fc))
		switch {
		case fc == fold:
			d = 0
		case short >= 4 && 3*short >= 2*long && (strings.HasPrefix(fc, fold) || strings.HasPrefix(fold, fc)):
			d = min(d, 1)
		}
		limit := max(1, min(4, max(len(s), len(c))/3))
		if d <= limit && (d < bestD || d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

// maxSuggestLen is the longest name did-you-mean compares: four times the
// longest key any schema or vLLM option has.
const maxSuggestLen = 128

// nameFolder drops the separators did-you-mean ignores; built once (a
// Replacer builds its tables on first use, which per call was 3% of a
// 1000-file run's allocation).
var nameFolder = strings.NewReplacer("-", "", "_", "")

func foldName(s string) string {
	return nameFolder.Replace(strings.ToLower(s))
}

// editDistance is the optimal-string-alignment distance between a and b
// (bytes): insertions, deletions, substitutions and transpositions of
// adjacent bytes cost 1 each.
func editDistance(a, b string) int {
	// Three rolling rows (the transposition looks two rows back), in one
	// buffer that stays on the stack for key-sized names.
	var buf [3 * 65]int
	w := len(b) + 1
	cells := buf[:0]
	if 3*w <= len(buf) {
		cells = buf[:3*w]
	} else {
		cells = make([]int, 3*w)
	}
	row := func(i int) []int { // i >= -1
		k := (i + 3) % 3
		return cells[k*w : (k+1)*w]
	}
	for j := range w {
		row(0)[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur, prev, prev2 := row(i), row(i-1), row(i-2)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
	}
	return row(len(a))[len(b)]
}

// DidYouMean returns the candidate closest to s by the rules schema
// messages use, or "" when none is close: for the project file's rule
// names, models and flags, which share the schema's notion of a typo.
func DidYouMean(s string, candidates []string) string {
	return didYouMean(s, candidates)
}
