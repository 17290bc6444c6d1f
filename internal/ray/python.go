package ray

import (
	"strconv"
	"strings"
	"unicode"
)

// A small reader for the Python a Ray job's entrypoint runs: enough to
// find a call by name and read its keyword arguments when they are
// literals (strings, numbers, booleans, dict(...) and {...} of literals)
// or module-level names bound to a literal or to an environment variable
// (os.environ["X"], os.environ.get("X", default), os.getenv("X")).
// Anything else is left out, never guessed.

type token struct {
	kind     byte // 'i' identifier, 's' string, 'n' number, 'p' punctuation
	text     string
	off, end int
	line     int // the line the token ends on
}

// tokenize splits Python source into tokens, dropping comments and
// whitespace; an f-string is a string token with text "\x00" (unknown).
func tokenize(src string) []token {
	var out []token
	i := 0
	defer func() {
		line, at := 1, 0
		for k := range out {
			line += strings.Count(src[at:out[k].end], "\n")
			at = out[k].end
			out[k].line = line
		}
	}()
	for i < len(src) {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\':
			i++
		case c == '"' || c == '\'' || (isPrefix(src, i) && i+1 < len(src)):
			start := i
			prefix := ""
			for i < len(src) && src[i] != '"' && src[i] != '\'' {
				prefix += string(src[i])
				i++
			}
			if i >= len(src) {
				return out
			}
			q := string(src[i])
			if strings.HasPrefix(src[i:], q+q+q) {
				q = q + q + q
			}
			i += len(q)
			body := i
			for i < len(src) && !strings.HasPrefix(src[i:], q) {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			text := src[body:min(i, len(src))]
			i += len(q)
			if strings.ContainsAny(strings.ToLower(prefix), "f") {
				text = "\x00"
			} else if !strings.ContainsAny(strings.ToLower(prefix), "r") {
				if u, err := strconv.Unquote(`"` + strings.ReplaceAll(text, `"`, `\"`) + `"`); err == nil {
					text = u
				}
			}
			out = append(out, token{kind: 's', text: text, off: start, end: min(i, len(src))})
		case c == '_' || unicode.IsLetter(rune(c)):
			start := i
			for i < len(src) && (src[i] == '_' || src[i] == '.' || unicode.IsLetter(rune(src[i])) || unicode.IsDigit(rune(src[i]))) {
				i++
			}
			out = append(out, token{kind: 'i', text: src[start:i], off: start, end: i})
		case unicode.IsDigit(rune(c)):
			start := i
			for i < len(src) && (unicode.IsDigit(rune(src[i])) || strings.ContainsRune("._eE+-xXabcdefABCDEF", rune(src[i]))) {
				if (src[i] == '+' || src[i] == '-') && src[i-1] != 'e' && src[i-1] != 'E' {
					break
				}
				i++
			}
			out = append(out, token{kind: 'n', text: src[start:i], off: start, end: i})
		default:
			out = append(out, token{kind: 'p', text: string(c), off: i, end: i + 1})
			i++
		}
	}
	return out
}

// isPrefix reports a string prefix (r, b, f, u and their pairs) at i.
func isPrefix(src string, i int) bool {
	j := i
	for j < len(src) && j-i < 2 && strings.ContainsRune("rRbBfFuU", rune(src[j])) {
		j++
	}
	if i > 0 && (src[i-1] == '_' || unicode.IsLetter(rune(src[i-1])) || unicode.IsDigit(rune(src[i-1]))) {
		return false
	}
	return j > i && j < len(src) && (src[j] == '"' || src[j] == '\'')
}

// pyValue is a literal read from Python: string, int64, float64, bool,
// nil (None), map[string]pyArg (a dict), or envRef (an environment
// variable with an optional default).
type pyArg struct {
	value    any
	off, end int
}

type envRef struct {
	name string
	def  *pyArg
}

// convert is int(...) or float(...) around a value.
type convert struct {
	to    string
	inner pyArg
}

// unknown marks an expression the reader does not evaluate.
type unknown struct{}

type pyParser struct {
	toks []token
	pos  int
	// stmt: the expression is a statement's right-hand side, which ends
	// with its line.
	stmt bool
}

func (p *pyParser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *pyParser) next() token {
	t := p.peek()
	p.pos++
	return t
}

func (p *pyParser) is(kind byte, text string) bool {
	t := p.peek()
	return t.kind == kind && t.text == text
}

// expr reads one argument expression up to the next top-level comma or
// closing bracket.
func (p *pyParser) expr() pyArg {
	start := p.peek()
	v := p.atom()
	if p.stmt && p.pos > 0 && p.pos < len(p.toks) && p.peek().line > p.toks[p.pos-1].line {
		return v
	}
	// Anything after the atom (an operator, a call on it, an index) makes
	// the expression unknown; skip to the argument's end.
	if t := p.peek(); !(t.kind == 'p' && strings.Contains(",)]}", t.text)) && t.kind != 0 {
		v.value = unknown{}
		p.skip()
	}
	if v.off == 0 && v.end == 0 {
		v.off, v.end = start.off, start.end
	}
	return v
}

// skip advances to the next top-level comma or closing bracket.
func (p *pyParser) skip() {
	depth := 0
	for p.pos < len(p.toks) {
		t := p.peek()
		if t.kind == 'p' {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return
				}
				depth--
			case ",":
				if depth == 0 {
					return
				}
			}
		}
		p.pos++
	}
}

func (p *pyParser) atom() pyArg {
	t := p.next()
	a := pyArg{off: t.off, end: t.end, value: unknown{}}
	switch t.kind {
	case 's':
		a.value = t.text
		for p.peek().kind == 's' { // implicit concatenation
			n := p.next()
			if s, ok := a.value.(string); ok && n.text != "\x00" && s != "\x00" {
				a.value = s + n.text
			}
			a.end = n.end
		}
		if a.value == "\x00" {
			a.value = unknown{}
		}
	case 'n':
		if n, err := strconv.ParseInt(strings.ReplaceAll(t.text, "_", ""), 0, 64); err == nil {
			a.value = n
		} else if f, err := strconv.ParseFloat(strings.ReplaceAll(t.text, "_", ""), 64); err == nil {
			a.value = f
		}
	case 'i':
		switch t.text {
		case "True":
			a.value = true
		case "False":
			a.value = false
		case "None":
			a.value = nil
		case "dict":
			if p.is('p', "(") {
				p.next()
				m, end := p.kwargs()
				a.value, a.end = m, end
			}
		case "os.environ.get", "os.getenv":
			if p.is('p', "(") {
				p.next()
				name := p.expr()
				ref := envRef{}
				if s, ok := name.value.(string); ok {
					ref.name = s
				}
				if p.is('p', ",") {
					p.next()
					d := p.expr()
					ref.def = &d
				}
				p.skip()
				if e := p.next(); e.kind == 'p' {
					a.end = e.end
				}
				if ref.name != "" {
					a.value = ref
				}
			}
		case "int", "float":
			// int(x) / float(x) of a literal or an environment lookup: the
			// value converted, so env var strings read as numbers.
			if p.is('p', "(") {
				p.next()
				inner := p.expr()
				if e := p.next(); e.kind == 'p' && e.text == ")" {
					a.end = e.end
					a.value = convert{to: t.text, inner: inner}
				} else {
					p.pos--
				}
			}
		case "os.environ":
			if p.is('p', "[") {
				p.next()
				name := p.expr()
				if e := p.next(); e.kind == 'p' {
					a.end = e.end
				}
				if s, ok := name.value.(string); ok {
					a.value = envRef{name: s}
				}
			}
		default:
			a.value = name(t.text)
		}
	case 'p':
		if t.text == "{" {
			m := map[string]pyArg{}
			for !p.is('p', "}") && p.pos < len(p.toks) {
				k := p.expr()
				if !p.is('p', ":") {
					p.skip()
				} else {
					p.next()
					v := p.expr()
					if s, ok := k.value.(string); ok {
						m[s] = v
					}
				}
				if p.is('p', ",") {
					p.next()
				}
			}
			if e := p.next(); e.kind == 'p' {
				a.end = e.end
			}
			a.value = m
		} else {
			p.pos-- // not a value this reader knows
			p.skip()
		}
	}
	return a
}

// name is a bare identifier, resolved against module-level assignments.
type name string

// kwargs reads keyword arguments after an opening parenthesis, through
// the closing one; positional arguments are skipped.
func (p *pyParser) kwargs() (map[string]pyArg, int) {
	m := map[string]pyArg{}
	end := 0
	for p.pos < len(p.toks) {
		if p.is('p', ")") {
			end = p.next().end
			break
		}
		t := p.peek()
		if t.kind == 'p' && t.text == "*" {
			// *args or **kwargs: names this reader cannot see may be set.
			m["**"] = pyArg{value: unknown{}, off: t.off, end: t.end}
			p.skip()
		} else if t.kind == 'i' && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == 'p' && p.toks[p.pos+1].text == "=" &&
			!(p.pos+2 < len(p.toks) && p.toks[p.pos+2].text == "=") {
			p.pos += 2
			m[t.text] = p.expr()
		} else {
			p.expr()
		}
		if p.is('p', ",") {
			p.next()
		}
	}
	return m, end
}

// pyCalls finds the calls of fn (by its last dotted name) in src and
// reads each one's keyword arguments; module-level assignments NAME =
// <literal or env lookup> resolve bare names.
type pyCall struct {
	off, end int // the callee's name
	kw       map[string]pyArg
}

func pyCalls(src, fn string) []pyCall {
	toks := tokenize(src)
	globals := map[string]pyArg{}
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		if t.kind != 'i' || toks[i+1].text != "=" || toks[i+1].kind != 'p' || (i+2 < len(toks) && toks[i+2].text == "=") {
			continue
		}
		// Module level: the name starts its line, unindented.
		if t.off > 0 && src[t.off-1] != '\n' {
			continue
		}
		p := &pyParser{toks: toks, pos: i + 2, stmt: true}
		globals[t.text] = p.expr()
	}
	var out []pyCall
	for i, t := range toks {
		if t.kind != 'i' || (t.text != fn && !strings.HasSuffix(t.text, "."+fn)) || i+1 >= len(toks) || toks[i+1].text != "(" {
			continue
		}
		p := &pyParser{toks: toks, pos: i + 2}
		kw, _ := p.kwargs()
		for k, a := range kw {
			if n, ok := a.value.(name); ok {
				if g, ok := globals[string(n)]; ok {
					kw[k] = g
				}
			}
		}
		out = append(out, pyCall{off: t.off, end: t.end, kw: kw})
	}
	return out
}
