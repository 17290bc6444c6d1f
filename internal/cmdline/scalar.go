package cmdline

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Span is a half-open byte range [Start, End) of the file.
type Span struct {
	Start, End int
	// Exact is true when Start and End delimit precisely the bytes meant.
	// A span that is not Exact is the nearest thing known — the whole
	// scalar that holds it — good for pointing a finding at, never for an
	// edit.
	Exact bool
}

// Arg is one element of a container's command or args list as written in a
// manifest (a YAML or JSON scalar).
type Arg struct {
	// Text is the decoded value, the string the container receives.
	Text string
	// Raw is where the scalar's content lies in the file: without quotes,
	// and for block scalars without the header line. Raw.Exact means the
	// file's bytes Raw.Start..Raw.End equal Text byte for byte. Set
	// Start = End = 0 and Exact = false when the position is unknown.
	Raw Span
	// Quote says how the scalar was written, so edits can write the same
	// way: 0 plain (or unknown), '\'' or '"' quoted, '|' literal block,
	// '>' folded block.
	Quote byte
	// Source, when set, is the content exactly as written in the file
	// (the bytes Raw.Start..Raw.End). It lets the parser place positions
	// inside scalars that are not Exact: block scalars, folded lines and
	// simple escapes. ScalarArg fills it.
	Source string
}

// ScalarArg builds an Arg from a scalar's full extent in src: start is the
// offset of its first byte (an opening quote, a block indicator | or >, or
// the first character of a plain scalar), end the offset just past its
// last byte, or -1 when unknown. text is the decoded value. The result is
// Exact when the content equals text, and otherwise carries Source so
// positions inside it can still be found.
func ScalarArg(src []byte, start, end int, text string) Arg {
	if start < 0 || start > len(src) {
		return Arg{Text: text}
	}
	known := end >= start && end <= len(src)
	if !known {
		// A quoted scalar ends at its closing quote. Finding it matters:
		// a prefix of the content can equal the text while stopping inside
		// an escape ('' or a backslash pair), leaving the end misplaced.
		end, known = quotedEnd(src, start)
	}
	if !known {
		end = len(src)
	}
	var quote byte
	cs, ce := start, end
	if start < len(src) {
		switch c := src[start]; c {
		case '"', '\'':
			quote = c
			cs = start + 1
			if known && end-1 > start && src[end-1] == c {
				ce = end - 1
			}
		case '|', '>':
			quote = c
			nl := strings.IndexByte(string(src[start:end]), '\n')
			if nl < 0 {
				cs = end
			} else {
				cs = start + nl + 1
			}
		}
	}
	raw := string(src[cs:ce])
	if raw == text || (!known && quote != '|' && quote != '>' && strings.HasPrefix(raw, text)) {
		return Arg{Text: text, Raw: Span{Start: cs, End: cs + len(text), Exact: true}, Quote: quote}
	}
	m, used := align(text, raw, quote, cs)
	if m == nil {
		return Arg{Text: text, Raw: Span{Start: cs, End: ce}, Quote: quote}
	}
	if !known {
		ce = cs + used
	}
	return Arg{Text: text, Raw: Span{Start: cs, End: ce}, Quote: quote, Source: string(src[cs:ce])}
}

// quotedEnd returns the offset just past the closing quote of the single-
// or double-quoted YAML scalar at src[start], skipping a doubled quote
// mark in the first and backslash escapes in the second. ok is false when
// src[start] opens no quoted scalar or the quote is never closed.
func quotedEnd(src []byte, start int) (int, bool) {
	if start >= len(src) || src[start] != '"' && src[start] != '\'' {
		return 0, false
	}
	q := src[start]
	for i := start + 1; i < len(src); i++ {
		switch {
		case q == '"' && src[i] == '\\':
			i++
		case src[i] == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			i++
		case src[i] == q:
			return i + 1, true
		}
	}
	return 0, false
}

// posMap gives, for each byte i of an Arg's Text, the file bytes
// [start[i], end[i]) it was decoded from.
type posMap struct {
	start, end []int
}

// positions maps an Arg's text to file offsets, or returns nil when the
// Arg carries too little to do so.
func (a Arg) positions() *posMap {
	n := len(a.Text)
	if a.Raw.Exact && a.Raw.End-a.Raw.Start == n {
		m := &posMap{start: make([]int, n), end: make([]int, n)}
		for i := range n {
			m.start[i] = a.Raw.Start + i
			m.end[i] = a.Raw.Start + i + 1
		}
		return m
	}
	if a.Source == "" || len(a.Source) != a.Raw.End-a.Raw.Start {
		return nil
	}
	m, _ := align(a.Text, a.Source, a.Quote, a.Raw.Start)
	return m
}

// rawText returns the scalar's content as written, or "" when unknown.
func (a Arg) rawText() string {
	if a.Source != "" {
		return a.Source
	}
	if a.Raw.Exact {
		return a.Text
	}
	return ""
}

// align matches decoded text against the raw content it came from and
// returns where each text byte lies (offset by base), plus how many raw
// bytes it consumed. It understands YAML line folding, block indentation,
// doubled quotes in single-quoted scalars and backslash escapes in
// double-quoted ones. Every non-blank raw byte must be accounted for, so
// a mapping it returns never misplaces a non-blank character; it returns
// nil when the two disagree.
func align(text, raw string, quote byte, base int) (*posMap, int) {
	m := &posMap{start: make([]int, len(text)), end: make([]int, len(text))}
	set := func(i, j, n int) {
		m.start[i] = base + j
		m.end[i] = base + j + n
	}
	i, j := 0, 0
	for i < len(text) {
		if j >= len(raw) {
			// Block scalars may be given without their final line break,
			// which chomping adds to the text.
			if strings.Trim(text[i:], "\n") != "" {
				return nil, 0
			}
			for ; i < len(text); i++ {
				set(i, j, 0)
			}
			break
		}
		c, r := text[i], raw[j]
		switch {
		case quote == '"' && r == '\\':
			if j+1 >= len(raw) {
				return nil, 0
			}
			if x := raw[j+1]; x == '\n' || x == '\r' { // escaped line break
				j += 2
				if x == '\r' && j < len(raw) && raw[j] == '\n' {
					j++
				}
				for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
					j++
				}
				continue
			}
			dec, n, ok := unescapeYAML(raw[j+1:])
			if !ok || !strings.HasPrefix(text[i:], dec) {
				return nil, 0
			}
			for k := range len(dec) {
				set(i+k, j, 1+n)
			}
			i += len(dec)
			j += 1 + n
		case quote == '\'' && r == '\'':
			if c != '\'' || j+1 >= len(raw) || raw[j+1] != '\'' {
				return nil, 0
			}
			set(i, j, 2)
			i++
			j += 2
		case c == r:
			set(i, j, 1)
			i++
			j++
		case (c == ' ' || c == '\n') && (r == '\n' || r == '\r'): // folded line break
			n := 1
			if r == '\r' && j+1 < len(raw) && raw[j+1] == '\n' {
				n = 2
			}
			set(i, j, n)
			i++
			j += n
		case r == ' ' || r == '\t' || r == '\n' || r == '\r': // indentation, trimmed blanks
			j++
		default:
			return nil, 0
		}
	}
	return m, j
}

// unescapeYAML decodes one YAML double-quoted escape; s starts just after
// the backslash. It returns the decoded bytes and how many bytes of s the
// escape used.
func unescapeYAML(s string) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	simple := map[byte]string{
		'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n",
		'v': "\v", 'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"",
		'/': "/", '\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028",
		'P': "\u2029",
	}
	if d, ok := simple[s[0]]; ok {
		return d, 1, true
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
	if width == 0 || len(s) < 1+width {
		return "", 0, false
	}
	v, err := strconv.ParseUint(s[1:1+width], 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return "", 0, false
	}
	return string(rune(v)), 1 + width, true
}
