package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/report"
	"github.com/gpulint/gpulint/tuner"
)

// Shell completion. cobra adds `gpulint completion bash|zsh|fish|powershell`
// and the hidden __complete command the scripts call; this file says what
// each flag and argument that takes a name from a catalog may complete to.

// flagValues are the fixed values of flags whose set is closed, per
// command where it differs; "" is every command with that flag.
var flagValues = map[string]map[string][]string{
	"fail-on":  {"": {"error", "warning", "info", "never"}},
	"color":    {"": {"auto", "always", "never"}},
	"workload": {"estimate": {"train", "lora", "qlora", "inference", "serve"}},
	"format": {
		"rules":    {"text", "json", "markdown"},
		"estimate": {"text", "json"},
	},
}

// registerCompletions wires completion into every command of the tree.
// It looks flags up by name, so a command's own file keeps only its flags.
func registerCompletions(root *cobra.Command, f *Factory) {
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		name := cmd.Name()
		fl := cmd.Flags()
		if fl.Lookup("gpu") != nil {
			_ = cmd.RegisterFlagCompletionFunc("gpu", gpuCompletion)
		}
		if fl.Lookup("model") != nil {
			_ = cmd.RegisterFlagCompletionFunc("model", modelCompletion)
		}
		if fl.Lookup("format") != nil {
			vals, ok := flagValues["format"][name]
			if !ok {
				vals = report.Formats()
			}
			_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(vals))
		}
		for flag, byCmd := range flagValues {
			if flag == "format" || fl.Lookup(flag) == nil {
				continue
			}
			vals, ok := byCmd[name]
			if !ok {
				vals, ok = byCmd[""]
			}
			if ok {
				_ = cmd.RegisterFlagCompletionFunc(flag, fixedCompletion(vals))
			}
		}
		if name == "explain" {
			cmd.ValidArgsFunction = ruleCompletion(f)
		}
	}
	walk(root)
}

func fixedCompletion(vals []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(vals, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// gpuCompletion offers the catalog's GPU names, described by their
// display names.
func gpuCompletion(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, g := range cat.GPUs() {
		if hasPrefixFold(g.Name, toComplete) {
			out = append(out, g.Name+"\t"+g.DisplayName)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// modelCompletion offers the catalog's model ids; a model may also be a
// local directory, so the shell completes directories as well.
func modelCompletion(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cat, err := tuner.LoadCatalog()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var ids []string
	for _, m := range cat.Models() {
		ids = append(ids, m.ID)
	}
	out := withPrefix(ids, toComplete)
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// ruleCompletion offers rule ids and slugs, described by their titles.
func ruleCompletion(f *Factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		deps, err := f.Deps()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, r := range deps.Catalog.All() {
			for _, name := range []string{r.ID, r.Slug} {
				if hasPrefixFold(name, toComplete) {
					out = append(out, name+"\t"+r.Title)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func withPrefix(vals []string, prefix string) []string {
	var out []string
	for _, v := range vals {
		if hasPrefixFold(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
