package cmdline

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The trl CLI's training commands (`trl sft|dpo|grpo|kto|reward|rloo`)
// parse their options into the same dataclasses a TRL YAML recipe fills:
// trl sft builds a TrlParser over (ScriptArguments, SFTConfig,
// ModelConfig) (huggingface/trl 1542cee8 trl/scripts/sft.py make_parser),
// and TrlParser is an HfArgumentParser, argparse underneath: an option is
// --name=value or --name value, a bool field is given bare for true. So a
// command line whose options state the recipe's keys is a recipe of its
// own, keyed as the YAML recipe would be. A --config PATH recipe file is
// the launch graph's to read (launch.go), not this.

// TRLRun is a trl CLI training command a container runs with its
// options stated on the command line.
type TRLRun struct {
	Command string // sft, dpo, ...
	// Options are the options as the recipe's keys (dashes as
	// underscores), in order; a repeated option's last one wins.
	Options []TRLOption
}

// TRLOption is one option of a trl command.
type TRLOption struct {
	Key   string
	Value string
	// Bare is an option given without a value (a bool set true).
	Bare bool
	// Arg and Last are the argv elements (indexes into command followed
	// by args) that hold the option and its value.
	Arg, Last int
	// Unknown marks a value set from something the manifest does not
	// state (a $(VAR) of a variable without a stated value).
	Unknown bool
}

// trlForward matches a shell script whose last command runs the trl CLI
// with the script's own arguments and nothing else: `[exec] trl sft "$@"`.
var trlForward = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*(?:exec[ \t]+)?trl[ \t]+([a-z]+)[ \t]+"\$@"[ \t]*$`)
})

// RecognizeTRL returns the trl training command a container runs, or nil:
// a command (or command and args) that starts with `trl CMD`, or a
// `sh|bash -c SCRIPT ARG0 ARGS...` whose script ends by running
// `trl CMD "$@"`, so that ARGS are the trl command's options. A command
// with --config takes its recipe from that file and is not read here.
func RecognizeTRL(ct Container) *TRLRun {
	argv := append(append([]Arg(nil), ct.Command...), ct.Args...)
	var cmd string
	first := -1
	switch {
	case len(argv) >= 2 && path.Base(argv[0].Text) == "trl":
		cmd, first = argv[1].Text, 2
	case len(argv) >= 4 && isShell(argv[0].Text) && argv[1].Text == "-c":
		m := trlForward().FindAllStringSubmatch(argv[2].Text, -1)
		if len(m) == 0 || !lastCommand(argv[2].Text, m[len(m)-1][0]) {
			return nil
		}
		// $0 is argv[3]; "$@" is what follows it.
		cmd, first = m[len(m)-1][1], 4
	default:
		return nil
	}
	if !trlCommands[cmd] {
		return nil
	}
	r := &TRLRun{Command: cmd}
	for i := first; i < len(argv); i++ {
		s := argv[i].Text
		if !strings.HasPrefix(s, "--") || len(s) == 2 {
			continue
		}
		name, val, has := strings.Cut(s[2:], "=")
		o := TRLOption{Key: strings.ReplaceAll(name, "-", "_"), Arg: i, Last: i}
		switch {
		case has:
			o.Value = val
		case i+1 < len(argv) && !strings.HasPrefix(argv[i+1].Text, "--"):
			i++
			o.Value, o.Last = argv[i].Text, i
		default:
			o.Bare = true
		}
		if o.Key == "config" {
			return nil
		}
		o.Value, o.Unknown = expandEnv(o.Value, ct.Env)
		r.Options = append(r.Options, o)
	}
	return r
}

func isShell(s string) bool {
	switch path.Base(s) {
	case "sh", "bash", "dash", "zsh":
		return true
	}
	return false
}

// lastCommand reports whether line is the script's last non-blank,
// non-comment line.
func lastCommand(script, line string) bool {
	lines := strings.Split(script, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return t == strings.TrimSpace(line)
	}
	return false
}

// Recipe returns the options as recipe keys with typed values (bool for a
// bare option or true/false, int64, float64, else the string), and for
// each key the option it came from. An option whose value is unknown is
// left out: it is not known, not wrong.
func (r *TRLRun) Recipe() (map[string]any, map[string]TRLOption) {
	out, from := map[string]any{}, map[string]TRLOption{}
	for _, o := range r.Options {
		if o.Unknown {
			delete(out, o.Key)
			delete(from, o.Key)
			continue
		}
		out[o.Key], from[o.Key] = trlValue(o), o
	}
	return out, from
}

func trlValue(o TRLOption) any {
	if o.Bare {
		return true
	}
	switch strings.ToLower(o.Value) {
	case "true":
		return true
	case "false":
		return false
	}
	if n, err := strconv.ParseInt(o.Value, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(o.Value, 64); err == nil {
		return f
	}
	return o.Value
}

// trlLaunchOptions are the options the trl CLI hands to accelerate launch
// rather than to the script: the Accelerate config (a path or the name of
// one it ships, zero3, fsdp2, ... in trl/accelerate_configs), the process
// and machine counts (huggingface/trl b99d97ca trl/cli/accelerate_config.py
// resolve_accelerate_config_argument; launch.go's notes).
var trlLaunchOptions = []string{"accelerate_config", "config_file", "num_processes", "num_machines"}

// TRLLaunchOptions reports whether the options set the launch's world
// size or sharding: then they, not the pod's GPUs, decide it.
func TRLLaunchOptions(from map[string]TRLOption) bool {
	for _, k := range trlLaunchOptions {
		if _, ok := from[k]; ok {
			return true
		}
	}
	return false
}
