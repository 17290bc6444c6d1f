package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Descriptions of what a check allows, for violation messages.

// Describe renders what a check allows, for messages.
func (c *ValueCheck) Describe() string {
	switch c.Op {
	case CheckTop:
		return "any value"
	case CheckKind:
		return kindWords(c.Kinds)
	case CheckLit:
		return RenderValue(c.Lit)
	case CheckBound:
		return boundWords(c.Bound) + " " + strconv.FormatFloat(c.Num, 'g', -1, 64)
	case CheckRegex:
		return "a string matching " + c.Re.String()
	case CheckNotRegex:
		return "a string not matching " + c.Re.String()
	case CheckNotEqual:
		return "not " + RenderValue(c.Lit)
	case CheckMaxRunes:
		return "a string of at most " + strconv.FormatFloat(c.Num, 'g', -1, 64) + " characters"
	case CheckMinRunes:
		return "a string of at least " + strconv.FormatFloat(c.Num, 'g', -1, 64) + " characters"
	case CheckSet:
		lits := c.StringLiterals(nil)
		for i, l := range lits {
			lits[i] = strconv.Quote(l)
		}
		return "one of " + strings.Join(lits, ", ")
	case CheckOr:
		var lits, rest []*ValueCheck
		for _, a := range c.flatOr(nil) {
			if a.Op == CheckLit {
				lits = append(lits, a)
			} else {
				rest = append(rest, a)
			}
		}
		var parts []string
		for _, a := range rest {
			parts = append(parts, a.Describe())
		}
		if len(lits) > 0 {
			s, _ := describeLiterals(lits)
			parts = append(parts, s)
		}
		return strings.Join(slices.Compact(parts), " or ")
	case CheckAnd:
		var kind string
		var rest []string
		bounded := false
		for _, a := range c.flatAnd(nil) {
			if a.Op == CheckKind && kind == "" {
				kind = kindWords(a.Kinds)
				continue
			}
			bounded = bounded || a.Op == CheckBound
			rest = append(rest, a.Describe())
		}
		if kind == "" && bounded {
			kind = "a number"
		}
		return strings.TrimSpace(kind + " " + strings.Join(rest, " and "))
	}
	return "a value the schema allows"
}

// flatOr lists the operands of nested disjunctions.
func (c *ValueCheck) flatOr(out []*ValueCheck) []*ValueCheck {
	for _, a := range c.Args {
		if a.Op == CheckOr {
			out = a.flatOr(out)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// flatAnd lists the operands of nested conjunctions.
func (c *ValueCheck) flatAnd(out []*ValueCheck) []*ValueCheck {
	for _, a := range c.Args {
		if a.Op == CheckAnd {
			out = a.flatAnd(out)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// describeLiterals renders a disjunction of literals: "0..3" for a run of
// three or more consecutive integers, else "one of a, b, c".
func describeLiterals(args []*ValueCheck) (string, bool) {
	var ints []int64
	var others []string
	for _, a := range args {
		if a.Op != CheckLit {
			return "", false
		}
		if i, ok := a.Lit.(int64); ok {
			ints = append(ints, i)
		} else {
			others = append(others, RenderValue(a.Lit))
		}
	}
	slices.Sort(ints)
	run := len(ints) >= 3
	for i := 1; i < len(ints) && run; i++ {
		run = ints[i] == ints[i-1]+1
	}
	var parts []string
	if run {
		parts = append(parts, fmt.Sprintf("%d..%d", ints[0], ints[len(ints)-1]))
	} else {
		for _, i := range ints {
			others = append(others, strconv.FormatInt(i, 10))
		}
	}
	switch {
	case len(others) == 0:
		return parts[0], true
	case len(others) == 1 && len(parts) == 0:
		return others[0], true
	case len(parts) == 0:
		return "one of " + strings.Join(others, ", "), true
	}
	if len(others) == 1 {
		return parts[0] + " or " + others[0], true
	}
	return parts[0] + " or one of " + strings.Join(others, ", "), true
}

func kindWords(k ValueKind) string {
	var parts []string
	if k&KindNumber == KindNumber {
		parts = append(parts, "a number")
	} else if k&KindInt != 0 {
		parts = append(parts, "an integer")
	} else if k&KindFloat != 0 {
		parts = append(parts, "a non-integral number")
	}
	if k&KindString != 0 {
		parts = append(parts, "a string")
	}
	if k&KindBool != 0 {
		parts = append(parts, "true or false")
	}
	if k&KindNull != 0 {
		parts = append(parts, "null")
	}
	if k&KindStruct != 0 {
		parts = append(parts, "a mapping")
	}
	if k&KindList != 0 {
		parts = append(parts, "a list")
	}
	return strings.Join(parts, " or ")
}

func boundWords(op BoundOp) string {
	switch op {
	case BoundLT:
		return "<"
	case BoundLE:
		return "<="
	case BoundGT:
		return ">"
	}
	return ">="
}

// RenderValue prints a document value the way a user wrote it.
func RenderValue(v any) string {
	switch x := ScalarOf(v).(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// StringLiterals lists the string literals a check accepts directly
// (for did-you-mean on values).
func (c *ValueCheck) StringLiterals(out []string) []string {
	switch c.Op {
	case CheckLit:
		if s, ok := c.Lit.(string); ok {
			out = append(out, s)
		}
	case CheckOr:
		for _, a := range c.Args {
			out = a.StringLiterals(out)
		}
	case CheckSet:
		start := len(out)
		for s := range c.Set {
			out = append(out, s)
		}
		slices.Sort(out[start:])
	case CheckRegex:
		out = append(out, regexAlternatives(c.Re.String())...)
	}
	return out
}

// regexAlternatives returns the names such a pattern accepts, nil for any
// other pattern.
func regexAlternatives(re string) []string {
	m := nameAlternation().FindStringSubmatch(re)
	if m == nil {
		return nil
	}
	names := strings.Split(m[2], "|")
	for i, n := range names {
		names[i] = m[1] + n
	}
	return names
}

// nameAlternation matches a pattern that is just a list of names,
// ^prefix(name|name|...)$, as the schemas use for long option lists.
var nameAlternation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\^([a-z0-9_-]*)\(([a-z0-9_|-]+)\)\$$`) })
