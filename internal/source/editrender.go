package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

// Layout helpers over f.Data. Lines end at '\n'.

// lineStart returns the offset at which the line holding off starts.
func (f *File) lineStart(off int) int {
	if off <= 0 {
		return off
	}
	return bytes.LastIndexByte(f.Data[:off], '\n') + 1
}

// lineEnd returns the offset of the line break ending off's line ("\r\n"
// or "\n"), or len(Data).
func (f *File) lineEnd(off int) int {
	for off < len(f.Data) && f.Data[off] != '\n' {
		off++
	}
	if off > 0 && off <= len(f.Data) && off < len(f.Data) && f.Data[off-1] == '\r' {
		off--
	}
	return off
}

// nextLineStart returns the offset after the '\n' ending off's line, or
// len(Data).
func (f *File) nextLineStart(off int) int {
	if off >= len(f.Data) {
		return len(f.Data)
	}
	if i := bytes.IndexByte(f.Data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(f.Data)
}

// newline returns the line ending used by off's line, else the file's
// first, else "\n".
func (f *File) newline(off int) string {
	i := f.nextLineStart(off)
	if i == len(f.Data) && (i == 0 || f.Data[i-1] != '\n') {
		i = f.nextLineStart(0)
	}
	if i > 1 && f.Data[i-1] == '\n' && f.Data[i-2] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// indentAt returns the leading spaces and tabs of off's line.
func (f *File) indentAt(off int) string {
	s := f.lineStart(off)
	e := s
	for e < len(f.Data) && isSpaceTab(f.Data[e]) {
		e++
	}
	return string(f.Data[s:e])
}

// startsLine reports whether only spaces and tabs precede off on its line.
func (f *File) startsLine(off int) bool {
	for i := off - 1; i >= 0 && f.Data[i] != '\n'; i-- {
		if !isSpaceTab(f.Data[i]) {
			return false
		}
	}
	return true
}

// restOfLine returns what follows off on its line, without the line break.
func (f *File) restOfLine(off int) string {
	return string(f.Data[off:f.lineEnd(off)])
}

// endsWithNewline reports whether the data ends with a line break.
func (f *File) endsWithNewline() bool {
	return len(f.Data) > 0 && f.Data[len(f.Data)-1] == '\n'
}

// isCommentStart reports whether s, the rest of a line, is (after white
// space) a comment in f's syntax that runs to the end of the line. A JSON
// block comment counts only when it closes on the line with nothing but
// blanks or another such comment after it: text after it ("/* c */}"), or
// a comment going on past the line, must not be taken for comment.
func (f *File) isCommentStart(s string) bool {
	s = strings.TrimLeft(s, " \t")
	switch {
	case strings.HasPrefix(s, "#"):
		return true
	case f.Format != FormatJSON:
		return false
	case strings.HasPrefix(s, "//"):
		return true
	case strings.HasPrefix(s, "/*"):
		end := strings.Index(s[2:], "*/")
		if end < 0 {
			return false
		}
		rest := strings.TrimLeft(s[2+end+2:], " \t")
		return rest == "" || f.isCommentStart(rest)
	}
	return false
}

// Scalar rendering.

// jsonScalar writes a scalar value as JSON.
func jsonScalar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", fmt.Errorf("cannot write %v in JSON", x)
		}
		if s, ok := integralFloat(x); ok {
			return s, nil
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case json.Number:
		return string(x), nil
	case string:
		return jsonQuote(x), nil
	}
	return "", fmt.Errorf("unsupported scalar %T", v)
}

// integralFloat writes a float64 holding an exact integer as an integer.
func integralFloat(x float64) (string, bool) {
	if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlFloat writes a float so that YAML 1.1 (PyYAML) and 1.2 loaders both
// read a float: a '.' in the mantissa and a signed exponent. Integral
// values are written as integers (see Op).
func yamlFloat(x float64) string {
	if s, ok := integralFloat(x); ok {
		return s
	}
	return yamlFloatForm(x)
}

// yamlNumber writes a number given as text so that it reads back as the
// same number and type: integers and floats that YAML 1.1 and 1.2 agree on
// stay as written, others ("2e-5", "1e3") get a '.' and a signed exponent.
func yamlNumber(n json.Number) string {
	s := string(n)
	isInt := !strings.ContainsAny(s, ".eE")
	if isInt && yamlIntRE().MatchString(s) {
		return s
	}
	if !isInt && yamlFloatRE().MatchString(s) && yaml12NonString().MatchString(s) {
		return s
	}
	f, _ := n.Float64()
	if isInt {
		if t, ok := integralFloat(f); ok {
			return t
		}
	}
	return yamlFloatForm(f)
}

// yamlFloatForm writes f with a '.' and, if any, a signed exponent, even
// when f is integral.
func yamlFloatForm(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return ".inf"
	case math.IsInf(x, -1):
		return "-.inf"
	case math.IsNaN(x):
		return ".nan"
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}

// yaml12NonString matches plain scalars a YAML 1.2 core-schema loader
// (yaml.v3, ruamel) reads as something other than a string, so a string
// value written plain stays a string for every loader.
var yaml12NonString = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+` +
		`|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?` +
		`|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
		`|[Tt]rue|TRUE|[Ff]alse|FALSE|[Nn]ull|NULL|~|[YyNn])$`)
})

// plainSafe reports whether s can be written as a plain YAML scalar and be
// read back as the same string, by YAML 1.1 and 1.2 loaders alike.
func plainSafe(s string, flow bool) bool {
	if s == "" || s != strings.TrimSpace(s) {
		return false
	}
	if tag, _ := resolvePlain(s); tag != "str" {
		return false
	}
	if isYAMLTimestamp(s) || yaml12NonString().MatchString(s) || s == "<<" || s == "=" {
		return false
	}
	switch s[0] {
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-':
		if len(s) == 1 || s[1] == ' ' || strings.HasPrefix(s, "---") {
			return false
		}
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if flow && strings.ContainsAny(s, ",[]{}?:") { // libyaml ends flow plain scalars at these
		return false
	}
	for _, r := range s {
		if r == '\t' || r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// yamlDoubleQuote writes s as a double-quoted YAML scalar.
func yamlDoubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\uFEFF' || !unicode.IsPrint(r) && r != ' ':
			if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// singleQuotable reports whether s can be written single-quoted on one line.
func singleQuotable(s string) bool {
	for _, r := range s {
		if r == '\uFEFF' || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// yamlScalar writes a scalar value as YAML, keeping style where the value
// allows: a string stays single- or double-quoted, a plain string that
// would read back as another type is double-quoted, and non-strings are
// always plain (quotes would make them strings).
func yamlScalar(v any, style ScalarStyle, flow bool) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return yamlFloat(x), nil
	case json.Number:
		return yamlNumber(x), nil
	case string:
		switch {
		case style == SingleQuoted && singleQuotable(x):
			return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
		case style == DoubleQuoted:
			return yamlDoubleQuote(x), nil
		case plainSafe(x, flow):
			return x, nil
		}
		return yamlDoubleQuote(x), nil
	case map[string]any:
		if len(x) == 0 {
			return "{}", nil
		}
	case []any:
		if len(x) == 0 {
			return "[]", nil
		}
	}
	return "", fmt.Errorf("unsupported scalar %T", v)
}

func yamlKey(k string, flow bool) string {
	if plainSafe(k, flow) {
		return k
	}
	return yamlDoubleQuote(k)
}

// col0 is a position's 0-based column for indentation: a byte-order mark
// at the start of the file is not indentation.
func (f *File) col0(p finding.Pos) int {
	c := p.Col - 1
	if p.Line == 1 && len(f.Data) >= 3 && f.Data[0] == 0xEF && f.Data[1] == 0xBB && f.Data[2] == 0xBF {
		c -= 3
	}
	return max(c, 0)
}
