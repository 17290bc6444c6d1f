package normalize

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"cuelang.org/go/cue"
)

type checkOp uint8

const (
	checkTop      checkOp = iota // _
	checkKind                    // int, number, string, bool, null (a mask)
	checkLit                     // one concrete value
	checkAnd                     // all of args
	checkOr                      // any of args
	checkBound                   // < <= > >= against a number
	checkRegex                   // =~
	checkNotRegex                // !~
	checkNotEqual                // != literal
	checkSet                     // one of many string literals (a disjunction, as a set)
	checkCUE                     // anything else: ask CUE (memoised)
)

// valueCheck is a scalar constraint read from a CUE expression. Document
// values are compared after numberOf's normalisation: an integral float
// counts as an integer, as CUE would see it after the validator's
// encoding step.
type valueCheck struct {
	op    checkOp
	kinds cue.Kind
	lit   any // string, int64, float64, bool or nil
	bound cue.Op
	num   float64
	re    *regexp.Regexp
	set   map[string]bool
	args  []*valueCheck
	cue   cue.Value
}

// buildCheck derives a check from a CUE scalar constraint. Callers hold
// p.file.mu.
func (p *schemaPlan) buildCheck(v cue.Value) *valueCheck {
	return p.checkFrom(v, 0)
}

func (p *schemaPlan) checkFrom(v cue.Value, depth int) *valueCheck {
	fallback := &valueCheck{op: checkCUE, cue: v}
	if depth > maxDepth {
		return fallback
	}
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		if v.IsConcrete() {
			if lit, ok := literalOf(v); ok {
				return &valueCheck{op: checkLit, lit: lit}
			}
			return fallback
		}
		k := v.IncompleteKind()
		if k == cue.TopKind {
			return &valueCheck{op: checkTop}
		}
		if k&^(cue.NumberKind|cue.StringKind|cue.BoolKind|cue.NullKind) != 0 {
			return fallback
		}
		return &valueCheck{op: checkKind, kinds: k}
	case cue.AndOp, cue.OrOp:
		c := &valueCheck{op: checkAnd}
		if op == cue.OrOp {
			c.op = checkOr
		}
		for _, a := range args {
			c.args = append(c.args, p.checkFrom(a, depth+1))
		}
		if set := stringSet(c); op == cue.OrOp && len(set) >= 8 {
			return &valueCheck{op: checkSet, set: set}
		}
		return c
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if len(args) == 1 {
			if f, err := args[0].Float64(); err == nil {
				return &valueCheck{op: checkBound, bound: op, num: f}
			}
		}
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		if len(args) == 1 {
			if s, err := args[0].String(); err == nil {
				if re, err := p.regexp(s); err == nil {
					c := &valueCheck{op: checkRegex, re: re}
					if op == cue.NotRegexMatchOp {
						c.op = checkNotRegex
					}
					return c
				}
			}
		}
	case cue.NotEqualOp:
		if len(args) == 1 && args[0].IsConcrete() {
			if lit, ok := literalOf(args[0]); ok {
				return &valueCheck{op: checkNotEqual, lit: lit}
			}
		}
	default:
		// A reference or call: evaluate once and retry.
		if ev := v.Eval(); depth < 2 {
			if eop, _ := ev.Expr(); eop != op {
				return p.checkFrom(ev, depth+1)
			}
		}
	}
	return fallback
}

// stringSet returns the literals of a disjunction made only of string
// literals, nil otherwise.
func stringSet(c *valueCheck) map[string]bool {
	set := make(map[string]bool, len(c.args))
	for _, a := range c.args {
		s, ok := a.lit.(string)
		if a.op != checkLit || !ok {
			return nil
		}
		set[s] = true
	}
	return set
}

// regexp compiles a pattern once per plan. Callers hold p.file.mu.
func (p *schemaPlan) regexp(s string) (*regexp.Regexp, error) {
	if re, ok := p.regexps[s]; ok {
		return re, nil
	}
	re, err := regexp.Compile(s)
	if err == nil {
		p.regexps[s] = re
	}
	return re, err
}

func literalOf(v cue.Value) (any, bool) {
	switch v.Kind() {
	case cue.StringKind:
		s, err := v.String()
		return s, err == nil
	case cue.IntKind:
		i, err := v.Int64()
		return i, err == nil
	case cue.FloatKind:
		f, err := v.Float64()
		return f, err == nil
	case cue.BoolKind:
		b, err := v.Bool()
		return b, err == nil
	case cue.NullKind:
		return nil, true
	}
	return nil, false
}

// needsCUE reports whether evaluating c may need CUE.
func (c *valueCheck) needsCUE() bool {
	if c.op == checkCUE {
		return true
	}
	for _, a := range c.args {
		if a.needsCUE() {
			return true
		}
	}
	return false
}

// accepts evaluates a check that needs no CUE (pattern labels).
func (c *valueCheck) accepts(v any) bool { return c.ok(nil, v) }

// ok reports whether the (normalised) document value v satisfies c.
func (c *valueCheck) ok(p *schemaPlan, v any) bool {
	switch c.op {
	case checkTop:
		return true
	case checkKind:
		return kindOf(v)&c.kinds != 0
	case checkLit:
		return equalScalar(c.lit, v)
	case checkAnd:
		for _, a := range c.args {
			if !a.ok(p, v) {
				return false
			}
		}
		return true
	case checkOr:
		for _, a := range c.args {
			if a.ok(p, v) {
				return true
			}
		}
		return false
	case checkBound:
		f, ok := v.(float64)
		if i, isInt := v.(int64); isInt {
			f, ok = float64(i), true
		}
		if !ok {
			return false
		}
		switch c.bound {
		case cue.LessThanOp:
			return f < c.num
		case cue.LessThanEqualOp:
			return f <= c.num
		case cue.GreaterThanOp:
			return f > c.num
		default:
			return f >= c.num
		}
	case checkRegex, checkNotRegex:
		s, ok := v.(string)
		return ok && c.re.MatchString(s) == (c.op == checkRegex)
	case checkNotEqual:
		return !equalScalar(c.lit, v)
	case checkSet:
		s, ok := v.(string)
		return ok && c.set[s]
	case checkCUE:
		if p == nil {
			return false
		}
		return p.cueAccepts(c, v)
	}
	return false
}

// kindOf maps a normalised scalar to its CUE kind.
func kindOf(v any) cue.Kind {
	switch v.(type) {
	case nil:
		return cue.NullKind
	case bool:
		return cue.BoolKind
	case string:
		return cue.StringKind
	case int64:
		return cue.IntKind
	case float64:
		return cue.FloatKind
	case map[string]any:
		return cue.StructKind
	case []any:
		return cue.ListKind
	}
	return cue.BottomKind
}

func equalScalar(lit, v any) bool {
	switch l := lit.(type) {
	case int64:
		switch x := v.(type) {
		case int64:
			return l == x
		case float64:
			return float64(l) == x
		}
		return false
	case float64:
		switch x := v.(type) {
		case int64:
			return l == float64(x)
		case float64:
			return l == x
		}
		return false
	}
	return lit == v
}

// numberOf normalises Go number types: an integral value becomes int64,
// anything else float64. ok is false for non-numbers.
func numberOf(v any) (any, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		f = float64(x)
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
		f = float64(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	case interface{ Int64() (int64, error) }: // json.Number
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		if s, ok := v.(fmt.Stringer); ok {
			if g, err := strconv.ParseFloat(s.String(), 64); err == nil {
				f = g
				break
			}
		}
		return nil, false
	default:
		return nil, false
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f), true
	}
	return f, true
}

// scalarOf normalises a document scalar; maps and lists pass through.
func scalarOf(v any) any {
	if n, ok := numberOf(v); ok {
		return n
	}
	return v
}
