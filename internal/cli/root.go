// Package cli is gpulint's command tree: flags become Options, Options
// drive library calls, and results go to the IOStreams. It is the only
// package that talks to the user.
package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// Env is the part of the environment gpulint reads.
type Env struct {
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	// Dir is the working directory; empty means the process's.
	Dir string
}

func lookupEnv(e Env, k string) (string, bool) {
	if e.LookupEnv != nil {
		return e.LookupEnv(k)
	}
	v := e.get(k)
	return v, v != ""
}

func (e Env) get(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Assets are the embedded files gpulint is built from.
type Assets struct {
	Policies fs.FS
	Schemas  fs.FS
}

// Factory builds the shared dependencies once per run.
type Factory struct {
	IO     *iostreams.IOStreams
	Env    Env
	Assets Assets

	once sync.Once
	deps *lint.Deps
	err  error

	validatorOnce sync.Once
	validator     *normalize.Validator
}

// Run executes gpulint with args (without the program name) and returns
// the process exit code.
func Run(args []string, ios *iostreams.IOStreams, env Env, assets Assets) int {
	if v, _ := lookupEnv(env, "NO_COLOR"); iostreams.NoColor(v) {
		ios.SetNoColor(true)
	}
	f := &Factory{IO: ios, Env: env, Assets: assets}
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.Execute()
	return exitCode(ios, err)
}

func exitCode(ios *iostreams.IOStreams, err error) int {
	if err == nil {
		return ExitOK
	}
	var fe findingsError
	if errors.As(err, &fe) {
		return ExitFindings
	}
	var nw notWrittenError
	if errors.As(err, &nw) {
		fmt.Fprintf(ios.ErrOut, "gpulint: %v\n", err)
		return ExitInternal
	}
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(ios.ErrOut, "gpulint: %v\n", err)
		return ExitUsage
	}
	fmt.Fprintf(ios.ErrOut, "gpulint: internal error: %v\n", err)
	return ExitInternal
}

// isCobraUsage recognises cobra's flag and argument errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "unknown command", "accepts ", "requires "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "gpulint",
		Short:         "Lint and tune GPU training and serving configs",
		Long:          "gpulint finds the misconfigurations that make GPU jobs slow, expensive or dead at start-up - in DeepSpeed, Accelerate, vLLM and Kubernetes configs - and proposes the patched config.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       CurrentBuild().String(),
	}
	root.SetVersionTemplate(versionTemplate)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(suggestFlag)
	root.AddCommand(
		NewCmdLint(f, nil),
		NewCmdFix(f, nil),
		NewCmdEstimate(f, nil),
		NewCmdRules(f),
		NewCmdExplain(f),
		NewCmdAction(f, nil),
		NewCmdVersion(f),
	)
	registerCompletions(root, f)
	return root
}

// suggestFlag adds the closest flag of the command to an unknown-flag
// error: "unknown flag: --exlcude (did you mean --exclude?)".
func suggestFlag(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	if s := normalize.DidYouMean(name, names); s != "" {
		return fmt.Errorf("%s (did you mean --%s?)", msg, s)
	}
	return err
}
