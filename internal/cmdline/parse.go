package cmdline

import (
	"regexp"
	"strings"
	"sync"
)

// FlagForm says how a flag and its value were written.
type FlagForm int

// Flag forms.
const (
	FormBare     FlagForm = iota + 1 // --enforce-eager
	FormSeparate                     // --tensor-parallel-size 2 (value in the next argument or word)
	FormEquals                       // --tensor-parallel-size=2
	FormAttached                     // -O3
)

func (f FlagForm) String() string {
	switch f {
	case FormBare:
		return "bare"
	case FormSeparate:
		return "separate"
	case FormEquals:
		return "equals"
	case FormAttached:
		return "attached"
	}
	return "unknown"
}

// Flag is one option of a vLLM invocation.
type Flag struct {
	// Name is the canonical long name, kebab-case, without dashes
	// ("tensor-parallel-size"), resolved from underscores, short aliases,
	// the --no- form and unambiguous abbreviations. Unknown long flags keep
	// their own name; unknown short flags keep their dash ("-x"). Dotted
	// JSON sub-keys keep the dot ("compilation-config.level").
	Name string
	// Spelled is the flag as written, before any "=": "--tensor_parallel_size",
	// "-tp", "--no-enable-prefix-caching".
	Spelled string
	// Value is the value as a string; for options taking several values
	// (Option.Multi) the values joined by single spaces.
	Value string
	// Values lists each value of a Multi option; nil otherwise.
	Values   []string
	HasValue bool
	// Negated marks the --no-<name> form of a boolean.
	Negated bool
	// Abbrev marks a name argparse accepts as an unambiguous prefix
	// (--max-num-batched-token for --max-num-batched-tokens); Spelled
	// keeps it as written.
	Abbrev bool
	// Ambiguous lists the option strings ("--max-loras", "--max-lora-rank")
	// an abbreviation matches when it matches more than one: argparse
	// then refuses the command line. Name keeps the spelling as written.
	Ambiguous []string
	// Dynamic marks a value holding a shell or Kubernetes $(VAR) expansion.
	Dynamic bool
	// Expanded is a Dynamic value with its variables replaced from the
	// container's env (see expand.go); Unknown marks a Dynamic value that
	// cannot be expanded (valueFrom, an unknown variable, a command
	// substitution). Value keeps the text as written.
	Expanded string
	Unknown  bool
	// NameSpan covers the name as written; ValueSpan the value as written
	// (shell quotes included; for FormSeparate in a list, the value
	// item's content).
	NameSpan, ValueSpan Span
	Form                FlagForm
	// ArgIndex is the argv element that holds the name: an index into
	// command followed by args (Recognize), into the list (ParseArgList),
	// or 0 (ParseFlagString). For a flag inside a shell script it is the
	// script's element.
	ArgIndex int
}

// flagInfo keeps where a flag's parts lie among Command.items.
type flagInfo struct {
	nameIt   int   // item holding the name
	valStart int   // byte of the name item where an inline value starts; -1 if none
	valIts   []int // items holding separate values
}

var negativeNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$`) })

// isOptionLike follows argparse: an argument is an option when it starts
// with "-", is not "-" itself nor a negative number, and has no space
// before any "=".
func isOptionLike(t string) bool {
	if len(t) < 2 || t[0] != '-' || negativeNumber().MatchString(t) {
		return false
	}
	name, _, _ := strings.Cut(t, "=")
	return !strings.ContainsAny(name, " \t\n")
}

func isBoolLiteral(t string) bool {
	switch strings.ToLower(t) {
	case "true", "false":
		return true
	}
	return false
}

// onlyExpansion reports whether an item is nothing but one expansion
// ($VAR, ${VAR}, $(...), `...`), which the shell may split into flags.
func onlyExpansion(it item) bool {
	if !it.dynamic || it.text == "" || (it.text[0] != '$' && it.text[0] != '`') {
		return false
	}
	n, _ := expansionLen(it.text)
	return n == len(it.text)
}

// parse reads flags (and, when allowModel, a leading positional model)
// from the invocation's arguments after the launcher.
func (c *Command) parse(its []item, allowModel bool) {
	c.items = its
	i := 0
	if allowModel && len(its) > 0 && !isOptionLike(its[0].text) && its[0].text != "--" {
		c.modelIt = 0
		c.Model = its[0].text
		if its[0].dynamic {
			c.Model, c.modelUnknown = c.expandValue(its[0], 0)
			if c.modelUnknown {
				c.Model, c.modelUnknown = c.behindBucket(its[0], 0)
			}
		}
		c.ModelSpan = c.itemSpan(its[0])
		i = 1
	}
	for i < len(its) {
		t := its[i].text
		switch {
		case t == "--":
			c.endOpts = i
			for _, it := range its[i+1:] {
				c.addWord(it)
			}
			i = len(its)
		case !isOptionLike(t):
			c.addWord(its[i])
			i++
		default:
			i = c.parseFlag(its, i)
		}
	}
	if c.modelIt < 0 {
		if f, ok := c.Lookup("model"); ok && f.HasValue {
			c.Model, c.ModelSpan = f.Value, f.ValueSpan
			if f.Dynamic {
				c.Model, c.modelUnknown = f.Expanded, f.Unknown
			}
		}
	}
}

func (c *Command) addWord(it item) {
	w := Word{Text: it.text, Span: c.itemSpan(it), ArgIndex: it.arg}
	if onlyExpansion(it) {
		c.Dynamic = append(c.Dynamic, w)
	} else {
		c.Extra = append(c.Extra, w)
	}
}

// parseFlag reads the flag at its[i] with its values and returns the index
// of the next unread item.
func (c *Command) parseFlag(its []item, i int) int {
	it := its[i]
	t := it.text
	nameEnd, valStart := len(t), -1
	if k := strings.IndexByte(t, '='); k >= 0 {
		nameEnd, valStart = k, k+1
	}
	f := Flag{Form: FormBare, ArgIndex: it.arg}
	var opt *Option
	dotted := false
	switch {
	case strings.HasPrefix(t, "--"):
		name := kebab(t[2:nameEnd])
		if head, tail, ok := strings.Cut(name, "."); ok {
			// vLLM folds --x.key v into --x '{"key": v}' and hands that to
			// argparse, so an abbreviated head resolves as a flag would.
			dotted = true
			f.Name = name
			if o, neg, ab, amb := lookupLong(head); o != nil && !neg && o.Type == TypeJSON {
				f.Name, f.Abbrev = o.Name+"."+tail, ab
			} else if amb != nil {
				f.Ambiguous = amb
			}
			break
		}
		o, neg, ab, amb := lookupLong(name)
		f.Name, f.Negated, f.Abbrev, f.Ambiguous = name, neg, ab, amb
		if o != nil {
			opt, f.Name = o, o.Name
		}
	case strings.HasPrefix(t, "-O") && len(t) > 2 && valStart != 3:
		// vLLM rewrites -O3 / -Odecode to --optimization-level (AP).
		nameEnd, valStart = 2, 2
		opt = &options[optionIndex["-O"]]
		f.Name = opt.Name
	case strings.Contains(t[:nameEnd], "."):
		// vLLM folds any "-" argument with a dot, a short alias's too
		// (-cc.level 3), into its head's JSON value (AP parse_args); a
		// short head is matched exactly, as argparse matches short options.
		dotted = true
		head, tail, _ := strings.Cut(t[:nameEnd], ".")
		f.Name = head + "." + tail
		if k, ok := optionIndex[head]; ok {
			f.Name = options[k].Name + "." + tail
		}
	default:
		if k, ok := optionIndex[t[:nameEnd]]; ok {
			opt = &options[k]
			f.Name = opt.Name
		} else {
			f.Name = t[:nameEnd]
		}
	}
	f.Spelled = t[:nameEnd]
	f.NameSpan = c.textSpan(it, 0, nameEnd)
	info := flagInfo{nameIt: i, valStart: valStart}
	next := i + 1

	takes := func(j int) bool { return j < len(its) && !isOptionLike(its[j].text) }
	var vals []int
	switch {
	case valStart >= 0:
		f.HasValue, f.Value, f.Dynamic = true, t[valStart:], it.dynamic
		if f.Dynamic {
			f.Expanded, f.Unknown = c.expandValue(it, valStart)
			if f.Unknown && f.Name == "model" {
				f.Expanded, f.Unknown = c.behindBucket(it, valStart)
			}
		}
		f.Form = FormEquals
		if nameEnd == valStart {
			f.Form = FormAttached
		}
		f.ValueSpan = c.valueSpan(it, valStart)
		if opt != nil && opt.Multi {
			f.Values = []string{f.Value}
		}
	case dotted:
		if next < len(its) {
			vals = []int{next}
		}
	case opt != nil && opt.Type == TypeBool:
		if opt.OptionalValue && !f.Negated && next < len(its) && isBoolLiteral(its[next].text) {
			vals = []int{next}
		}
	case opt != nil && opt.Multi:
		// A bare expansion after the first value may hold more flags.
		for j := next; takes(j) && (j == next || !onlyExpansion(its[j])); j++ {
			vals = append(vals, j)
		}
	case opt != nil:
		if takes(next) {
			vals = []int{next}
		}
	default: // unknown: a following plain word is its value
		if takes(next) && !onlyExpansion(its[next]) {
			vals = []int{next}
		}
	}
	if len(vals) > 0 {
		f.HasValue, f.Form = true, FormSeparate
		texts := make([]string, len(vals))
		expanded := make([]string, len(vals))
		for k, j := range vals {
			texts[k] = its[j].text
			expanded[k] = its[j].text
			if its[j].dynamic {
				f.Dynamic = true
				var unknown bool
				expanded[k], unknown = c.expandValue(its[j], 0)
				f.Unknown = f.Unknown || unknown
			}
		}
		f.Value = strings.Join(texts, " ")
		if f.Unknown && f.Name == "model" && len(vals) == 1 {
			expanded[0], f.Unknown = c.behindBucket(its[vals[0]], 0)
		}
		if f.Dynamic && !f.Unknown {
			f.Expanded = strings.Join(expanded, " ")
		}
		if opt != nil && opt.Multi {
			f.Values = texts
		}
		first, last := its[vals[0]], its[vals[len(vals)-1]]
		if first.arg == last.arg {
			f.ValueSpan = c.contSpan(first.arg, first.rs, last.re)
		} else {
			s := c.itemSpan(first)
			f.ValueSpan = Span{Start: s.Start, End: c.itemSpan(last).End}
		}
		info.valIts = vals
		next = vals[len(vals)-1] + 1
	}
	c.Flags = append(c.Flags, f)
	c.info = append(c.info, info)
	return next
}

// Lookup returns the last occurrence of a flag (the one vLLM uses), by any
// spelling: "tensor-parallel-size", "--tensor_parallel_size", "-tp".
func (c *Command) Lookup(name string) (Flag, bool) {
	i := c.lookupIndex(CanonicalName(name))
	if i < 0 {
		return Flag{}, false
	}
	return c.Flags[i], true
}

// LookupDotted returns the last flag that sets a sub-key of the option
// head with a dotted name ("--compilation-config.level 3" for
// "compilation-config"), the flag a finding on that option's value points
// at when no flag names the option itself.
func (c *Command) LookupDotted(head string) (Flag, bool) {
	canon := CanonicalName(head)
	for i := len(c.Flags) - 1; i >= 0; i-- {
		if strings.HasPrefix(c.Flags[i].Name, canon+".") {
			return c.Flags[i], true
		}
	}
	return Flag{}, false
}

func (c *Command) lookupIndex(canon string) int {
	for i := len(c.Flags) - 1; i >= 0; i-- {
		if c.Flags[i].Name == canon {
			return i
		}
	}
	return -1
}

// contSpan maps bytes [from, to) of args[arg].Text to the file.
func (c *Command) contSpan(arg, from, to int) Span {
	a, m := c.args[arg], c.maps[arg]
	if m == nil || from < 0 || to > len(a.Text) || from > to {
		return Span{Start: a.Raw.Start, End: a.Raw.End}
	}
	if from == to {
		p := c.insertPos(arg, from)
		return Span{Start: p, End: p, Exact: true}
	}
	return Span{Start: m.start[from], End: m.end[to-1], Exact: true}
}

// insertPos is the file offset for inserting before byte at of
// args[arg].Text (at == len inserts at the end). The caller has checked
// that the Arg has a position map.
func (c *Command) insertPos(arg, at int) int {
	a, m := c.args[arg], c.maps[arg]
	switch {
	case at > 0:
		return m.end[at-1]
	case len(a.Text) > 0:
		return m.start[0]
	}
	return a.Raw.Start
}

// itemSpan covers an item as written.
func (c *Command) itemSpan(it item) Span { return c.contSpan(it.arg, it.rs, it.re) }

// textSpan covers the bytes [a, b) of an item's decoded text.
func (c *Command) textSpan(it item, a, b int) Span {
	if b <= a || b > len(it.offs) {
		return c.contSpan(it.arg, -1, -1)
	}
	return c.contSpan(it.arg, it.offs[a], it.offs[b-1]+1)
}

// valueSpan covers an inline value: from just after the byte before
// valStart ("=", or "O" of -O3) to the end of the item as written.
func (c *Command) valueSpan(it item, valStart int) Span {
	return c.contSpan(it.arg, it.offs[valStart-1]+1, it.re)
}
