// Package cmdline recognises a vLLM server launch in a container's command
// and args — a plain argv, a `sh -c` script, or the vllm/vllm-openai
// image's entrypoint — parses its flags keeping byte positions in the
// manifest, and produces byte edits that change them.
//
// Positions flow from Arg.Raw (where each argv scalar lies in the file)
// through the shell tokenizer (where each word lies in the script) to
// Flag.NameSpan and Flag.ValueSpan. When a position cannot be mapped
// exactly the span falls back to the whole scalar and edits are refused.
package cmdline

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
)

// ListAppender adds items to one YAML list (a container's command or args,
// a Helm extraArgs list) in that list's own style. Values are the decoded
// strings; the appender writes each as a YAML string, quoting it where a
// plain scalar would not read back as the same string.
type ListAppender interface {
	Append(values ...string) ([]finding.Edit, error)
}

// ListRemover is implemented by list editors that can also delete items
// [from, to) of their list; RemoveFlag needs it for flags in a list.
type ListRemover interface {
	Remove(from, to int) ([]finding.Edit, error)
}

// Container is what Recognize reads: one container as a manifest writes it.
type Container struct {
	File    string // file the edits apply to
	Image   string
	Command []Arg // Kubernetes command (replaces the image ENTRYPOINT)
	Args    []Arg // Kubernetes args (replaces the image CMD)
	// CommandList and ArgsList edit the two lists; either may be nil,
	// then adding a flag to that list fails with an error.
	CommandList, ArgsList ListAppender
	// Env holds the container's environment variables whose value the
	// manifest states, references between them expanded (ContainerEnv);
	// those set from valueFrom (or the image) are absent and read as
	// unknown. See expand.go.
	Env map[string]string
	// EnvUnknown reports whether a variable absent from Env may still be
	// set: declared from valueFrom, or possibly set by envFrom. nil means
	// none may.
	EnvUnknown func(name string) bool
}

// Launch says how vLLM was started.
type Launch int

// Launch kinds.
const (
	// LaunchServe is `vllm serve [MODEL] ...` (also `python -m
	// vllm.entrypoints.cli.main serve`).
	LaunchServe Launch = iota + 1
	// LaunchAPIServer is `python -m vllm.entrypoints.openai.api_server
	// --model MODEL ...`.
	LaunchAPIServer
	// LaunchImage is a vllm/vllm-openai style image run with its own
	// ENTRYPOINT (`vllm serve`), so args start with the model or flags.
	LaunchImage
	// LaunchFlags is a bare flag list or string (VLLM_ADDITIONAL_ARGS,
	// Helm extraArgs, a KubeAI Model's args): flags only, no model.
	LaunchFlags
)

func (l Launch) String() string {
	switch l {
	case LaunchServe:
		return "vllm serve"
	case LaunchAPIServer:
		return "api_server"
	case LaunchImage:
		return "image entrypoint"
	case LaunchFlags:
		return "flags"
	}
	return "unknown"
}

// Word is an argument that is neither a flag nor the model.
type Word struct {
	Text     string
	Span     Span
	ArgIndex int // which argv element holds it (see Flag.ArgIndex)
}

// Command is a parsed vLLM server invocation.
type Command struct {
	Launch Launch
	File   string
	Image  string
	// Version is the vLLM release the container states (image tag or pip
	// pin); zero when it states none.
	Version Version
	// Shell is true when the invocation sits inside a shell script
	// (`sh -c "..."`) or a flag string; positions then point inside that
	// script's scalar.
	Shell bool
	// Model is the positional model or the value of --model; ModelSpan is
	// where it is written.
	Model     string
	ModelSpan Span
	// modelUnknown marks a model given by a variable that cannot be
	// expanded; Model is then empty.
	modelUnknown bool
	// Flags are in source order; a flag given twice appears twice (vLLM
	// keeps the last).
	Flags []Flag
	// Extra holds positional arguments vLLM would not accept (after the
	// model, or a stray value).
	Extra []Word
	// Dynamic holds words made only of shell expansions, such as
	// $VLLM_ADDITIONAL_ARGS, which may add flags at run time.
	Dynamic []Word

	args     []Arg
	env      map[string]string
	maps     []*posMap
	nCommand int // args[:nCommand] came from the command list
	lists    [2]ListAppender
	items    []item
	info     []flagInfo
	script   int       // index into args of the shell script; -1 for argv
	toks     []lexWord // the script's tokens (script >= 0)
	lexErr   error     // the script's quoting is broken: no edits
	modelIt  int       // item index of the positional model; -1
	endOpts  int       // item index of a "--" ending the options; -1
	// tail is the last word of the whole invocation, launcher included;
	// new flags go after it. hasTail is false for an image run without
	// args.
	head, tail item
	hasTail    bool
}

// item is one argument of the vLLM invocation: an argv element or a word
// of a shell script.
type item struct {
	text    string
	arg     int   // index into Command.args
	offs    []int // offset in args[arg].Text of each byte of text
	rs, re  int   // raw extent in args[arg].Text (quotes included)
	tok     int   // index into Command.toks; -1 for argv elements
	dynamic bool  // only an expansion, or a value holding one
	// exps are the [from, to) ranges of text that Kubernetes or the shell
	// expands (see expand).
	exps [][2]int
}

// vllmImage matches images whose ENTRYPOINT runs `vllm serve`: any
// */vllm-openai* image and vllm/vllm-* (registry, tag and digest aside).
var vllmImage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)(vllm-openai[^/]*|vllm/vllm-[^/]*)$`) })

// IsVLLMImage reports whether an image's ENTRYPOINT is taken to be `vllm
// serve`: vllm/vllm-openai[:tag], */vllm-openai*, vllm/vllm-*.
func IsVLLMImage(image string) bool {
	name := image
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return vllmImage().MatchString(strings.ToLower(name))
}

// Recognize returns the vLLM server invocation a container runs, or nil
// when it does not run one. It looks at command followed by args; with no
// command it uses the image's ENTRYPOINT when the image is a vLLM server
// image, and otherwise tries args alone. Inside `sh -c` / `bash -c`
// scripts the first vLLM command is taken.
func Recognize(ct Container) *Command {
	c := newCommand(ct.File, append(append([]Arg(nil), ct.Command...), ct.Args...))
	c.Image = ct.Image
	c.env = ct.Env
	c.Version = stated(ct)
	c.nCommand = len(ct.Command)
	c.lists = [2]ListAppender{ct.CommandList, ct.ArgsList}
	argv := c.argvItems()
	if len(ct.Command) == 0 && IsVLLMImage(ct.Image) {
		c.Launch = LaunchImage
		c.setTail(argv)
		c.parse(argv, true)
		return c
	}
	if c.recognizeArgv(argv) {
		return c
	}
	return nil
}

// ParseArgList parses a list of flags given one per element, such as a
// Helm chart's extraArgs or a KubeAI Model's args. list, if not nil, adds
// items to that list. The result is never nil.
func ParseArgList(file string, args []Arg, list ListAppender) *Command {
	c := newCommand(file, append([]Arg(nil), args...))
	c.nCommand = 0
	c.lists = [2]ListAppender{nil, list}
	c.Launch = LaunchFlags
	its := c.argvItems()
	c.setTail(its)
	c.parse(its, false)
	return c
}

// ParseFlagString parses flags written as one string, such as the value of
// the VLLM_ADDITIONAL_ARGS environment variable. The string is split into
// words with shell quoting, as `eval` would read it; operators and line
// breaks only separate words. The result is never nil.
func ParseFlagString(file string, arg Arg) *Command {
	c := newCommand(file, []Arg{arg})
	c.Launch = LaunchFlags
	c.Shell = true
	c.script = 0
	c.toks, c.lexErr = lexShell(arg.Text)
	var its []item
	for i := range c.toks {
		if !c.toks[i].Op {
			its = append(its, c.wordItem(0, i))
		}
	}
	c.setTail(its)
	c.parse(its, false)
	return c
}

func newCommand(file string, args []Arg) *Command {
	c := &Command{File: file, args: args, script: -1, modelIt: -1, endOpts: -1}
	c.maps = make([]*posMap, len(args))
	for i, a := range args {
		c.maps[i] = a.positions()
	}
	return c
}

func (c *Command) setTail(its []item) {
	if len(its) > 0 {
		c.head, c.tail, c.hasTail = its[0], its[len(its)-1], true
	}
}

// Extent covers the whole invocation as written, from its first word (the
// launcher, or the first flag of a flag list) to its last. It is the zero
// Span for an image run without args.
func (c *Command) Extent() Span {
	if !c.hasTail {
		return Span{}
	}
	a, b := c.itemSpan(c.head), c.itemSpan(c.tail)
	return Span{Start: a.Start, End: b.End, Exact: a.Exact && b.Exact}
}

func (c *Command) argvItems() []item {
	its := make([]item, len(c.args))
	for i, a := range c.args {
		offs := make([]int, len(a.Text))
		for k := range offs {
			offs[k] = k
		}
		exps := kubeRefs(a.Text)
		its[i] = item{text: a.Text, arg: i, offs: offs, rs: 0, re: len(a.Text), tok: -1,
			dynamic: len(exps) > 0, exps: exps}
	}
	return its
}

func (c *Command) wordItem(arg, tok int) item {
	t := c.toks[tok]
	return item{text: t.Text, arg: arg, offs: t.offs, rs: t.Start, re: t.End, tok: tok, dynamic: t.Dynamic, exps: t.exps}
}

// recognizeArgv finds a vLLM launch at the start of argv, directly or as a
// shell's -c script.
func (c *Command) recognizeArgv(argv []item) bool {
	k := skipWrappers(argv, false)
	if k >= len(argv) {
		return false
	}
	if script := shellScript(argv[k:]); script >= 0 {
		return c.recognizeScript(argv[k+script].arg)
	}
	launch, rest := launcher(argv[k:])
	if launch == 0 {
		return false
	}
	c.Launch = launch
	c.setTail(argv[k:])
	c.parse(argv[k+rest:], launch == LaunchServe)
	return true
}

// recognizeScript tokenizes args[arg] as a shell script and parses the
// first simple command that launches vLLM.
func (c *Command) recognizeScript(arg int) bool {
	c.toks, c.lexErr = lexShell(c.args[arg].Text)
	for _, cmd := range simpleCommands(c.toks) {
		words := make([]item, len(cmd))
		for i, t := range cmd {
			words[i] = c.wordItem(arg, t)
		}
		k := skipWrappers(words, true)
		if k >= len(words) {
			continue
		}
		launch, rest := launcher(words[k:])
		if launch == 0 {
			continue
		}
		c.Launch = launch
		c.Shell = true
		c.script = arg
		c.setTail(words[k:])
		c.parse(words[k+rest:], launch == LaunchServe)
		return true
	}
	c.toks, c.lexErr = nil, nil
	return false
}

var assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`) })

// skipWrappers returns the index of the first word after command
// prefixes that only run the rest: exec, env (with its options and
// assignments), nohup, time, tini/dumb-init, and in a shell script,
// variable assignments and reserved words that start a list.
func skipWrappers(ws []item, shell bool) int {
	k := 0
	for k < len(ws) {
		t := ws[k].text
		switch base := path.Base(t); {
		case base == "exec" || base == "nohup" || base == "time" || base == "command":
			k++
		case shell && (t == "then" || t == "do" || t == "else" || t == "{" || t == "!"):
			k++
		case base == "env":
			k++
			for k < len(ws) && (strings.HasPrefix(ws[k].text, "-") || assignment().MatchString(ws[k].text)) {
				if ws[k].text == "-u" || ws[k].text == "-C" || ws[k].text == "-S" {
					k++
				}
				k++
			}
		case base == "tini" || base == "dumb-init":
			k++
			for k < len(ws) && strings.HasPrefix(ws[k].text, "-") {
				dashdash := ws[k].text == "--"
				k++
				if dashdash {
					break
				}
			}
		case shell && assignment().MatchString(t):
			k++
		default:
			return k
		}
	}
	return k
}

var shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// shellScript returns the index in ws of the script run by `sh -c SCRIPT`
// (any shell, combined options such as -lc or -ec, an optional --), or -1.
func shellScript(ws []item) int {
	if len(ws) == 0 || !shellNames[path.Base(ws[0].text)] {
		return -1
	}
	hasC := false
	for k := 1; k < len(ws); k++ {
		t := ws[k].text
		switch {
		case t == "--":
			if hasC && k+1 < len(ws) {
				return k + 1
			}
			return -1
		case t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file":
			k++ // an argument follows
		case strings.HasPrefix(t, "--"): // --login, --norc, ...
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			hasC = hasC || (t[0] == '-' && strings.ContainsRune(t[1:], 'c'))
		default:
			if hasC {
				return k
			}
			return -1
		}
	}
	return -1
}

var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python[0-9.]*$`) })

// launcher recognises `vllm serve` and `python -m <vllm entrypoint>` at the
// start of ws and returns the launch kind and how many words it used.
func launcher(ws []item) (Launch, int) {
	if len(ws) == 0 {
		return 0, 0
	}
	base := path.Base(ws[0].text)
	if base == "vllm" {
		if len(ws) > 1 && ws[1].text == "serve" {
			return LaunchServe, 2
		}
		return 0, 0
	}
	if !pythonName().MatchString(base) {
		return 0, 0
	}
	k := 1
	module := ""
	for k < len(ws) {
		t := ws[k].text
		if t == "-m" && k+1 < len(ws) {
			module = ws[k+1].text
			k += 2
			break
		}
		if strings.HasPrefix(t, "-m") && len(t) > 2 {
			module = t[2:]
			k++
			break
		}
		if !strings.HasPrefix(t, "-") {
			return 0, 0 // a script, not a module
		}
		if t == "-X" || t == "-W" {
			k++
		}
		k++
	}
	switch module {
	case "vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server":
		return LaunchAPIServer, k
	case "vllm.entrypoints.cli.main":
		if k < len(ws) && ws[k].text == "serve" {
			return LaunchServe, k + 1
		}
	}
	return 0, 0
}
