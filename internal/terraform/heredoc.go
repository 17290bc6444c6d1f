// Package terraform reads what gpulint needs from Terraform files without
// running Terraform: the heredoc templates that carry YAML documents
// (Helm values, kubectl_manifest bodies), with their interpolations read as
// unknown values and their positions kept as in the .tf file.
//
// Syntax facts are from the HCL native syntax specification
// (hashicorp/hcl hclsyntax/spec.md at 0751c4dd53b4457e48032205d14242eff76b4040):
// comments are `#` and `//` to the end of the line and `/* ... */`; a
// heredoc template is introduced by `<<` or `<<-` and an identifier that
// ends its line, and ends at the next line holding only that identifier,
// which may be preceded by spaces; a template interpolation is `${ ... }`
// and a directive `%{ ... }` (if/else/endif, for/endfor), `$${` and `%%{`
// being the literal text `${` and `%{`.
package terraform

import (
	"bytes"
)

// Heredoc is one heredoc template of a Terraform file.
type Heredoc struct {
	Marker   string // the identifier that ends it
	Indented bool   // introduced by <<-
	// Start and End delimit the body in the file: from the first byte of
	// the line after the opener to the first byte of the closing line.
	Start, End int
	// Unknown are the byte ranges of the file, within the body, of the
	// template sequences written inside a line's text: an interpolation
	// or a directive block (if ... endif, for ... endfor) whose value is
	// known only when Terraform runs.
	Unknown [][2]int
	// blank are the ranges of template sequences that take whole lines:
	// they contribute no text of their own to the YAML view.
	blank [][2]int
}

// Limits of the reader: a hostile file costs at most a linear scan.
const (
	// maxNesting bounds the nesting of interpolations inside quoted
	// strings inside interpolations.
	maxNesting = 32
)

// Heredocs returns the heredoc templates of a Terraform file, at most max
// of them (0: no limit), in file order, each with the template sequences
// of its body. An unterminated heredoc (a syntax error for Terraform) is
// left out, and so is a body with an unterminated template sequence.
func Heredocs(data []byte, max int) []Heredoc {
	var out []Heredoc
	inComment := false // inside /* ... */
	for off := 0; off < len(data); {
		line, next := lineAt(data, off)
		marker, indented, open := opener(line, &inComment)
		if !open {
			off = next
			continue
		}
		h := Heredoc{Marker: marker, Indented: indented, Start: next, End: -1}
		for p := next; p < len(data); {
			l, n := lineAt(data, p)
			if string(bytes.TrimLeft(trimEOL(l), " \t")) == marker {
				h.End = p
				next = n
				break
			}
			p = n
		}
		if h.End < 0 {
			return out // unterminated: Terraform rejects the file from here on
		}
		if h.scanTemplates(data) {
			out = append(out, h)
			if max > 0 && len(out) >= max {
				return out
			}
		}
		off = next
	}
	return out
}

// lineAt returns the line starting at off (with its newline) and the
// offset of the next line.
func lineAt(data []byte, off int) ([]byte, int) {
	i := bytes.IndexByte(data[off:], '\n')
	if i < 0 {
		return data[off:], len(data)
	}
	return data[off : off+i+1], off + i + 1
}

func trimEOL(l []byte) []byte {
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r"))
}

// opener reports whether a line of HCL (outside any heredoc) ends with a
// heredoc opener, `<<EOT` or `<<-EOT`, outside comments and quoted
// strings; inComment carries a /* ... */ comment across lines.
func opener(line []byte, inComment *bool) (marker string, indented, ok bool) {
	line = trimEOL(line)
	inString := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case *inComment:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				*inComment = false
				i++
			}
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '#', c == '/' && i+1 < len(line) && line[i+1] == '/':
			return "", false, false
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			*inComment = true
			i++
		case c == '<' && i+1 < len(line) && line[i+1] == '<':
			j := i + 2
			dash := j < len(line) && line[j] == '-'
			if dash {
				j++
			}
			k := j
			for k < len(line) && isIdent(line[k], k == j) {
				k++
			}
			if k > j && len(bytes.TrimRight(line[k:], " \t")) == 0 {
				return string(line[j:k]), dash, true
			}
			i++
		}
	}
	return "", false, false
}

// isIdent reports whether c may stand in a heredoc identifier (ASCII
// letters, digits after the first, '_' and '-').
func isIdent(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c >= '0' && c <= '9', c == '-':
		return !first
	}
	return false
}

// scanTemplates records the body's template sequences: each
// interpolation, and each directive block from its if or for to the
// matching endif or endfor. A sequence that takes its lines whole (only
// blanks before it on its first line and after it on its last) is blank;
// one inside a line's text is unknown. It reports false when a sequence
// is not closed within the body.
func (h *Heredoc) scanTemplates(data []byte) bool {
	body := data[:h.End]
	depth := 0      // open if/for directives
	blockStart := 0 // start of the outermost open directive block
	for i := h.Start; i < h.End; i++ {
		c := body[i]
		if (c != '$' && c != '%') || i+1 >= h.End || body[i+1] != '{' {
			continue
		}
		if i > h.Start && body[i-1] == c {
			continue // $${ or %%{: literal text
		}
		end, ok := skipSequence(body, i+2, 0)
		if !ok {
			return false
		}
		if c == '$' {
			if depth == 0 {
				h.add(body, i, end)
			}
			i = end - 1
			continue
		}
		switch directiveWord(body[i+2 : end-1]) {
		case "if", "for":
			if depth == 0 {
				blockStart = i
			}
			depth++
		case "endif", "endfor":
			depth--
			if depth < 0 {
				return false
			}
			if depth == 0 {
				h.add(body, blockStart, end)
			}
		default: // else, or a word Terraform rejects
			if depth == 0 {
				return false
			}
		}
		i = end - 1
	}
	return depth == 0
}

// add records the sequence [s, e) as blank or unknown.
func (h *Heredoc) add(body []byte, s, e int) {
	ls := bytes.LastIndexByte(body[:s], '\n') + 1
	le := len(body)
	if j := bytes.IndexByte(body[e:], '\n'); j >= 0 {
		le = e + j
	}
	if len(bytes.TrimSpace(body[ls:s])) == 0 && len(bytes.TrimSpace(body[e:le])) == 0 {
		h.blank = append(h.blank, [2]int{s, e})
		return
	}
	h.Unknown = append(h.Unknown, [2]int{s, e})
}

// directiveWord returns the keyword of a directive's content, its strip
// markers (~) and blanks aside.
func directiveWord(in []byte) string {
	in = bytes.TrimSpace(bytes.Trim(bytes.TrimSpace(in), "~"))
	if i := bytes.IndexAny(in, " \t\r\n"); i >= 0 {
		in = in[:i]
	}
	return string(in)
}

// skipSequence returns the offset after the `}` that closes a template
// sequence whose content starts at i: braces nest, and quoted strings
// (with their escapes and their own sequences) are skipped whole.
func skipSequence(data []byte, i, nesting int) (int, bool) {
	if nesting > maxNesting {
		return 0, false
	}
	braces := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '{':
			braces++
		case '}':
			if braces == 0 {
				return i + 1, true
			}
			braces--
		case '"':
			end, ok := skipQuoted(data, i+1, nesting+1)
			if !ok {
				return 0, false
			}
			i = end - 1
		}
	}
	return 0, false
}

// skipQuoted returns the offset after the quote that closes a quoted
// template whose text starts at i.
func skipQuoted(data []byte, i, nesting int) (int, bool) {
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '\\':
			i++
		case '\n':
			return 0, false // a quoted template is one line
		case '"':
			return i + 1, true
		case '$', '%':
			if i+1 < len(data) && data[i+1] == '{' {
				if data[i-1] == c {
					continue // $${ or %%{: literal text
				}
				end, ok := skipSequence(data, i+2, nesting)
				if !ok {
					return 0, false
				}
				i = end - 1
			}
		}
	}
	return 0, false
}

// YAML returns the text a YAML reader should see for the heredoc's body:
// the file's first h.End bytes with every byte outside the body a blank
// (newlines kept), each template sequence that takes whole lines blank,
// and each one inside a line's text an opaque run of 'x' (newlines kept)
// whose scalar the reader must treat as unknown (h.Unknown). Offsets,
// lines and columns are the .tf file's.
func (h Heredoc) YAML(data []byte) []byte {
	out := make([]byte, h.End)
	for i := range out {
		if data[i] == '\n' {
			out[i] = '\n'
		} else {
			out[i] = ' '
		}
	}
	copy(out[h.Start:], data[h.Start:h.End])
	fill := func(spans [][2]int, b byte) {
		for _, sp := range spans {
			for i := sp[0]; i < sp[1]; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = b
				}
			}
		}
	}
	fill(h.blank, ' ')
	fill(h.Unknown, 'x')
	return out
}
