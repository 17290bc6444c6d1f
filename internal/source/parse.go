package source

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gpulint/gpulint/internal/finding"
)

// binarySniffLen is how much of a file is searched for NUL bytes to tell a
// binary file from text, the same window git uses.
const binarySniffLen = 8 << 10

// Parse parses data as JSON or YAML and keeps the position of every node.
//
// The syntax is chosen by the file name first: ".json" files are JSON
// (with hjson's comments and trailing commas tolerated and recorded in
// File.Lenient), ".yaml" and ".yml" files are YAML, because the programs
// that read them use a YAML 1.1 loader even when the text is brace-delimited
// (gpt-neox). Any other name is sniffed: content that starts with '{' or '['
// and parses as JSON is JSON, anything else is YAML.
//
// Parse always returns a non-nil File. On error the File holds the documents
// that parsed before the error, and the error is a *Error with the
// position: a file over lim.MaxBytes, a binary file (NUL bytes in the first
// 8 KiB, invalid UTF-8 outside JSON strings), a syntax error, or a limit
// exceeded. Zero fields of lim take their DefaultLimits values. An empty or
// comment-only YAML file has no documents and no error.
func Parse(path string, data []byte, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return &File{Path: path, Data: data}, sizeError(path, len(data), lim.MaxBytes)
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return &File{Path: path, Data: data}, &Error{File: path, Pos: startPos, Msg: "binary file (NUL byte in the first 8 KiB)"}
	}
	bad := invalidUTF8(data)
	asJSON := func() (*File, error) {
		f, err := ParseJSON(path, data, lim)
		if err != nil && bad >= 0 && !isStringUTF8Error(err) {
			return f, binaryUTF8Error(f, bad)
		}
		return f, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".jsonc", ".hjson":
		return asJSON()
	case ".yaml", ".yml":
		if bad >= 0 {
			f := newFile(path, data, FormatYAML)
			return f, binaryUTF8Error(f, bad)
		}
		return ParseYAML(path, data, lim)
	}
	if looksLikeJSON(data) {
		f, err := asJSON()
		if err == nil {
			return f, nil
		}
		if bad >= 0 {
			return f, err
		}
		if y, yerr := ParseYAML(path, data, lim); yerr == nil {
			return y, nil
		}
		return f, err
	}
	if bad >= 0 {
		f := newFile(path, data, FormatYAML)
		return f, binaryUTF8Error(f, bad)
	}
	return ParseYAML(path, data, lim)
}

var startPos = finding.Pos{Offset: 0, Line: 1, Col: 1}

func sizeError(path string, n int, limit int64) *Error {
	return &Error{File: path, Pos: startPos, Msg: fmt.Sprintf("file is %d bytes, over the %d-byte limit", n, limit), Limit: true}
}

func binaryUTF8Error(f *File, off int) *Error {
	p := f.PosAt(off)
	return &Error{File: f.Path, Pos: startPos, Msg: fmt.Sprintf(
		"binary file (invalid UTF-8 byte 0x%02x at line %d, column %d)", f.Data[off], p.Line, p.Col)}
}

// withDefaults fills zero (or negative) limits from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = d.MaxNodes
	}
	return l
}

// invalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// looksLikeJSON reports whether the first significant character, after a
// BOM, white space and comments, opens a JSON object or array.
func looksLikeJSON(data []byte) bool {
	i := bomLen(data)
	for i < len(data) {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#' || (c == '/' && i+1 < len(data) && data[i+1] == '/'):
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return false
			}
			i += end + 4
		default:
			return c == '{' || c == '['
		}
	}
	return false
}

func bomLen(data []byte) int {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return 3
	}
	return 0
}

func newFile(path string, data []byte, format Format) *File {
	return &File{Path: path, Data: data, Format: format, Lines: lineStarts(data)}
}

// lineStarts returns the offset at which each line starts. Lines end at
// '\n'; a "\r\n" pair belongs to the line it ends.
func lineStarts(data []byte) []int {
	lines := make([]int, 1, bytes.Count(data, []byte{'\n'})+1)
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return lines
		}
		i += j + 1
		lines = append(lines, i)
	}
}

// PosAt returns the position of a byte offset. Offsets outside the data are
// clamped to it. Col counts bytes, so a key after a UTF-8 BOM on line 1 is
// at column 4.
func (f *File) PosAt(offset int) finding.Pos {
	offset = max(0, min(offset, len(f.Data)))
	lines := f.Lines
	if lines == nil {
		lines = lineStarts(f.Data[:offset])
	}
	i := sort.Search(len(lines), func(i int) bool { return lines[i] > offset }) - 1
	return finding.Pos{Offset: offset, Line: i + 1, Col: offset - lines[i] + 1}
}

// posCursor turns offsets into positions; it is fast when offsets come
// mostly in increasing order, as they do while parsing.
type posCursor struct {
	lines []int
	i     int
}

func (c *posCursor) at(off int) finding.Pos {
	if off < c.lines[c.i] {
		c.i = sort.Search(len(c.lines), func(i int) bool { return c.lines[i] > off }) - 1
	}
	for c.i+1 < len(c.lines) && c.lines[c.i+1] <= off {
		c.i++
	}
	return finding.Pos{Offset: off, Line: c.i + 1, Col: off - c.lines[c.i] + 1}
}

// errAt builds a *Error at offset off of f.
func (f *File) errAt(off int, format string, args ...any) *Error {
	return &Error{File: f.Path, Pos: f.PosAt(off), Msg: fmt.Sprintf(format, args...)}
}

// limitAt is errAt for a safety limit (depth, nodes, size) rather than a
// syntax error.
func (f *File) limitAt(off int, format string, args ...any) *Error {
	e := f.errAt(off, format, args...)
	e.Limit = true
	return e
}

// describeByte names the character at data[i] for an error message.
func describeByte(data []byte, i int) string {
	if i >= len(data) {
		return "end of input"
	}
	c := data[i]
	switch {
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("character %q", rune(c))
	case c < utf8.RuneSelf:
		return fmt.Sprintf("character U+%04X", c)
	}
	r, size := utf8.DecodeRune(data[i:])
	if r == utf8.RuneError && size == 1 {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return fmt.Sprintf("character %q", r)
}
