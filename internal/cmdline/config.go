package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Config returns the invocation's settings keyed by canonical kebab-case
// name, plus "model", with values converted by the option table: int64
// (human-readable suffixes for Option.Human ints), float64, bool, string,
// and []any for Multi options. JSON options stay strings. Dotted sub-keys
// ("--compilation-config.level 3") are read as vLLM's
// FlexibleArgumentParser.parse_args reads them (vllm-project/vllm
// vllm/utils/argparse_utils.py @ 00da11e): each value is decoded as JSON,
// else a human-readable integer, else kept as the string; a last key ending
// in "+" appends the value split on "," to a list; all sub-keys of one head
// merge into one object, which vLLM passes as that head's JSON value after
// every other argument, so it replaces a JSON value the head was given
// whole. The head is a key of its own holding that object
// ("compilation-config": {"level": 3}), so the schema judges the head and
// never calls the dotted name an unknown option. Unknown flags keep their string value (true when given bare). A
// value that does not convert stays a string. A value holding variables
// is read with them expanded from the container's env; one that cannot be
// expanded is left out (see Unknown), as it is not known, not wrong. When
// a flag is repeated the last one wins, as in vLLM.
func (c *Command) Config() map[string]any {
	out := make(map[string]any, len(c.Flags)+1)
	var dotted map[string]map[string]any
	for _, f := range c.Flags {
		if f.Dynamic {
			if f.Unknown {
				delete(out, f.Name)
				continue
			}
			f.Value, f.Dynamic = f.Expanded, false
			if f.Values != nil {
				f.Values = strings.Fields(f.Expanded)
			}
		}
		if head, keys, ok := strings.Cut(f.Name, "."); ok && f.HasValue {
			if dotted == nil {
				dotted = map[string]map[string]any{}
			}
			if dotted[head] == nil {
				dotted[head] = map[string]any{}
			}
			setDotted(dotted[head], strings.Split(keys, "."), f.Value)
			continue
		}
		out[f.Name] = flagValue(f)
	}
	for head, v := range dotted {
		out[head] = v
	}
	if c.Model != "" {
		out["model"] = c.Model
	}
	return out
}

func flagValue(f Flag) any {
	opt, known := LookupOption(f.Name)
	switch {
	case strings.Contains(f.Name, ".") && f.HasValue:
		return dottedValue(f.Value)
	case !known:
		if !f.HasValue {
			return true
		}
		return f.Value
	case opt.Type == TypeBool:
		if f.Negated {
			return false
		}
		if !f.HasValue {
			return true
		}
		switch strings.ToLower(f.Value) {
		case "true":
			return true
		case "false":
			return false
		}
		return f.Value
	case !f.HasValue:
		return nil
	case opt.Multi:
		vals := f.Values
		out := make([]any, len(vals))
		for i, v := range vals {
			out[i] = convert(opt, v)
		}
		return out
	}
	return convert(opt, f.Value)
}

// convert turns one value string into the option's Go type, or leaves it a
// string when it does not parse.
func convert(opt Option, v string) any {
	switch opt.Type {
	case TypeInt:
		if opt.Human {
			if n, err := ParseHumanInt(v); err == nil {
				return n
			}
			return v
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
	case TypeFloat:
		if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
			return x
		}
	}
	return v
}

var humanInt = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+(?:\.\d+)?)([kKmMgGtT])$`) })

// ParseHumanInt parses vLLM's human-readable integers: "32768", "32k"
// (decimal: k=1e3, m=1e6, g=1e9, t=1e12; decimals allowed, "25.6k" =
// 25600) and "1K" (binary: K=2^10, M=2^20, G=2^30, T=2^40; whole numbers
// only). Source: vllm/utils/argparse_utils.py human_readable_int (AP).
func ParseHumanInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	m := humanInt().FindStringSubmatch(s)
	if m == nil {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q as an integer: %w", s, err)
		}
		return n, nil
	}
	num, suffix := m[1], m[2][0]
	decimal := map[byte]float64{'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12}
	if mult, ok := decimal[suffix]; ok {
		x, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q: %w", s, err)
		}
		v := x * mult
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("parse %q: value out of range", s)
		}
		return int64(v), nil
	}
	shift := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40}[suffix]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %q: decimals are not allowed with binary suffix %c: %w", s, suffix, err)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("parse %q: value out of range", s)
	}
	return n << shift, nil
}

// setDotted stores one dotted sub-key's value in the head's object as
// vLLM's recursive_dict_update does: nested objects merge, a list extends
// a list already there, anything else replaces.
func setDotted(obj map[string]any, keys []string, raw string) {
	last := keys[len(keys)-1]
	var v any
	if k, ok := strings.CutSuffix(last, "+"); ok {
		last = k
		var items []any
		for _, s := range strings.Split(raw, ",") {
			items = append(items, s)
		}
		v = items
	} else {
		v = dottedValue(raw)
	}
	for _, k := range keys[:len(keys)-1] {
		sub, ok := obj[k].(map[string]any)
		if !ok {
			sub = map[string]any{}
			obj[k] = sub
		}
		obj = sub
	}
	if l, ok := v.([]any); ok {
		if old, ok := obj[last].([]any); ok {
			v = append(old, l...)
		}
	}
	obj[last] = v
}

// dottedValue decodes a dotted sub-key's value as vLLM does: JSON first,
// then a human-readable integer, else the string (AP parse_args).
func dottedValue(v string) any {
	d := json.NewDecoder(bytes.NewReader([]byte(v)))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err == nil && !d.More() {
		return jsonNumbers(x)
	}
	if n, err := ParseHumanInt(v); err == nil {
		return n
	}
	return v
}

// jsonNumbers turns json.Number values into int64 or float64.
func jsonNumbers(x any) any {
	switch v := x.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	case map[string]any:
		for k, e := range v {
			v[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = jsonNumbers(e)
		}
	}
	return x
}
