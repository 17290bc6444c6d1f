package source

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

// LenientNote marks a place where a JSON file used syntax that DeepSpeed's
// hjson reader accepts but strict JSON does not.
type LenientNote struct {
	Pos  finding.Pos
	What string // "comment" or "trailing comma"
}

// Lenient syntax kinds recorded in LenientNote.What.
const (
	LenientComment       = "comment"
	LenientTrailingComma = "trailing comma"
)

const msgStringUTF8 = "invalid UTF-8 in string"

func isStringUTF8Error(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.HasPrefix(e.Msg, msgStringUTF8)
}

// ParseJSON parses data as one JSON document and keeps the position of
// every node. Map entries stay in source order, duplicates included.
// Strings are DoubleQuoted, everything else Plain. Numbers written without
// '.' or an exponent that fit in an int64 get an int64 Value, other numbers
// a float64.
//
// DeepSpeed reads its config with hjson, so "//", "#" and "/* */" comments
// and trailing commas are accepted and listed in File.Lenient. A UTF-8 BOM
// is skipped (positions stay offsets into data). Anything else malformed,
// and nesting deeper than lim.MaxDepth or more than lim.MaxNodes nodes, is a
// *Error at its position. The returned File is never nil.
func ParseJSON(path string, data []byte, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return &File{Path: path, Data: data, Format: FormatJSON}, sizeError(path, len(data), lim.MaxBytes)
	}
	f := newFile(path, data, FormatJSON)
	p := jsonParser{f: f, data: data, pos: bomLen(data), lim: lim, cur: posCursor{lines: f.Lines}}
	root, err := p.document()
	if err != nil {
		return f, err
	}
	f.Docs = []*Document{{Index: 0, Root: root, Start: root.Start, End: root.End}}
	return f, nil
}

type jsonParser struct {
	f     *File
	data  []byte
	pos   int
	lim   Limits
	cur   posCursor
	nodes int
	stack []*Node
	keys  []*Node // pending key per open map, parallel to stack
}

func (p *jsonParser) errAt(off int, format string, args ...any) error {
	return p.f.errAt(off, format, args...)
}

func (p *jsonParser) document() (*Node, error) {
	for {
		n, err := p.valueStart()
		if err != nil {
			return nil, err
		}
		for n != nil {
			if len(p.stack) == 0 {
				if err := p.space(); err != nil {
					return nil, err
				}
				if p.pos < len(p.data) {
					return nil, p.errAt(p.pos, "invalid %s after top-level value", describeByte(p.data, p.pos))
				}
				return n, nil
			}
			top := len(p.stack) - 1
			if parent := p.stack[top]; parent.Kind == MapNode {
				parent.Entries = append(parent.Entries, Entry{Key: p.keys[top], Value: n})
				p.keys[top] = nil
			} else {
				parent.Items = append(parent.Items, n)
			}
			if n, err = p.afterMember(); err != nil {
				return nil, err
			}
		}
	}
}

// valueStart reads the start of a value. It returns a complete node, or
// nil when it opened a non-empty collection whose first value comes next.
func (p *jsonParser) valueStart() (*Node, error) {
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos >= len(p.data) {
		return nil, p.errAt(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{' || c == '[':
		kind, closer := MapNode, byte('}')
		if c == '[' {
			kind, closer = SeqNode, ']'
		}
		if len(p.stack)+1 > p.lim.MaxDepth {
			return nil, p.f.limitAt(p.pos, "nesting depth %d exceeds the limit of %d", len(p.stack)+1, p.lim.MaxDepth)
		}
		n, err := p.newNode(kind, p.pos)
		if err != nil {
			return nil, err
		}
		n.Flow = true
		p.pos++
		p.stack = append(p.stack, n)
		p.keys = append(p.keys, nil)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == closer {
			return p.close(), nil
		}
		if kind == MapNode {
			return nil, p.key()
		}
		return nil, nil
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		return p.literal()
	default:
		return nil, p.errAt(p.pos, "invalid %s looking for beginning of value", describeByte(p.data, p.pos))
	}
}

// afterMember reads what follows a member of the innermost collection: a
// comma and the next key, or the closing bracket. It returns the closed
// collection, or nil when a value comes next.
func (p *jsonParser) afterMember() (*Node, error) {
	top := p.stack[len(p.stack)-1]
	closer, what := byte('}'), "',' or '}' after object member"
	if top.Kind == SeqNode {
		closer, what = ']', "',' or ']' after array element"
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos >= len(p.data) {
		return nil, p.errAt(p.pos, "unexpected end of input, expected %s", what)
	}
	switch p.data[p.pos] {
	case closer:
		return p.close(), nil
	case ',':
		comma := p.pos
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == closer {
			p.f.Lenient = append(p.f.Lenient, LenientNote{Pos: p.cur.at(comma), What: LenientTrailingComma})
			return p.close(), nil
		}
		if top.Kind == MapNode {
			return nil, p.key()
		}
		return nil, nil
	}
	return nil, p.errAt(p.pos, "expected %s, found %s", what, describeByte(p.data, p.pos))
}

// close ends the innermost collection at the closing bracket under p.pos.
func (p *jsonParser) close() *Node {
	n := p.stack[len(p.stack)-1]
	p.pos++
	n.End = p.cur.at(p.pos)
	p.stack = p.stack[:len(p.stack)-1]
	p.keys = p.keys[:len(p.keys)-1]
	return n
}

// key reads an object key and the colon after it.
func (p *jsonParser) key() error {
	if p.pos >= len(p.data) {
		return p.errAt(p.pos, "unexpected end of input, expected an object key string")
	}
	if p.data[p.pos] != '"' {
		return p.errAt(p.pos, "invalid %s looking for beginning of object key string", describeByte(p.data, p.pos))
	}
	k, err := p.str()
	if err != nil {
		return err
	}
	p.keys[len(p.keys)-1] = k
	if err := p.space(); err != nil {
		return err
	}
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return p.errAt(p.pos, "expected ':' after object key, found %s", describeByte(p.data, p.pos))
	}
	p.pos++
	return nil
}

func (p *jsonParser) newNode(kind NodeKind, start int) (*Node, error) {
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		return nil, p.f.limitAt(start, "document has more than %d nodes", p.lim.MaxNodes)
	}
	return &Node{Kind: kind, Start: p.cur.at(start)}, nil
}

// space skips white space and hjson comments, recording the comments.
func (p *jsonParser) space() error {
	d := p.data
	for p.pos < len(d) {
		switch c := d[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '#' || (c == '/' && p.pos+1 < len(d) && d[p.pos+1] == '/'):
			p.f.Lenient = append(p.f.Lenient, LenientNote{Pos: p.cur.at(p.pos), What: LenientComment})
			for p.pos < len(d) && d[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(d) && d[p.pos+1] == '*':
			start := p.pos
			p.f.Lenient = append(p.f.Lenient, LenientNote{Pos: p.cur.at(p.pos), What: LenientComment})
			end := bytes.Index(d[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.errAt(start, "unterminated /* comment")
			}
			p.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) str() (*Node, error) {
	start := p.pos
	n, err := p.newNode(ScalarNode, start)
	if err != nil {
		return nil, err
	}
	d := p.data
	var buf []byte
	i, plain := start+1, start+1
	for {
		if i >= len(d) {
			return nil, p.errAt(start, "unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			var text string
			if buf == nil {
				text = string(d[plain:i])
			} else {
				text = string(append(buf, d[plain:i]...))
			}
			p.pos = i + 1
			n.End = p.cur.at(p.pos)
			n.Style, n.Tag, n.Text, n.Value = DoubleQuoted, "str", text, text
			return n, nil
		case c == '\\':
			buf = append(buf, d[plain:i]...)
			var size int
			buf, size, err = p.escape(buf, i)
			if err != nil {
				return nil, err
			}
			i += size
			plain = i
		case c == '\n' || c == '\r':
			return nil, p.errAt(start, "unterminated string (line break before the closing quote)")
		case c < 0x20:
			return nil, p.errAt(i, "invalid control character U+%04X in string", c)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.errAt(i, "%s (byte 0x%02x)", msgStringUTF8, c)
			}
			i += size
		}
	}
}

// escape decodes the escape sequence at d[i] (a backslash), appends it to
// buf and returns its length in the source.
func (p *jsonParser) escape(buf []byte, i int) ([]byte, int, error) {
	d := p.data
	if i+1 >= len(d) {
		return nil, 0, p.errAt(i, "unterminated string")
	}
	switch c := d[i+1]; c {
	case '"', '\\', '/':
		return append(buf, c), 2, nil
	case 'b':
		return append(buf, '\b'), 2, nil
	case 'f':
		return append(buf, '\f'), 2, nil
	case 'n':
		return append(buf, '\n'), 2, nil
	case 'r':
		return append(buf, '\r'), 2, nil
	case 't':
		return append(buf, '\t'), 2, nil
	case 'u':
		r, ok := hex4(d, i+2)
		if !ok {
			return nil, 0, p.errAt(i, "invalid \\u escape in string: want four hex digits")
		}
		size := 6
		if utf16.IsSurrogate(r) {
			r2, ok := rune(-1), false
			if i+7 < len(d) && d[i+6] == '\\' && d[i+7] == 'u' {
				r2, ok = hex4(d, i+8)
			}
			if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
				r, size = dec, 12
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(buf, r), size, nil
	}
	return nil, 0, p.errAt(i, "invalid escape sequence %q in string", string(d[i:i+2]))
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d[i:i+4]), 16, 32)
	return rune(v), err == nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *jsonParser) number() (*Node, error) {
	d := p.data
	start, i := p.pos, p.pos
	if d[i] == '-' {
		i++
	}
	digits := func(what string) error {
		if i >= len(d) || !isDigit(d[i]) {
			return p.errAt(i, "invalid number: expected a digit %s, found %s", what, describeByte(d, i))
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
		return nil
	}
	if i < len(d) && d[i] == '0' {
		i++
	} else if err := digits("after '-'"); err != nil {
		return nil, err
	}
	isFloat := false
	if i < len(d) && d[i] == '.' {
		i++
		isFloat = true
		if err := digits("after the decimal point"); err != nil {
			return nil, err
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		isFloat = true
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if err := digits("in the exponent"); err != nil {
			return nil, err
		}
	}
	if i < len(d) && (isDigit(d[i]) || isIdentByte(d[i]) || d[i] == '.') {
		return nil, p.errAt(i, "invalid %s in number", describeByte(d, i))
	}
	n, err := p.newNode(ScalarNode, start)
	if err != nil {
		return nil, err
	}
	p.pos = i
	n.End = p.cur.at(i)
	n.Text = string(d[start:i])
	n.Tag, n.Value = "float", nil
	if !isFloat {
		if v, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
			n.Tag, n.Value = "int", v
		}
	}
	if n.Value == nil {
		v, _ := strconv.ParseFloat(n.Text, 64) // the grammar was checked; overflow gives ±Inf
		n.Value = v
	}
	return n, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf
}

func (p *jsonParser) literal() (*Node, error) {
	d := p.data
	start := p.pos
	for _, lit := range [...]struct {
		text string
		tag  string
		val  any
	}{{"true", "bool", true}, {"false", "bool", false}, {"null", "null", nil}} {
		if lit.text[0] != d[start] {
			continue
		}
		end := start + len(lit.text)
		if end > len(d) || string(d[start:end]) != lit.text || (end < len(d) && (isIdentByte(d[end]) || isDigit(d[end]))) {
			return nil, p.errAt(start, "invalid literal, expected %s", lit.text)
		}
		n, err := p.newNode(ScalarNode, start)
		if err != nil {
			return nil, err
		}
		p.pos = end
		n.End = p.cur.at(end)
		n.Tag, n.Text, n.Value = lit.tag, lit.text, lit.val
		return n, nil
	}
	return nil, p.errAt(start, "invalid %s looking for beginning of value", describeByte(d, start))
}
