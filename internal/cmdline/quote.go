package cmdline

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// yamlEncode writes s for the inside of a scalar of the given style. whole
// says s becomes the scalar's entire content; a plain scalar may then be
// turned into a double-quoted one when s would not read back as the same
// string. Text that cannot be written safely is an error.
func yamlEncode(s string, quote byte, whole bool) (string, error) {
	switch quote {
	case '"':
		return escapeDouble(s), nil
	case '\'':
		if strings.ContainsAny(s, "\r\n") {
			return "", fmt.Errorf("write %q into a single-quoted YAML scalar: %w", s, ErrUnsafe)
		}
		return strings.ReplaceAll(s, "'", "''"), nil
	case '|', '>':
		if strings.ContainsAny(s, "\r\n") {
			return "", fmt.Errorf("write %q into a YAML block scalar: %w", s, ErrUnsafe)
		}
		return s, nil
	}
	if plainSafe(s, whole) {
		return s, nil
	}
	if whole {
		return `"` + escapeDouble(s) + `"`, nil
	}
	return "", fmt.Errorf("write %q into a plain YAML scalar: %w", s, ErrUnsafe)
}

// escapeDouble escapes s for a YAML (or JSON) double-quoted string.
func escapeDouble(s string) string {
	var b strings.Builder
	for i := range len(s) {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// nonString matches plain scalars that YAML 1.1 or 1.2 would read as a
// number, boolean or null rather than a string.
var nonString = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^([-+]?(\.?[0-9]|\.inf$|\.nan$)|(true|false|yes|no|on|off|y|n|null|~)$)`)
})

// plainSafe reports whether s can be written unquoted: as a whole plain
// scalar (whole) or inside one. It is conservative: the scalar may sit in
// a flow sequence, so flow indicators are refused too.
func plainSafe(s string, whole bool) bool {
	if strings.ContainsAny(s, "\r\n\t,[]{}") || strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if !whole {
		return true
	}
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || nonString().MatchString(s) {
		return false
	}
	if strings.IndexByte("#&*!|>'\"%@`", s[0]) >= 0 {
		return false
	}
	if strings.IndexByte("-?:", s[0]) >= 0 && (len(s) == 1 || s[1] == ' ') {
		return false
	}
	return true
}
