package normalize

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Descriptions of what a check allows, for violation messages.

// describe renders what a check allows, for messages.
func (c *valueCheck) describe() string {
	switch c.op {
	case checkTop:
		return "any value"
	case checkKind:
		return kindWords(c.kinds)
	case checkLit:
		return renderValue(c.lit)
	case checkBound:
		return boundWords(c.bound) + " " + strconv.FormatFloat(c.num, 'g', -1, 64)
	case checkRegex:
		return "a string matching " + c.re.String()
	case checkNotRegex:
		return "a string not matching " + c.re.String()
	case checkNotEqual:
		return "not " + renderValue(c.lit)
	case checkMaxRunes:
		return "a string of at most " + strconv.FormatFloat(c.num, 'g', -1, 64) + " characters"
	case checkMinRunes:
		return "a string of at least " + strconv.FormatFloat(c.num, 'g', -1, 64) + " characters"
	case checkSet:
		lits := c.stringLiterals(nil)
		for i, l := range lits {
			lits[i] = strconv.Quote(l)
		}
		return "one of " + strings.Join(lits, ", ")
	case checkOr:
		var lits, rest []*valueCheck
		for _, a := range c.flatOr(nil) {
			if a.op == checkLit {
				lits = append(lits, a)
			} else {
				rest = append(rest, a)
			}
		}
		var parts []string
		for _, a := range rest {
			parts = append(parts, a.describe())
		}
		if len(lits) > 0 {
			s, _ := describeLiterals(lits)
			parts = append(parts, s)
		}
		return strings.Join(slices.Compact(parts), " or ")
	case checkAnd:
		var kind string
		var rest []string
		bounded := false
		for _, a := range c.flatAnd(nil) {
			if a.op == checkKind && kind == "" {
				kind = kindWords(a.kinds)
				continue
			}
			bounded = bounded || a.op == checkBound
			rest = append(rest, a.describe())
		}
		if kind == "" && bounded {
			kind = "a number"
		}
		return strings.TrimSpace(kind + " " + strings.Join(rest, " and "))
	}
	return "a value the schema allows"
}

// flatOr lists the operands of nested disjunctions.
func (c *valueCheck) flatOr(out []*valueCheck) []*valueCheck {
	for _, a := range c.args {
		if a.op == checkOr {
			out = a.flatOr(out)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// flatAnd lists the operands of nested conjunctions.
func (c *valueCheck) flatAnd(out []*valueCheck) []*valueCheck {
	for _, a := range c.args {
		if a.op == checkAnd {
			out = a.flatAnd(out)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// describeLiterals renders a disjunction of literals: "0..3" for a run of
// three or more consecutive integers, else "one of a, b, c".
func describeLiterals(args []*valueCheck) (string, bool) {
	var ints []int64
	var others []string
	for _, a := range args {
		if a.op != checkLit {
			return "", false
		}
		if i, ok := a.lit.(int64); ok {
			ints = append(ints, i)
		} else {
			others = append(others, renderValue(a.lit))
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

func kindWords(k valueKind) string {
	var parts []string
	if k&kindNumber == kindNumber {
		parts = append(parts, "a number")
	} else if k&kindInt != 0 {
		parts = append(parts, "an integer")
	} else if k&kindFloat != 0 {
		parts = append(parts, "a non-integral number")
	}
	if k&kindString != 0 {
		parts = append(parts, "a string")
	}
	if k&kindBool != 0 {
		parts = append(parts, "true or false")
	}
	if k&kindNull != 0 {
		parts = append(parts, "null")
	}
	if k&kindStruct != 0 {
		parts = append(parts, "a mapping")
	}
	if k&kindList != 0 {
		parts = append(parts, "a list")
	}
	return strings.Join(parts, " or ")
}

func boundWords(op boundOp) string {
	switch op {
	case boundLT:
		return "<"
	case boundLE:
		return "<="
	case boundGT:
		return ">"
	}
	return ">="
}

// renderValue prints a document value the way a user wrote it.
func renderValue(v any) string {
	switch x := scalarOf(v).(type) {
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

// stringLiterals lists the string literals a check accepts directly
// (for did-you-mean on values).
func (c *valueCheck) stringLiterals(out []string) []string {
	switch c.op {
	case checkLit:
		if s, ok := c.lit.(string); ok {
			out = append(out, s)
		}
	case checkOr:
		for _, a := range c.args {
			out = a.stringLiterals(out)
		}
	case checkSet:
		start := len(out)
		for s := range c.set {
			out = append(out, s)
		}
		slices.Sort(out[start:])
	case checkRegex:
		out = append(out, regexAlternatives(c.re.String())...)
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
