package cmdline

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
)

// ErrUnsafe is wrapped by SetFlag and RemoveFlag when an edit cannot be
// placed safely: positions inside the scalar are not known exactly, the
// new text cannot be written in the scalar's style, or no list editor was
// given. The caller then offers no fix.
var ErrUnsafe = errors.New("cannot place the fix safely")

// SetFlag returns edits that make the invocation pass --name with value.
// An existing flag keeps its spelling and form and only its value bytes
// change (written in the same shell and YAML quoting); a missing one is
// added after the invocation's last word (in a script, continuing its
// line style) or appended to its list. For boolean options value is
// "true" or "false": true writes the bare flag; false drops it, or writes
// --no-<name> for options that are on by default. name "model" changes the
// model. No edits and no error means nothing needs to change.
//
// A value written with a variable ($VAR, ${VAR}, $(VAR)) is set where the
// variable is defined - the env list, the script, the image - so writing
// a literal over it would change the command line's meaning, not just its
// number: SetFlag refuses (ErrUnsafe) and the finding stays advice.
func (c *Command) SetFlag(name, value string) ([]finding.Edit, error) {
	if err := c.editable(); err != nil {
		return nil, err
	}
	canon := CanonicalName(name)
	if canon == "model" && c.modelIt >= 0 {
		if it := c.items[c.modelIt]; it.dynamic {
			return nil, fmt.Errorf("set model: %s is written with a variable; change it where the variable is set: %w", it.text, ErrUnsafe)
		}
		return c.replaceItem(c.items[c.modelIt], value)
	}
	if i := c.lookupIndex(canon); i >= 0 && c.Flags[i].Dynamic {
		return nil, fmt.Errorf("set --%s: its value %s is written with a variable; change it where the variable is set: %w", canon, c.Flags[i].Value, ErrUnsafe)
	}
	opt, known := LookupOption(canon)
	if known && opt.Type == TypeBool {
		return c.setBool(opt, value)
	}
	idx := c.lookupIndex(canon)
	switch {
	case idx >= 0 && c.Flags[idx].HasValue:
		return c.replaceValue(idx, value)
	case idx >= 0:
		return c.insertValue(idx, value)
	case canon == "model":
		return nil, fmt.Errorf("set model: the invocation names no model: %w", ErrUnsafe)
	}
	return c.add("--"+canon, value, known || value != "")
}

// RemoveFlag returns edits that delete every occurrence of a flag (its
// --no- form included) with its values. No edits and no error means the
// flag is absent.
func (c *Command) RemoveFlag(name string) ([]finding.Edit, error) {
	if err := c.editable(); err != nil {
		return nil, err
	}
	canon := CanonicalName(name)
	n := 0
	for _, f := range c.Flags {
		if f.Name == canon {
			n++
		}
	}
	if n > maxRemovals {
		// Each removal re-reads the edited list or script to check it, so
		// thousands of copies of one flag would cost seconds per copy.
		return nil, fmt.Errorf("remove --%s: it is given %d times, more than the %d a fix removes: %w", canon, n, maxRemovals, ErrUnsafe)
	}
	var edits []finding.Edit
	for i, f := range c.Flags {
		if f.Name != canon {
			continue
		}
		e, err := c.removeAt(i)
		if err != nil {
			return nil, err
		}
		edits = append(edits, e...)
	}
	return edits, nil
}

// maxRemovals is the most occurrences of one flag RemoveFlag deletes; a
// command line repeating a flag more often gets no fix.
const maxRemovals = 32

// editable refuses edits to a script whose quoting is broken: where a new
// word would land is not knowable.
func (c *Command) editable() error {
	if c.script >= 0 && c.lexErr != nil {
		return fmt.Errorf("edit the script: %v: %w", c.lexErr, ErrUnsafe)
	}
	return nil
}

func (c *Command) setBool(opt Option, value string) ([]finding.Edit, error) {
	var on bool
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true", "1", "yes", "on":
		on = true
	case "false", "0", "no", "off":
	default:
		return nil, fmt.Errorf("set --%s: %q is not true or false", opt.Name, value)
	}
	idx := c.lookupIndex(opt.Name)
	if idx < 0 {
		switch {
		case on:
			return c.add("--"+opt.Name, "", false)
		case opt.DefaultOn && opt.Negatable:
			return c.add("--no-"+opt.Name, "", false)
		}
		return nil, nil
	}
	f := c.Flags[idx]
	want := "false"
	if on {
		want = "true"
	}
	switch {
	case f.HasValue && !f.Negated: // old StoreBoolean --flag=false
		if strings.EqualFold(f.Value, want) {
			return nil, nil
		}
		return c.replaceValue(idx, want)
	case on && f.Negated:
		return c.rename(idx, "--"+opt.Name)
	case on || f.Negated:
		return nil, nil
	case opt.DefaultOn && opt.Negatable:
		return c.rename(idx, "--no-"+opt.Name)
	}
	return c.removeAt(idx)
}

// replaceValue rewrites the value of Flags[idx] in place.
func (c *Command) replaceValue(idx int, value string) ([]finding.Edit, error) {
	in := c.info[idx]
	if in.valStart >= 0 {
		return c.replaceInline(c.items[in.nameIt], in.valStart, value)
	}
	if len(in.valIts) == 1 {
		return c.replaceItem(c.items[in.valIts[0]], value)
	}
	first, last := c.items[in.valIts[0]], c.items[in.valIts[len(in.valIts)-1]]
	if first.tok < 0 || first.arg != last.arg {
		return nil, fmt.Errorf("set --%s: its values are separate list items: %w", c.Flags[idx].Name, ErrUnsafe)
	}
	return c.replaceRaw(first.arg, first.rs, last.re, shellQuote(value), value)
}

// replaceItem rewrites one whole argument: a shell word (keeping its shell
// quoting) or a list item's content.
func (c *Command) replaceItem(it item, value string) ([]finding.Edit, error) {
	if it.tok >= 0 {
		old := c.args[it.arg].Text[it.rs:it.re]
		return c.replaceRaw(it.arg, it.rs, it.re, shellQuoteLike(value, old), value)
	}
	a := c.args[it.arg]
	if c.maps[it.arg] == nil {
		return nil, fmt.Errorf("set %q: its position in the file is not exact: %w", a.Text, ErrUnsafe)
	}
	text, err := yamlEncode(value, a.Quote, true)
	if err != nil {
		return nil, err
	}
	return c.edit(a.Raw.Start, a.Raw.End, text), nil
}

// replaceInline rewrites the value after "=" (or after -O) in one
// argument.
func (c *Command) replaceInline(it item, valStart int, value string) ([]finding.Edit, error) {
	from := it.offs[valStart-1] + 1
	if it.tok < 0 {
		return c.replaceRaw(it.arg, from, it.re, value)
	}
	want := it.text[:valStart] + value
	script := c.args[it.arg].Text
	old := script[from:it.re]
	if ws, err := lexShell(old); err == nil && len(ws) == 1 && !ws[0].Op && ws[0].Text == it.text[valStart:] {
		return c.replaceRaw(it.arg, from, it.re, shellQuoteLike(value, old), want)
	}
	if old == "" {
		return c.replaceRaw(it.arg, from, it.re, shellQuote(value), want)
	}
	// Quotes straddle the "=": rewrite the whole word.
	return c.replaceRaw(it.arg, it.rs, it.re, shellQuote(want), want)
}

// insertValue adds a value to a flag written without one.
func (c *Command) insertValue(idx int, value string) ([]finding.Edit, error) {
	it := c.items[c.info[idx].nameIt]
	if it.tok < 0 {
		return nil, fmt.Errorf("set --%s: cannot add a value inside a list: %w", c.Flags[idx].Name, ErrUnsafe)
	}
	return c.replaceRaw(it.arg, it.re, it.re, " "+shellQuote(value), value)
}

// rename rewrites a flag's name (for --x ⇄ --no-x).
func (c *Command) rename(idx int, spelled string) ([]finding.Edit, error) {
	it := c.items[c.info[idx].nameIt]
	end := len(it.text)
	if c.info[idx].valStart >= 0 {
		end = c.info[idx].valStart - 1
	}
	return c.replaceRaw(it.arg, it.offs[0], it.offs[end-1]+1, spelled, spelled+it.text[end:])
}

// replaceRaw replaces bytes [from, to) of args[arg].Text as written with
// text (already shell-quoted where needed), encoding it for the scalar's
// YAML style. In a script, want lists the words the edited region must
// read as afterwards.
func (c *Command) replaceRaw(arg, from, to int, text string, want ...string) ([]finding.Edit, error) {
	if arg == c.script {
		if err := c.checkScript(from, to, text, want); err != nil {
			return nil, err
		}
	}
	s := c.contSpan(arg, from, to)
	if !s.Exact {
		return nil, fmt.Errorf("edit %q: its position in the file is not exact: %w", c.args[arg].Text, ErrUnsafe)
	}
	enc, err := yamlEncode(text, c.args[arg].Quote, false)
	if err != nil {
		return nil, err
	}
	return c.edit(s.Start, s.End, enc), nil
}

func (c *Command) edit(start, end int, text string) []finding.Edit {
	return []finding.Edit{{File: c.File, Start: start, End: end, NewText: text}}
}

// equalsStyle reports whether the invocation mostly writes --flag=value.
func (c *Command) equalsStyle() bool {
	eq, sep := 0, 0
	for _, f := range c.Flags {
		switch f.Form {
		case FormEquals:
			eq++
		case FormSeparate:
			sep++
		}
	}
	return eq > sep
}

// add appends a flag (with a value when withValue) after the invocation's
// last word.
func (c *Command) add(flag, value string, withValue bool) ([]finding.Edit, error) {
	if n := len(c.Flags); n > 0 && strings.Contains(c.Flags[n-1].Name, ".") && !c.Flags[n-1].HasValue {
		return nil, fmt.Errorf("add %s: %s lacks its value and would take the new flag: %w", flag, c.Flags[n-1].Spelled, ErrUnsafe)
	}
	if c.endOpts >= 0 && c.script < 0 {
		return nil, fmt.Errorf("add %s: a \"--\" ends the options inside the list: %w", flag, ErrUnsafe)
	}
	if c.script >= 0 {
		text, want := flag, []string{flag}
		switch {
		case withValue && c.equalsStyle():
			text += "=" + shellQuote(value)
			want = []string{flag + "=" + value}
		case withValue:
			text += " " + shellQuote(value)
			want = append(want, value)
		}
		return c.insertShell(text, want)
	}
	l := 1
	if c.hasTail && c.tail.arg < c.nCommand {
		l = 0
	}
	if c.lists[l] == nil {
		return nil, fmt.Errorf("add %s: no editor for the list: %w", flag, ErrUnsafe)
	}
	switch {
	case !withValue:
		return c.lists[l].Append(flag)
	case c.equalsStyle():
		return c.lists[l].Append(flag + "=" + value)
	}
	return c.lists[l].Append(flag, value)
}

// insertShell inserts text after the last word of the invocation's
// script, separated the way the script separates its flags: a space, a
// folded line at the same indentation, or " \" and a new line.
func (c *Command) insertShell(text string, want []string) ([]finding.Edit, error) {
	arg := c.script
	a := c.args[arg]
	if c.maps[arg] == nil {
		return nil, fmt.Errorf("add %s: the script's position in the file is not exact: %w", text, ErrUnsafe)
	}
	enc, err := yamlEncode(text, a.Quote, false)
	if err != nil {
		return nil, err
	}
	at, before, after := 0, "", ""
	switch {
	case c.endOpts >= 0: // before the "--" that ends the options
		at, after = c.items[c.endOpts].rs, " "
	case c.hasTail:
		at, before = c.tail.re, " "
	}
	if err := c.checkScript(at, at, before+text+after, want); err != nil {
		return nil, err
	}
	switch {
	case c.endOpts >= 0:
		p := c.maps[arg].start[at]
		return c.edit(p, p, enc+" "), nil
	case !c.hasTail:
		p := c.insertPos(arg, 0)
		return c.edit(p, p, enc), nil
	}
	p := c.insertPos(arg, at)
	if splitsQuotePair(a, p) {
		return nil, fmt.Errorf("add %s: the insertion point falls inside an escaped quote: %w", text, ErrUnsafe)
	}
	return c.edit(p, p, c.separator()+enc), nil
}

// splitsQuotePair reports whether file offset p lies between the two
// quotes of a doubled ” in a single-quoted YAML scalar: an odd run of
// quotes ends right before p inside the scalar's raw content.
func splitsQuotePair(a Arg, p int) bool {
	raw := a.rawText()
	if a.Quote != '\'' || raw == "" || p <= a.Raw.Start || p > a.Raw.Start+len(raw) {
		return false
	}
	n := 0
	for i := p - a.Raw.Start - 1; i >= 0 && raw[i] == '\''; i-- {
		n++
	}
	return n%2 == 1
}

// separator chooses what goes between the last word and a new flag.
func (c *Command) separator() string {
	anchor := c.tail.tok
	if n := len(c.info); n > 0 {
		anchor = c.items[c.info[n-1].nameIt].tok
	}
	if anchor <= 0 || c.toks[anchor-1].Op {
		return " "
	}
	a, m := c.args[c.script], c.maps[c.script]
	prev, cur := c.toks[anchor-1], c.toks[anchor]
	raw := a.rawText()
	pFile, cFile := m.end[prev.End-1], m.start[cur.Start]
	lo, hi := pFile-a.Raw.Start, cFile-a.Raw.Start
	if raw == "" || lo < 0 || hi > len(raw) || lo > hi {
		return " "
	}
	gapRaw := raw[lo:hi]
	gapText := a.Text[prev.End:cur.Start]
	indent := lineIndent(raw, hi)
	switch {
	case a.Quote == '|' && strings.Contains(gapText, "\\\n"):
		return " \\\n" + indent
	case !strings.Contains(gapText, "\n") && strings.Contains(gapRaw, "\n"):
		return "\n" + indent
	}
	return " "
}

// lineIndent returns the blanks that start the line holding raw[at].
func lineIndent(raw string, at int) string {
	start := strings.LastIndexByte(raw[:at], '\n') + 1
	end := start
	for end < len(raw) && (raw[end] == ' ' || raw[end] == '\t') {
		end++
	}
	return raw[start:end]
}

// removeAt deletes Flags[idx] and its values.
func (c *Command) removeAt(idx int) ([]finding.Edit, error) {
	in := c.info[idx]
	first := c.items[in.nameIt]
	last := first
	if n := len(in.valIts); n > 0 {
		last = c.items[in.valIts[n-1]]
	}
	if first.tok >= 0 {
		return c.removeWords(first, last)
	}
	var edits []finding.Edit
	its := append([]int{in.nameIt}, in.valIts...)
	for l := range 2 {
		from, to := -1, -1
		for _, k := range its {
			a := c.items[k].arg
			if (a < c.nCommand) != (l == 0) {
				continue
			}
			if l == 1 {
				a -= c.nCommand
			}
			if from < 0 {
				from = a
			}
			to = a + 1
		}
		if from < 0 {
			continue
		}
		r, ok := c.lists[l].(ListRemover)
		if !ok {
			return nil, fmt.Errorf("remove --%s: no editor for the list: %w", c.Flags[idx].Name, ErrUnsafe)
		}
		e, err := r.Remove(from, to)
		if err != nil {
			return nil, fmt.Errorf("remove --%s: %w", c.Flags[idx].Name, err)
		}
		edits = append(edits, e...)
	}
	return edits, nil
}

// removeWords deletes script words first..last and the blanks before them
// (or, for the script's first word, the blanks after).
func (c *Command) removeWords(first, last item) ([]finding.Edit, error) {
	arg := c.script
	if c.maps[arg] == nil {
		return nil, fmt.Errorf("remove %q: the script's position in the file is not exact: %w", first.text, ErrUnsafe)
	}
	from, to := first.rs, last.re
	start, end := c.insertPos(arg, from), c.insertPos(arg, to)
	switch {
	case first.tok > 0:
		from = c.toks[first.tok-1].End
		start = c.insertPos(arg, from)
	case last.tok+1 < len(c.toks):
		to = c.toks[last.tok+1].Start
		end = c.maps[arg].start[to]
	}
	if err := c.checkScript(from, to, "", nil); err != nil {
		return nil, err
	}
	return c.edit(start, end, ""), nil
}

var shellSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

// shellQuote writes a value as one shell word, single-quoting it unless
// it only has characters the shell leaves alone.
func shellQuote(v string) string {
	if shellSafe().MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// shellQuoteLike quotes v the way old (a word as written) was quoted.
func shellQuoteLike(v, old string) string {
	switch {
	case strings.HasPrefix(old, `"`):
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
		return `"` + r.Replace(v) + `"`
	case strings.HasPrefix(old, `'`):
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	}
	return shellQuote(v)
}
