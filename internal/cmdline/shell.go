package cmdline

import (
	"errors"
	"strings"
)

// Token is one word or operator of a shell script.
type Token struct {
	// Text is a word's value after quote removal, with expansions ($VAR,
	// ${...}, $(...), `...`) kept verbatim; an operator as written.
	Text string
	// Start and End are the byte offsets of the token as written in the
	// script, quotes included.
	Start, End int
	// Op marks operators: control operators (&& || ; ;; | |& & ( ) and
	// newline) and redirections (> >> < <& >& &> <<, with an optional
	// file-descriptor number such as 2>&1).
	Op bool
	// Dynamic marks words holding an unquoted or double-quoted expansion,
	// whose value is only known when the shell runs.
	Dynamic bool
}

// ErrUnterminated reports a quote, expansion or backtick that is never
// closed; ParseShell still returns the tokens, the last one running to the
// end of the script.
var ErrUnterminated = errors.New("unterminated quote or expansion")

// lexWord is a token plus, for words, the script offset each byte of Text
// was copied from.
type lexWord struct {
	Token
	offs []int
	// exps are the [from, to) byte ranges of Text holding an expansion
	// the shell performs ($VAR, ${...}, $(...), `...`); a $ in single
	// quotes is literal and not listed.
	exps [][2]int
}

// ParseShell splits a POSIX shell script into words and operators, keeping
// each token's byte offsets. It handles single and double quotes,
// backslash escapes, backslash-newline continuations and comments; it does
// not expand anything.
func ParseShell(script string) ([]Token, error) {
	lw, err := lexShell(script)
	out := make([]Token, len(lw))
	for i, w := range lw {
		out[i] = w.Token
	}
	return out, err
}

func lexShell(s string) ([]lexWord, error) {
	var toks []lexWord
	var err error
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\n':
			toks = append(toks, lexWord{Token: Token{Text: "\n", Start: i, End: i + 1, Op: true}})
			i++
		case isOpChar(c):
			n := opLen(s[i:])
			toks = append(toks, lexWord{Token: Token{Text: s[i : i+n], Start: i, End: i + n, Op: true}})
			i += n
		default:
			w, werr := lexOneWord(s, i)
			if werr != nil {
				err = werr
			}
			// A bare number right before < or > is a file descriptor.
			if w.End < len(s) && (s[w.End] == '<' || s[w.End] == '>') && isDigits(s[w.Start:w.End]) {
				n := opLen(s[w.End:])
				toks = append(toks, lexWord{Token: Token{Text: s[w.Start : w.End+n], Start: w.Start, End: w.End + n, Op: true}})
				i = w.End + n
				continue
			}
			toks = append(toks, w)
			i = w.End
		}
	}
	return toks, err
}

func isOpChar(c byte) bool { return strings.IndexByte("&|;()<>", c) >= 0 }

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// opLen returns the length of the operator at the start of s.
func opLen(s string) int {
	for _, op := range []string{"&>>", "<<-", "&&", "||", ";;", "|&", ">>", "<<", ">&", "<&", "&>", "<>", ">|"} {
		if strings.HasPrefix(s, op) {
			return len(op)
		}
	}
	return 1
}

// isRedirect reports whether an operator token is a redirection (which
// takes the next word as its target).
func isRedirect(op string) bool {
	op = strings.TrimLeft(op, "0123456789")
	return strings.ContainsAny(op, "<>")
}

// lexOneWord reads the word starting at s[i].
func lexOneWord(s string, i int) (lexWord, error) {
	w := lexWord{Token: Token{Start: i}}
	var b []byte
	add := func(j int) {
		b = append(b, s[j])
		w.offs = append(w.offs, j)
	}
	addRange := func(from, to int) {
		for j := from; j < to; j++ {
			add(j)
		}
	}
	var err error
loop:
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || isOpChar(c):
			break loop
		case c == '\\':
			switch {
			case i+1 >= len(s):
				add(i)
				i++
			case s[i+1] == '\n':
				// A continuation joins the word with what follows, unless
				// nothing of the word follows: then the word ends here.
				if i+2 >= len(s) || strings.IndexByte(" \t\r\n&|;()<>", s[i+2]) >= 0 {
					break loop
				}
				i += 2
			default:
				add(i + 1)
				i += 2
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				addRange(i+1, len(s))
				i = len(s)
				err = ErrUnterminated
				break loop
			}
			addRange(i+1, i+1+end)
			i += end + 2
		case c == '"':
			i++
			closed := false
			for i < len(s) {
				d := s[i]
				if d == '"' {
					i++
					closed = true
					break
				}
				switch {
				case d == '\\' && i+1 < len(s) && s[i+1] == '\n':
					i += 2
				case d == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0:
					add(i + 1)
					i += 2
				case d == '$' || d == '`':
					n, ok := expansionLen(s[i:])
					if n > 1 {
						w.exps = append(w.exps, [2]int{len(b), len(b) + n})
					}
					addRange(i, i+n)
					w.Dynamic = w.Dynamic || n > 1
					i += n
					if !ok {
						err = ErrUnterminated
					}
				default:
					add(i)
					i++
				}
			}
			if !closed {
				err = ErrUnterminated
				break loop
			}
		case c == '$' || c == '`':
			n, ok := expansionLen(s[i:])
			if n > 1 {
				w.exps = append(w.exps, [2]int{len(b), len(b) + n})
			}
			addRange(i, i+n)
			w.Dynamic = w.Dynamic || n > 1
			i += n
			if !ok {
				err = ErrUnterminated
			}
		default:
			add(i)
			i++
		}
	}
	w.Text = string(b)
	w.End = i
	return w, err
}

// expansionLen returns the length of the expansion at the start of s
// (which starts with $ or `), copied verbatim into a word. A lone $ has
// length 1. ok is false when the expansion is never closed; the length
// then runs to the end of s.
func expansionLen(s string) (int, bool) {
	if s[0] == '`' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '`':
				return i + 1, true
			}
		}
		return len(s), false
	}
	if len(s) < 2 {
		return 1, true
	}
	switch c := s[1]; {
	case c == '(':
		return matchClose(s, 1, '(', ')')
	case c == '{':
		return matchClose(s, 1, '{', '}')
	case c == '\'': // $'...' ANSI-C quoting, kept verbatim
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return i + 1, true
			}
		}
		return len(s), false
	case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		i := 2
		for i < len(s) && (s[i] == '_' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9') {
			i++
		}
		return i, true
	case strings.IndexByte("0123456789@*#?$!-", c) >= 0:
		return 2, true
	}
	return 1, true
}

// matchClose finds the bracket closing s[open], skipping quoted text and
// escapes, and returns the length up to and including it.
func matchClose(s string, open int, o, c byte) (int, bool) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return len(s), false
			}
			i += end + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return len(s), false
			}
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(s), false
}

// simpleCommands splits tokens into simple commands at control operators
// and drops redirections with their targets. Each command is a list of
// indices into toks.
func simpleCommands(toks []lexWord) [][]int {
	var cmds [][]int
	var cur []int
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.Op {
			cur = append(cur, i)
			continue
		}
		if isRedirect(t.Text) {
			if i+1 < len(toks) && !toks[i+1].Op {
				i++ // the redirection target
			}
			continue
		}
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}
