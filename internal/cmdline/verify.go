package cmdline

import "fmt"

// checkScript is the safety net under every script edit: it applies the
// edit to the decoded script (replacing bytes [from, to) with repl, at the
// shell level), lexes the result, and checks that every token outside the
// edited region reads as before and the region reads as the words want.
// An edit that would merge with a neighbour, land inside a quote or
// escape, or break the quoting is refused.
func (c *Command) checkScript(from, to int, repl string, want []string) error {
	script := c.args[c.script].Text
	after, err := lexShell(script[:from] + repl + script[to:])
	if err != nil {
		return fmt.Errorf("edit the script: %v: %w", err, ErrUnsafe)
	}
	var pre, post []lexWord
	for _, t := range c.toks {
		switch {
		case t.End <= from && t.Start < from:
			pre = append(pre, t)
		case t.Start >= to:
			post = append(post, t)
		}
	}
	if len(after) < len(pre)+len(post) {
		return fmt.Errorf("edit the script: words would merge: %w", ErrUnsafe)
	}
	mid := after[len(pre) : len(after)-len(post)]
	same := func(a, b []lexWord) bool {
		for i := range a {
			if a[i].Text != b[i].Text || a[i].Op != b[i].Op {
				return false
			}
		}
		return true
	}
	ok := same(pre, after[:len(pre)]) && same(post, after[len(after)-len(post):]) && len(mid) == len(want)
	for i := 0; ok && i < len(mid); i++ {
		ok = !mid[i].Op && mid[i].Text == want[i]
	}
	if !ok {
		return fmt.Errorf("edit the script: the words around the edit would change: %w", ErrUnsafe)
	}
	return nil
}
