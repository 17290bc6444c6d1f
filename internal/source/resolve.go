package source

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// YAML 1.1 implicit types, as PyYAML's SafeLoader resolves plain scalars.
// Source: PyYAML lib/yaml/resolver.py (yaml/pyyaml, Resolver's
// add_implicit_resolver calls) and lib/yaml/constructor.py
// (SafeConstructor.construct_yaml_int/float/bool). The float pattern needs
// a '.', and an exponent needs a sign, so "2e-5" and "5e8" are strings.
var (
	yamlFloatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?` +
			`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
			`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
			`|[-+]?\.(?:inf|Inf|INF)` +
			`|\.(?:nan|NaN|NAN))$`)
	})
	yamlIntRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+` +
			`|[-+]?0[0-7_]+` +
			`|[-+]?(?:0|[1-9][0-9_]*)` +
			`|[-+]?0x[0-9a-fA-F_]+` +
			`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	yamlTimestampRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
			`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?` +
			`(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?` +
			`(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	})
)

// resolvePlain returns the tag and value PyYAML's SafeLoader gives a plain
// scalar. Timestamps are kept as strings (tag "str"); see isYAMLTimestamp.
func resolvePlain(s string) (tag string, value any) {
	if v, ok := plainDecimal(s); ok {
		return "int", v
	}
	return resolvePlainRE(s)
}

// plainDecimal reads the commonest plain scalar, an unsigned decimal
// integer, without the regexps: all digits, no leading zero (which would
// make it octal), at most 18 of them (so it fits an int64). The float
// pattern needs a '.', so such a string is always an int.
// TestPlainDecimal holds it to resolvePlainRE.
func plainDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// resolvePlainRE is resolvePlain by PyYAML's patterns.
func resolvePlainRE(s string) (tag string, value any) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "null", nil
	case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return "bool", true
	case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return "bool", false
	}
	switch c := s[0]; {
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		if yamlFloatRE().MatchString(s) {
			if v, ok := constructFloat(s); ok {
				return "float", v
			}
		}
		if yamlIntRE().MatchString(s) {
			if v, ok := constructInt(s); ok {
				return "int", v
			}
		}
	}
	return "str", s
}

// isYAMLTimestamp reports whether PyYAML would read a plain scalar as a
// date or time. gpulint keeps such values as strings, but a new string
// value that looks like one must be quoted.
func isYAMLTimestamp(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9' && yamlTimestampRE().MatchString(s)
}

// resolveTagged applies an explicit tag (in yaml.v3's short form, "!!int")
// to a scalar's text, as PyYAML's SafeConstructor does. Unknown tags keep
// the text as a string.
func resolveTagged(tag, s string) (string, any, error) {
	switch tag {
	case "!!int":
		if v, ok := constructInt(s); ok {
			return "int", v, nil
		}
		return "", nil, fmt.Errorf("cannot read %q as !!int", s)
	case "!!float":
		if v, ok := constructFloat(s); ok {
			return "float", v, nil
		}
		return "", nil, fmt.Errorf("cannot read %q as !!float", s)
	case "!!bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return "bool", true, nil
		case "no", "false", "off":
			return "bool", false, nil
		}
		return "", nil, fmt.Errorf("cannot read %q as !!bool", s)
	case "!!null":
		return "null", nil, nil
	}
	return "str", s, nil
}

// constructInt converts an int literal: underscores dropped, 0b binary,
// 0x hex, a leading 0 octal, ':' base 60. Values beyond int64 become
// float64.
func constructInt(s string) (any, bool) {
	v := strings.ReplaceAll(s, "_", "")
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg, v = v[0] == '-', v[1:]
	}
	if v == "" {
		return nil, false
	}
	var n big.Int
	switch {
	case v == "0":
	case strings.HasPrefix(v, "0b"):
		if _, ok := n.SetString(v[2:], 2); !ok {
			return nil, false
		}
	case strings.HasPrefix(v, "0x"):
		if _, ok := n.SetString(v[2:], 16); !ok {
			return nil, false
		}
	case v[0] == '0':
		if _, ok := n.SetString(v[1:], 8); !ok {
			return nil, false
		}
	case strings.Contains(v, ":"):
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return nil, false
			}
			n.Mul(&n, big.NewInt(60))
			n.Add(&n, big.NewInt(d))
		}
	default:
		if _, ok := n.SetString(v, 10); !ok {
			return nil, false
		}
	}
	if neg {
		n.Neg(&n)
	}
	if n.IsInt64() {
		return n.Int64(), true
	}
	f, _ := new(big.Float).SetInt(&n).Float64()
	return f, true
}

// constructFloat converts a float literal: underscores dropped, .inf and
// .nan, ':' base 60.
func constructFloat(s string) (float64, bool) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return math.Inf(int(sign)), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		total := 0.0
		for _, part := range strings.Split(v, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return 0, false
			}
			total = total*60 + d
		}
		return sign * total, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return sign * f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
