package source

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yamlIndex maps yaml.v3's positions (1-based line and column, counting
// characters and treating \r, \n, \r\n, NEL, LS and PS as line breaks, as
// its scanner does) to byte offsets. It remembers the last answer, so
// positions visited in document order cost O(1) each.
type yamlIndex struct {
	data  []byte
	lines []int // byte offset at which each yaml.v3 line starts

	line, col, off int // cursor: (line, col) is at byte off
}

func newYAMLIndex(data []byte) *yamlIndex {
	lines := make([]int, 1, bytes.Count(data, []byte{'\n'})+2)
	lines[0] = bomLen(data)
	ix := &yamlIndex{data: data, lines: lines}
	for i := ix.lines[0]; i < len(data); {
		if !breakStart[data[i]] {
			i++
			continue
		}
		n := breakLen(data, i)
		if n == 0 {
			i++
			continue
		}
		i += n
		ix.lines = append(ix.lines, i)
	}
	ix.line, ix.col, ix.off = 1, 1, ix.lines[0]
	return ix
}

// breakStart marks the bytes breakLen can find a line break at.
var breakStart = [256]bool{'\n': true, '\r': true, 0xc2: true, 0xe2: true}

// breakLen returns the length of the line break at data[i], or 0.
func breakLen(data []byte, i int) int {
	switch data[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(data) && data[i+1] == '\n' {
			return 2
		}
		return 1
	case 0xc2:
		if i+1 < len(data) && data[i+1] == 0x85 {
			return 2
		}
	case 0xe2:
		if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9) {
			return 3
		}
	}
	return 0
}

// offset returns the byte offset of yaml.v3's (line, col).
func (ix *yamlIndex) offset(line, col int) int {
	if line < 1 {
		return ix.lines[0]
	}
	if line > len(ix.lines) {
		return len(ix.data)
	}
	c, off := 1, ix.lines[line-1]
	if line == ix.line && col >= ix.col {
		c, off = ix.col, ix.off
	}
	for c < col && off < len(ix.data) && breakLen(ix.data, off) == 0 {
		if ix.data[off] < utf8.RuneSelf {
			off++
		} else {
			_, size := utf8.DecodeRune(ix.data[off:])
			off += size
		}
		c++
	}
	ix.line, ix.col, ix.off = line, c, off
	return off
}

// lineOffset returns the offset at which yaml.v3's line starts.
func (ix *yamlIndex) lineOffset(line int) int {
	return ix.offset(line, 1)
}

func isSpaceTab(c byte) bool { return c == ' ' || c == '\t' }

// skipProperties skips the anchor and tag at data[i] and returns the
// offset after the last property.
func skipProperties(data []byte, i int) int {
	end := i
	for {
		j := skipBlank(data, end)
		if j >= len(data) || (data[j] != '&' && data[j] != '!') {
			return end
		}
		end = propEnd(data, j)
	}
}

// propEnd returns the offset after the anchor or tag at data[j].
func propEnd(data []byte, j int) int {
	if data[j] == '!' && j+1 < len(data) && data[j+1] == '<' {
		k := j + 2
		for k < len(data) && data[k] != '>' {
			k++
		}
		return min(k+1, len(data))
	}
	// As yaml.v3 scans them: anchor names are letters, digits, '_' and
	// '-'; tags are those and URI characters.
	chars := "-_"
	if data[j] == '!' {
		chars = "-_;/?:@&=+$,.!~*'()[]%"
	}
	k := j + 1
	for k < len(data) && (isAlnum(data[k]) || strings.IndexByte(chars, data[k]) >= 0) {
		k++
	}
	return k
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skipBlank skips spaces, tabs, line breaks and comments.
func skipBlank(data []byte, i int) int {
	for i < len(data) {
		switch {
		case isSpaceTab(data[i]):
			i++
		case breakLen(data, i) > 0:
			i += breakLen(data, i)
		case data[i] == '#' && (i == 0 || isSpaceTab(data[i-1]) || breakLen(data, i-1) > 0 || data[i-1] == '\n'):
			for i < len(data) && breakLen(data, i) == 0 {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// scalarEnd returns the offset just after a scalar's text. start is the
// offset yaml.v3 reports for it (its first property, quote or character).
func scalarEnd(data []byte, start int, yn *yaml.Node) int {
	p := start
	if hasProperties(data, start) {
		p = skipProperties(data, start)
		empty := yn.Value == "" && yn.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
		if empty {
			return p
		}
		p = skipBlank(data, p)
	}
	if p >= len(data) {
		return len(data)
	}
	switch {
	case yn.Style&yaml.DoubleQuotedStyle != 0:
		for i := p + 1; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(data)
	case yn.Style&yaml.SingleQuotedStyle != 0:
		for i := p + 1; i < len(data); i++ {
			if data[i] == '\'' {
				if i+1 < len(data) && data[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return len(data)
	case yn.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return blockScalarEnd(data, p, yn.Value)
	}
	return plainEnd(data, p, yn.Value)
}

// plainEnd matches a plain scalar's value against the source starting at
// p. Plain scalars have no escapes; folding turns line breaks and the
// indentation around them into one space or into '\n's, so any run of
// white space in the value matches any run of white space and line breaks
// in the source.
func plainEnd(data []byte, p int, value string) int {
	i, j := 0, p
	for i < len(value) && j < len(data) {
		if isFoldSpace(value[i]) {
			if !isSpaceTab(data[j]) && breakLen(data, j) == 0 {
				return j
			}
			for i < len(value) && isFoldSpace(value[i]) {
				i++
			}
			for j < len(data) && (isSpaceTab(data[j]) || breakLen(data, j) > 0) {
				j += max(1, breakLen(data, j))
			}
			continue
		}
		if value[i] != data[j] {
			return j
		}
		i++
		j++
	}
	return j
}

func isFoldSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// blockScalarEnd returns the end of the last content line of a literal or
// folded block scalar whose header ('|' or '>') is at p. The content
// indentation is derived from the first line with text: its indentation
// in the source minus the spaces the decoded value keeps on it (which an
// explicit indentation indicator leaves there).
func blockScalarEnd(data []byte, p int, value string) int {
	end := p + 1
	for end < len(data) && end < p+3 && strings.IndexByte("+-123456789", data[end]) >= 0 {
		end++
	}
	keep, hasText := 0, false
	for _, line := range strings.Split(value, "\n") {
		if strings.TrimLeft(line, " \t") != "" {
			keep, hasText = len(line)-len(strings.TrimLeft(line, " ")), true
			break
		}
	}
	if !hasText {
		return end
	}
	indent := -1
	for ls := nextLine(data, end); ls < len(data); ls = nextLine(data, ls) {
		spaces := 0
		for ls+spaces < len(data) && data[ls+spaces] == ' ' {
			spaces++
		}
		le := ls + spaces
		for le < len(data) && breakLen(data, le) == 0 {
			le++
		}
		if strings.TrimLeft(string(data[ls+spaces:le]), " \t") == "" {
			continue // an empty line belongs to the scalar only if content follows
		}
		if indent < 0 {
			indent = max(spaces-keep, 0)
		}
		if spaces < indent || (spaces == 0 && isDocMarker(data, ls)) {
			break
		}
		end = le
	}
	return end
}

// isDocMarker reports whether the line at ls starts with "---" or "..."
// followed by a blank or the end of the line.
func isDocMarker(data []byte, ls int) bool {
	if ls+3 > len(data) {
		return false
	}
	m := string(data[ls : ls+3])
	if m != "---" && m != "..." {
		return false
	}
	return ls+3 == len(data) || isSpaceTab(data[ls+3]) || breakLen(data, ls+3) > 0
}

// nextLine returns the offset after the line break that ends the line
// holding offset i, or len(data).
func nextLine(data []byte, i int) int {
	for i < len(data) {
		if n := breakLen(data, i); n > 0 {
			return i + n
		}
		i++
	}
	return len(data)
}

// flowEnd returns the offset after the bracket closing a flow collection,
// searching from `from` (after the last child) and skipping commas, colons
// and comments. Only blanks, indicators and comments lie there, so every
// '#' starts a comment: yaml.v3 reads one even right after '{' ("{#}").
func flowEnd(data []byte, from int) int {
	for i := from; i < len(data); i++ {
		switch data[i] {
		case ']', '}':
			return i + 1
		case '#':
			for i < len(data) && breakLen(data, i) == 0 {
				i++
			}
		}
	}
	return len(data)
}

// flowOpen returns the offset of the opening bracket of a flow collection
// whose first property or bracket is at start.
func flowOpen(data []byte, start int) int {
	return skipBlank(data, skipProperties(data, start))
}
