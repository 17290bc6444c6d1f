package plan

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// CheckOp is the operation of a ValueCheck.
type CheckOp uint8

const (
	CheckTop      CheckOp = iota // _
	CheckKind                    // int, number, string, bool, null (a mask)
	CheckLit                     // one concrete value
	CheckAnd                     // all of args
	CheckOr                      // any of args
	CheckBound                   // < <= > >= against a number
	CheckRegex                   // =~
	CheckNotRegex                // !~
	CheckNotEqual                // != literal
	CheckSet                     // one of many string literals (a disjunction, as a set)
	CheckMaxRunes                // strings.MaxRunes(num)
	CheckMinRunes                // strings.MinRunes(num)
)

// ValueKind is a set of value kinds, as CUE's kinds.
type ValueKind uint16

const (
	KindNull ValueKind = 1 << iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindStruct
	KindList

	KindNumber = KindInt | KindFloat
)

// BoundOp is the comparison of a checkBound.
type BoundOp uint8

const (
	BoundLT BoundOp = iota // <
	BoundLE                // <=
	BoundGT                // >
	BoundGE                // >=
)

// ValueCheck is a scalar constraint read from a CUE expression. Document
// values are compared after numberOf's normalisation: an integral float
// counts as an integer, as CUE would see it after the validator's
// encoding step.
type ValueCheck struct {
	Op    CheckOp
	Kinds ValueKind
	Lit   any // string, int64, float64, bool or nil
	Bound BoundOp
	Num   float64
	Re    *regexp.Regexp
	Set   map[string]bool
	Args  []*ValueCheck
}

// accepts reports whether a pattern label accepts key.
func (c *ValueCheck) accepts(key string) bool { return c.Ok(key) }

// Ok reports whether the (normalised) document value v satisfies c.
func (c *ValueCheck) Ok(v any) bool {
	switch c.Op {
	case CheckTop:
		return true
	case CheckKind:
		return kindOf(v)&c.Kinds != 0
	case CheckLit:
		return equalScalar(c.Lit, v)
	case CheckAnd:
		for _, a := range c.Args {
			if !a.Ok(v) {
				return false
			}
		}
		return true
	case CheckOr:
		for _, a := range c.Args {
			if a.Ok(v) {
				return true
			}
		}
		return false
	case CheckBound:
		f, ok := v.(float64)
		if i, isInt := v.(int64); isInt {
			f, ok = float64(i), true
		}
		if !ok {
			return false
		}
		switch c.Bound {
		case BoundLT:
			return f < c.Num
		case BoundLE:
			return f <= c.Num
		case BoundGT:
			return f > c.Num
		default:
			return f >= c.Num
		}
	case CheckRegex, CheckNotRegex:
		s, ok := v.(string)
		return ok && c.Re.MatchString(s) == (c.Op == CheckRegex)
	case CheckNotEqual:
		return !equalScalar(c.Lit, v)
	case CheckSet:
		s, ok := v.(string)
		return ok && c.Set[s]
	case CheckMaxRunes, CheckMinRunes:
		s, ok := v.(string)
		if !ok {
			return false
		}
		n := float64(utf8.RuneCountInString(s))
		if c.Op == CheckMaxRunes {
			return n <= c.Num
		}
		return n >= c.Num
	}
	return false
}

// kindOf maps a normalised value to its kind (0 for none).
func kindOf(v any) ValueKind {
	switch v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case string:
		return KindString
	case int64:
		return KindInt
	case float64:
		return KindFloat
	case map[string]any:
		return KindStruct
	case []any:
		return KindList
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

// ScalarOf normalises a document scalar; maps and lists pass through.
func ScalarOf(v any) any {
	if n, ok := numberOf(v); ok {
		return n
	}
	return v
}
