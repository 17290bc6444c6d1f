package source

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// refineLimit bounds the text searched for the exact position of a YAML
// syntax error; larger documents get the line yaml.v3 reports.
const refineLimit = 256 << 10

// splitYAMLError splits yaml.v3's "yaml: line N: msg" into msg and N (0
// when the message has no line).
func splitYAMLError(s string) (msg string, line int) {
	s = strings.TrimPrefix(s, "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return tail, n
			}
		}
	}
	return s, 0
}

// syntaxError turns a yaml.v3 error into a positioned *Error. yaml.v3 only
// reports a line, and for many errors the line where the enclosing
// collection starts (or that line minus one), so the position is refined:
// the shortest prefix of the document (from base, where the broken
// document's text begins) that fails with the same message ends at the
// character yaml.v3 stumbled on. Nesting beyond yaml.v3's own depth limit
// keeps the reported line: re-parsing 10,000 levels per probe is slow.
func (c *yamlConv) syntaxError(err error, base int) error {
	msg, line := splitYAMLError(err.Error())
	data := c.f.Data
	off := -1
	if name, ok := unknownAnchor(msg); ok {
		off = findAlias(data, base, name)
	}
	depth := strings.HasPrefix(msg, "exceeded max depth of")
	if off < 0 && !depth && len(data)-base <= refineLimit {
		lower := base
		if line > 1 {
			lower = max(base, c.ix.lineOffset(line-1))
		}
		off = refineYAMLError(data, base, lower, msg)
	}
	if off < 0 {
		off = base
		if line > 0 {
			off = c.ix.lineOffset(line)
		}
	}
	if depth && c.lim.MaxDepth < 10000 {
		msg = "nesting depth exceeds the limit of " + strconv.Itoa(c.lim.MaxDepth)
	}
	if depth {
		return c.f.limitAt(off, "%s", msg)
	}
	return c.errAt(off, "%s", msg)
}

// unknownAnchor extracts the name from yaml.v3's "unknown anchor 'x'
// referenced".
func unknownAnchor(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "unknown anchor '")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "' referenced")
}

// findAlias returns the offset of the first "*name" alias after base, or
// -1.
func findAlias(data []byte, base int, name string) int {
	needle := []byte("*" + name)
	for i := base; i < len(data); {
		j := bytes.Index(data[i:], needle)
		if j < 0 {
			return -1
		}
		at := i + j
		end := at + len(needle)
		if end == len(data) || isSpaceTab(data[end]) || breakLen(data, end) > 0 || strings.IndexByte(",]}", data[end]) >= 0 {
			return at
		}
		i = at + 1
	}
	return -1
}

// refineYAMLError returns the offset of the character at which parsing
// data[base:] starts failing with msg, searching no earlier than lower, or
// -1 when the failure cannot be reproduced.
func refineYAMLError(data []byte, base, lower int, msg string) int {
	fails := func(end int) bool { return yamlFailsWith(data[base:end], msg) }
	if !fails(len(data)) {
		return -1
	}
	// Ends of lines from lower on; the last candidate is the end of data.
	var ends []int
	for i := lower; i < len(data); {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		ends = append(ends, i)
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	k := sort.Search(len(ends), func(k int) bool { return fails(ends[k]) })
	lineStart := lower
	if k > 0 {
		lineStart = ends[k-1]
	}
	// Character boundaries within the line.
	var cuts []int
	for i := lineStart; i < ends[k]; {
		_, size := utf8.DecodeRune(data[i:])
		i += size
		cuts = append(cuts, i)
	}
	j := sort.Search(len(cuts), func(j int) bool { return fails(cuts[j]) })
	if j == len(cuts) {
		return lineStart
	}
	prev := lineStart
	if j > 0 {
		prev = cuts[j-1]
	}
	return prev
}

// yamlFailsWith reports whether decoding data fails with message msg.
func yamlFailsWith(data []byte, msg string) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var yn yaml.Node
		err := decodeYAML(dec, &yn)
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			m, _ := splitYAMLError(err.Error())
			return m == msg
		}
	}
}
