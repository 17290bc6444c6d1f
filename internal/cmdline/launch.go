package cmdline

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The launch graph: training launchers in a container's command or a
// shell script, and what they say about the run - processes per node,
// nodes, the DeepSpeed, Accelerate or recipe file, the model and the
// precision - each with where it is written.
//
// Flag names follow each launcher's own parser:
//   - torchrun: torch/distributed/run.py (pytorch/pytorch v2.5):
//     --nproc-per-node/--nproc_per_node, --nnodes ("N" or "MIN:MAX").
//   - deepspeed: deepspeed/launcher/runner.py (deepspeedai/DeepSpeed
//     v0.16): --num_gpus/--num_accelerators (per node), --num_nodes; the
//     user script reads --deepspeed_config (deepspeed.add_config_arguments).
//   - accelerate launch: src/accelerate/commands/launch.py
//     (huggingface/accelerate v1.2): --config_file, --num_processes (the
//     total), --num_machines, --mixed_precision, --deepspeed_config_file.
//     A flag given on the command line wins over the config file's value.
//   - Hugging Face Trainer scripts: src/transformers/training_args.py
//     (huggingface/transformers v4.47): --deepspeed, --bf16, --fp16;
//     examples' ModelArguments: --model_name_or_path.
//   - axolotl (`axolotl train CFG`, `-m axolotl.cli.train CFG`),
//     LLaMA-Factory (`llamafactory-cli train CFG`, alias `lmf`) and
//     torchtune (`tune run RECIPE --config CFG`) take the recipe file.
//   - TRL scripts parse with TrlParser, which takes a YAML recipe as
//     `--config PATH` (two words; huggingface/trl f2cd577
//     trl/scripts/utils.py TrlParser.parse_args_and_config:
//     args.index("--config")). The script is run by accelerate launch,
//     torchrun, deepspeed or python (open-r1: `accelerate launch
//     --config_file ACC src/open_r1/sft.py --config RECIPE`); a --config
//     after the script is the script's (OptScriptConfig), and whether the
//     file is a recipe is for its content to say. The `trl` CLI
//     (`trl sft|dpo|grpo|kto|reward|rloo`, trl/cli/commands/__init__.py)
//     parses the same --config and hands --accelerate_config PATH (as
//     --config_file), --num_processes and --num_machines to accelerate
//     launch (trl/cli/commands/training.py, cli/accelerate_config.py).
//
// Abbreviations: the launch graph reads each option by its full name, with
// dashes and underscores alike. That matches accelerate launch, whose
// parser sets allow_abbrev=False (huggingface/accelerate 00785cd
// src/accelerate/commands/launch.py launch_command_parser), so a prefix
// there is an error, not an option. torchrun (pytorch/pytorch 010929f
// torch/distributed/run.py get_args_parser) and the deepspeed runner
// (deepspeedai/DeepSpeed 2d991ba deepspeed/launcher/runner.py parse_args)
// use a plain argparse.ArgumentParser, which takes a unique prefix of an
// option string: `torchrun --nproc_per 8` is --nproc_per_node, while
// `--nproc` matches both --nproc-per-node and --nproc_per_node and is
// refused as ambiguous (launcherPrefix reads them so). The deepspeed
// runner registers underscore spellings only (--num_gpus/--num_accelerators,
// --num_nodes; no dashed alias in its parse_args @ 2d991ba), and its
// parse_args exits on any other option before the script ("unrecognized
// arguments: --num-gpus"), so a dashed runner flag is not read: such a
// launch never starts and states no GPU count.

// Launch option names, the keys of TrainLaunch.Opts.
const (
	OptNprocPerNode = "nproc_per_node" // processes (GPUs) per node
	OptNodes        = "nnodes"         // nodes
	OptNumProcesses = "num_processes"  // processes in total (accelerate)
	OptConfigFile   = "config_file"    // the Accelerate config
	OptDeepSpeed    = "deepspeed"      // the DeepSpeed config file
	OptModel        = "model"          // the model id or path
	OptPrecision    = "mixed_precision"
	OptRecipe       = "recipe" // a fine-tuning recipe file
	OptScript       = "script" // a shell script the command runs
	// OptScriptConfig is a --config given to the Python script a
	// launcher runs: a TRL-style recipe, if its content says so.
	OptScriptConfig = "script_config"
	// OptHostfile is the deepspeed launcher's --hostfile: the nodes and
	// their slots are in that file, not on the command line.
	OptHostfile = "hostfile"
)

// TrainLaunch is one launcher command: the tool and the options it sets,
// each with its span in the file.
type TrainLaunch struct {
	// Tool is torchrun, deepspeed, accelerate, python, axolotl,
	// llamafactory-cli, tune or sh (a command that runs a script).
	Tool string
	Span Span
	Opts map[string]LaunchOpt
	// ScriptFlags are the options given to the training script itself
	// (after the Python script of accelerate launch, torchrun, deepspeed
	// or python, or any option of the trl CLI), by name with dashes as
	// underscores, each with its span: a Trainer script's parser lets
	// them override the recipe's values.
	ScriptFlags map[string]Span
}

// LaunchOpt is one value a launcher sets.
type LaunchOpt struct {
	// Value is the value after quote removal and, for a shell variable
	// assigned earlier in the script, expansion.
	Value string
	// Known is false for a value only the running shell knows.
	Known bool
	// Span covers the flag and its value as written.
	Span Span
}

// launchFlag maps a flag, dashes and underscores alike, to an option;
// tools limits it to some launchers (nil: any).
type launchFlag struct {
	opt   string
	tools []string
}

var launchFlags = map[string]launchFlag{
	"nproc_per_node":        {OptNprocPerNode, []string{"torchrun"}},
	"num_gpus":              {OptNprocPerNode, []string{"deepspeed"}},
	"num_accelerators":      {OptNprocPerNode, []string{"deepspeed"}},
	"nnodes":                {OptNodes, []string{"torchrun"}},
	"num_nodes":             {OptNodes, []string{"deepspeed"}},
	"hostfile":              {OptHostfile, []string{"deepspeed"}},
	"num_machines":          {OptNodes, []string{"accelerate", "trl"}},
	"num_processes":         {OptNumProcesses, []string{"accelerate", "trl"}},
	"config_file":           {OptConfigFile, []string{"accelerate"}},
	"accelerate_config":     {OptConfigFile, []string{"trl"}},
	"deepspeed_config_file": {OptDeepSpeed, []string{"accelerate"}},
	"deepspeed_config":      {OptDeepSpeed, nil},
	"deepspeed":             {OptDeepSpeed, nil},
	"model_name_or_path":    {OptModel, nil},
	"mixed_precision":       {OptPrecision, []string{"accelerate"}},
	"config":                {OptRecipe, []string{"tune", "trl"}},
}

// launcherOptions lists the long option strings of the launchers whose
// parser takes a unique prefix of one (argparse's default, see the note
// above): torchrun as pytorch/pytorch 010929f torch/distributed/run.py
// registers them (older releases had only some underscore forms, a
// subset), and the deepspeed runner as deepspeedai/DeepSpeed 2d991ba
// deepspeed/launcher/runner.py does. `python -m torch.distributed.launch`
// adds --use-env/--use_env to torchrun's.
var launcherOptions = map[string][]string{
	"torchrun": {
		"event-log-handler", "event_log_handler", "help", "local-addr", "local_addr",
		"local-ranks-filter", "local_ranks_filter", "log-dir", "log_dir", "logs-specs", "logs_specs",
		"master-addr", "master_addr", "master-port", "master_port", "max-restarts", "max_restarts",
		"module", "monitor-interval", "monitor_interval", "nnodes", "no-python", "no_python",
		"node-rank", "node_rank", "nproc-per-node", "nproc_per_node", "numa-binding", "numa_binding",
		"rdzv-backend", "rdzv_backend", "rdzv-conf", "rdzv_conf", "rdzv-endpoint", "rdzv_endpoint",
		"rdzv-id", "rdzv_id", "redirects", "role", "run-path", "run_path", "signals-to-handle",
		"signals_to_handle", "standalone", "start-method", "start_method", "tee", "use-env", "use_env",
	},
	"deepspeed": {
		"account", "autotuning", "bind_core_list", "bind_cores_to_rank", "comment", "elastic_training",
		"enable_each_rank_log", "exclude", "force_multi", "help", "hostfile", "include", "launcher",
		"launcher_args", "master_addr", "master_port", "max_elastic_nodes", "min_elastic_nodes", "module",
		"no_local_rank", "no_python", "no_ssh", "no_ssh_check", "node_rank", "num_accelerators", "num_gpus",
		"num_nodes", "save_pid", "ssh_port",
	},
}

// launcherPrefix expands a launcher option written as a unique prefix of
// one of its option strings ("nproc_per" is "nproc_per_node") as argparse
// does; a full option string, an ambiguous prefix ("nproc" starts both
// spellings of torchrun's --nproc-per-node, which argparse refuses) or a
// launcher without prefix matching keeps the name as written.
func launcherPrefix(tool, name string) string {
	opts, ok := launcherOptions[tool]
	if !ok || name == "" || slices.Contains(opts, name) {
		return name
	}
	match := ""
	for _, o := range opts {
		if strings.HasPrefix(o, name) {
			if match != "" {
				return name
			}
			match = o
		}
	}
	if match == "" {
		return name
	}
	return match
}

// trlCommands are the training commands of the trl CLI (huggingface/trl
// f2cd577 trl/cli/commands/__init__.py TrainingCommand).
var trlCommands = map[string]bool{"dpo": true, "grpo": true, "kto": true, "reward": true, "rloo": true, "sft": true}

// scriptTools are the launchers that run a Python script whose own
// options follow it.
var scriptTools = map[string]bool{"accelerate": true, "torchrun": true, "deepspeed": true, "python": true}

// LaunchesInScript finds the launchers of a shell script file; spans are
// offsets in script.
func LaunchesInScript(file, script string) []*TrainLaunch {
	c := newCommand(file, []Arg{{Text: script, Raw: Span{Start: 0, End: len(script), Exact: true}}})
	return c.scriptLaunches(0)
}

// LaunchesInContainer finds the launchers a container runs: its command
// and args as one argv, or the script of `sh -c`.
func LaunchesInContainer(ct Container) []*TrainLaunch {
	c := newCommand(ct.File, append(append([]Arg(nil), ct.Command...), ct.Args...))
	argv := c.argvItems()
	k := skipWrappers(argv, false)
	if k >= len(argv) {
		return nil
	}
	if s := shellScript(argv[k:]); s >= 0 {
		return c.scriptLaunches(argv[k+s].arg)
	}
	if l := c.launch(argv[k:], nil); l != nil {
		return []*TrainLaunch{l}
	}
	return nil
}

// scriptLaunches reads args[arg] as a shell script: simple commands that
// launch training, with variables assigned earlier in the script
// expanded.
func (c *Command) scriptLaunches(arg int) []*TrainLaunch {
	c.toks, _ = lexShell(c.args[arg].Text)
	vars := map[string]string{}
	var out []*TrainLaunch
	for _, cmd := range simpleCommands(c.toks) {
		words := make([]item, len(cmd))
		for i, t := range cmd {
			words[i] = c.wordItem(arg, t)
		}
		start := 0
		if len(words) > 0 && (words[0].text == "export" || words[0].text == "declare" || words[0].text == "local") {
			start = 1
		}
		for _, w := range words[start:] {
			if !assignment().MatchString(w.text) {
				break
			}
			name, value, _ := strings.Cut(w.text, "=")
			if v, ok := expandVar(value, vars); ok {
				vars[name] = v
			} else {
				delete(vars, name)
			}
		}
		k := skipWrappers(words, true)
		if k >= len(words) {
			continue
		}
		if l := c.launch(words[k:], vars); l != nil {
			out = append(out, l)
		}
	}
	return out
}

var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}$` + "`" + `]*))?\})$`)
})

var varRefIn = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}$` + "`" + `]*))?\})`)
})

// expandVar expands a word that is a literal or exactly one variable
// reference ($X, ${X}, ${X:-default}) from vars, or a word that joins
// literal text with references ($X.yaml, configs/${ACC}.yaml) each of
// which the script assigned literally; anything else is unknown.
func expandVar(s string, vars map[string]string) (string, bool) {
	if !strings.ContainsAny(s, "$`") {
		return s, true
	}
	m := varRef().FindStringSubmatch(s)
	if m == nil {
		return expandWord(s, vars)
	}
	name := m[1] + m[2]
	if v, ok := vars[name]; ok {
		return v, true
	}
	if strings.Contains(s, "-") {
		return m[3], m[3] != ""
	}
	return "", false
}

// expandWord expands the references inside a word, only from variables
// the script assigned: a default or the environment is not guessed, and
// a word with anything else a shell expands ($1, $(...), backquotes) is
// unknown.
func expandWord(s string, vars map[string]string) (string, bool) {
	known := true
	out := varRefIn().ReplaceAllStringFunc(s, func(ref string) string {
		m := varRefIn().FindStringSubmatch(ref)
		v, ok := vars[m[1]+m[2]]
		known = known && ok
		return v
	})
	if !known || strings.ContainsAny(out, "$`") {
		return "", false
	}
	return out, true
}

var scriptName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.(sh|bash)$`) })

// launch recognises a launcher at the start of ws and reads its options.
func (c *Command) launch(ws []item, vars map[string]string) *TrainLaunch {
	if len(ws) == 0 {
		return nil
	}
	base := path.Base(ws[0].text)
	tool, rest := "", 1
	switch {
	case base == "torchrun":
		tool = "torchrun"
	case base == "deepspeed":
		tool = "deepspeed"
	case base == "accelerate" && len(ws) > 1 && ws[1].text == "launch":
		tool, rest = "accelerate", 2
	case base == "axolotl" && len(ws) > 1 && (ws[1].text == "train" || ws[1].text == "preprocess"):
		tool, rest = "axolotl", 2
	case (base == "llamafactory-cli" || base == "lmf") && len(ws) > 1 && ws[1].text == "train":
		tool, rest = "llamafactory-cli", 2
	case base == "tune" && len(ws) > 1 && ws[1].text == "run":
		tool, rest = "tune", 2
	case base == "trl" && len(ws) > 1 && trlCommands[ws[1].text]:
		tool, rest = "trl", 2
	case shellNames[base] && len(ws) > 1 && scriptName().MatchString(ws[1].text):
		tool, rest = "sh", 1
	case scriptName().MatchString(ws[0].text) && (strings.HasPrefix(ws[0].text, "./") || strings.Contains(ws[0].text, "/")):
		tool, rest = "sh", 0
	case pythonName().MatchString(base):
		tool = "python"
		if len(ws) > 2 && ws[1].text == "-m" && (ws[2].text == "torch.distributed.run" || ws[2].text == "torch.distributed.launch") {
			tool, rest = "torchrun", 3
		}
	default:
		return nil
	}
	l := &TrainLaunch{Tool: tool, Opts: map[string]LaunchOpt{}}
	a, b := c.itemSpan(ws[0]), c.itemSpan(ws[len(ws)-1])
	l.Span = Span{Start: a.Start, End: b.End, Exact: a.Exact && b.Exact}
	set := func(opt string, from, to item, value string, known bool) {
		if _, dup := l.Opts[opt]; dup && opt != OptRecipe {
			// The last one wins for argparse; the launcher's own flag
			// comes first and is the one meant.
			return
		}
		s, e := c.itemSpan(from), c.itemSpan(to)
		l.Opts[opt] = LaunchOpt{Value: value, Known: known, Span: Span{Start: s.Start, End: e.End, Exact: s.Exact && e.Exact}}
	}
	value := func(it item) (string, bool) {
		if it.dynamic || strings.ContainsAny(it.text, "$`") {
			return expandVar(it.text, vars)
		}
		return it.text, true
	}
	positional := 0
	// inScript is true past the Python script (or -m module) a launcher
	// runs: the options there are the script's.
	inScript := false
	for i := rest; i < len(ws); i++ {
		t := ws[i].text
		if scriptTools[tool] && !inScript && (strings.HasSuffix(t, ".py") && !strings.HasPrefix(t, "-") || t == "-m") {
			inScript = true
			if t == "-m" {
				i++ // the module
			}
			if t == "-m" && i+1 < len(ws) && strings.HasPrefix(ws[i].text, "axolotl.cli.train") {
				v, known := value(ws[i+1])
				set(OptRecipe, ws[i+1], ws[i+1], v, known)
				i++
			}
			continue
		}
		if inScript && t == "--config" && i+1 < len(ws) && !strings.HasPrefix(ws[i+1].text, "-") {
			// TrlParser's --config PATH (a --config=PATH is not its form).
			v, known := value(ws[i+1])
			set(OptScriptConfig, ws[i], ws[i+1], v, known)
			i++
			continue
		}
		if !strings.HasPrefix(t, "--") || len(t) < 3 {
			// The first positional names the recipe (axolotl,
			// llamafactory-cli), the script (sh) or, after
			// `-m axolotl.cli.train`, the recipe.
			if positional == 0 && !strings.HasPrefix(t, "-") {
				v, known := value(ws[i])
				switch {
				case tool == "axolotl" || tool == "llamafactory-cli":
					set(OptRecipe, ws[i], ws[i], v, known)
				case tool == "sh":
					set(OptScript, ws[i], ws[i], v, known)
				}
				positional++
			}
			if t == "-m" && i+2 < len(ws) && strings.HasPrefix(ws[i+1].text, "axolotl.cli.train") {
				v, known := value(ws[i+2])
				set(OptRecipe, ws[i+2], ws[i+2], v, known)
				i += 2
			}
			continue
		}
		name, inline, hasInline := strings.Cut(t[2:], "=")
		if !inScript {
			name = launcherPrefix(tool, name)
		}
		if tool == "deepspeed" && !inScript && strings.Contains(name, "-") {
			// The runner registers underscore spellings only and refuses
			// the rest ("unrecognized arguments: --num-gpus"): the launch
			// fails, so the flag sets no GPU count.
			continue
		}
		key := strings.ReplaceAll(name, "-", "_")
		if f, own := launchFlags[key]; inScript || tool == "trl" && !(own && slices.Contains(f.tools, "trl")) {
			if l.ScriptFlags == nil {
				l.ScriptFlags = map[string]Span{}
			}
			l.ScriptFlags[key] = c.itemSpan(ws[i])
		}
		if key == "bf16" || key == "fp16" {
			// Trainer booleans: --bf16, --bf16 True, --bf16=false.
			on, first, last := true, ws[i], ws[i]
			switch {
			case hasInline:
				on = isTrue(inline)
			case i+1 < len(ws) && isBoolWord(ws[i+1].text):
				on, last = isTrue(ws[i+1].text), ws[i+1]
				i++
			}
			if on {
				set(OptPrecision, first, last, key, true)
			}
			continue
		}
		f, ok := launchFlags[key]
		if !ok || (f.tools != nil && !slices.Contains(f.tools, tool)) {
			continue
		}
		switch {
		case hasInline:
			v, known := inline, true
			if strings.ContainsAny(v, "$`") {
				v, known = expandVar(v, vars)
			}
			set(f.opt, ws[i], ws[i], v, known)
		case i+1 < len(ws) && !strings.HasPrefix(ws[i+1].text, "-"):
			v, known := value(ws[i+1])
			set(f.opt, ws[i], ws[i+1], v, known)
			i++
		}
		// `deepspeed ... --deepspeed --deepspeed_config X`: a bare
		// --deepspeed is the script's switch, not a file.
	}
	if tool == "python" && len(l.Opts) == 0 {
		return nil // a Python script that names nothing gpulint reads
	}
	return l
}

func isBoolWord(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "1", "0", "yes", "no":
		return true
	}
	return false
}

func isTrue(s string) bool {
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		return true
	}
	return false
}
