package normalize

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
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
	checkMaxRunes                // strings.MaxRunes(num)
	checkMinRunes                // strings.MinRunes(num)
)

// valueKind is a set of value kinds, as CUE's kinds.
type valueKind uint16

const (
	kindNull valueKind = 1 << iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindStruct
	kindList

	kindNumber = kindInt | kindFloat
)

// boundOp is the comparison of a checkBound.
type boundOp uint8

const (
	boundLT boundOp = iota // <
	boundLE                // <=
	boundGT                // >
	boundGE                // >=
)

// valueCheck is a scalar constraint read from a CUE expression. Document
// values are compared after numberOf's normalisation: an integral float
// counts as an integer, as CUE would see it after the validator's
// encoding step.
type valueCheck struct {
	op    checkOp
	kinds valueKind
	lit   any // string, int64, float64, bool or nil
	bound boundOp
	num   float64
	re    *regexp.Regexp
	set   map[string]bool
	args  []*valueCheck
}

// accepts reports whether a pattern label accepts key.
func (c *valueCheck) accepts(key string) bool { return c.ok(key) }

// ok reports whether the (normalised) document value v satisfies c.
func (c *valueCheck) ok(v any) bool {
	switch c.op {
	case checkTop:
		return true
	case checkKind:
		return kindOf(v)&c.kinds != 0
	case checkLit:
		return equalScalar(c.lit, v)
	case checkAnd:
		for _, a := range c.args {
			if !a.ok(v) {
				return false
			}
		}
		return true
	case checkOr:
		for _, a := range c.args {
			if a.ok(v) {
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
		case boundLT:
			return f < c.num
		case boundLE:
			return f <= c.num
		case boundGT:
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
	case checkMaxRunes, checkMinRunes:
		s, ok := v.(string)
		if !ok {
			return false
		}
		n := float64(utf8.RuneCountInString(s))
		if c.op == checkMaxRunes {
			return n <= c.num
		}
		return n >= c.num
	}
	return false
}

// kindOf maps a normalised value to its kind (0 for none).
func kindOf(v any) valueKind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	case int64:
		return kindInt
	case float64:
		return kindFloat
	case map[string]any:
		return kindStruct
	case []any:
		return kindList
	}
	return 0
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
