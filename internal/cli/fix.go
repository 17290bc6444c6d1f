package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
)

// FixOptions are `gpulint fix`'s flags and dependencies.
type FixOptions struct {
	Factory *Factory
	Paths   []string
	Write   bool
	// Diff prints a diff of standard input instead of its fixed content.
	Diff    bool
	Force   bool
	Tune    bool
	FailOn  string
	Color   string
	Workers int
	Target  TargetFlags
	// writeFile replaces a file's content (edit.WriteFile when nil); a
	// test sets it through runF to make a write fail.
	writeFile func(root, path string, old, data []byte, opts edit.WriteOptions) error
}

// notWrittenError marks a fix --write run that could not write some of
// the files it fixed; it exits with ExitInternal.
type notWrittenError struct{ n int }

func (e notWrittenError) Error() string {
	return fmt.Sprintf("%d %s not written", e.n, plural(e.n, "file", "files"))
}

// NewCmdFix builds `gpulint fix`.
func NewCmdFix(f *Factory, runF func(*FixOptions) error) *cobra.Command {
	opts := &FixOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "fix [PATH...]",
		Short: "Apply the suggested fixes (a diff by default; --write to change files)",
		Long: `Apply the fixes of the findings gpulint reports. By default prints a unified
diff; --write changes the files in place, atomically, keeping each file's mode
and, where allowed, its owner. A file that changed after gpulint read it is
not written (run fix again); a read-only file (no write permission bits) is
not written unless --force is given. A file that could not be written is
named, and the run exits 3.
--tune also applies the tuner's sizing (batch, ZeRO stage, tensor parallelism,
MIG profile); plain fix applies rule fixes only. The tuner's sizing is
applied after the rule fixes and planned again on their result, so a rule
fix that changes what it rests on (16-bit loading instead of 4-bit) cannot
leave it stale.

Each fixed file is linted again: if a fixed finding is still reported or the
result does not parse, nothing is written for that file and the reason is
printed. Exit codes as lint, for the findings that remain.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			lo := LintOptions{Paths: opts.Paths, Format: "text", FailOn: opts.FailOn, Color: opts.Color, Workers: opts.Workers, Target: opts.Target}
			if err := lo.validate(); err != nil {
				return err
			}
			if _, stdin := opts.Target.stdin(opts.Paths); stdin && opts.Write {
				return &usageError{errors.New("fix - prints the fixed standard input; --write has no file to write")}
			}
			if _, stdin := opts.Target.stdin(opts.Paths); opts.Diff && !stdin {
				return &usageError{errors.New("--diff applies to fix - (standard input); files get a diff unless --write is given")}
			}
			if runF != nil {
				return runF(opts)
			}
			return runFix(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Write, "write", "w", false, "write the fixed files instead of printing a diff")
	cmd.Flags().BoolVar(&opts.Diff, "diff", false, "with the path -, print a diff instead of the fixed content")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "with --write, also write read-only files (no write permission bits)")
	cmd.Flags().BoolVar(&opts.Tune, "tune", false, "also apply the tuner's sizing proposals")
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "error", "exit 1 when findings at or above this level remain: error, warning, info, never")
	cmd.Flags().StringVar(&opts.Color, "color", "auto", "color output: auto, always, never")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "files checked at once, and CPUs used (default: number of CPUs)")
	opts.Target.register(cmd)
	return cmd
}

func runFix(ctx context.Context, o *FixOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ios := o.Factory.IO
	l, res, err := lintPaths(ctx, o.Factory, o.Paths, o.Target, o.Workers, o.Color)
	if err != nil {
		return err
	}
	if _, stdin := o.Target.stdin(o.Paths); stdin {
		return fixStdin(ctx, o, l, res)
	}
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	var remaining []finding.Finding
	var diffs strings.Builder
	writeFile := o.writeFile
	if writeFile == nil {
		writeFile = edit.WriteFile
	}
	fixedFiles, fixedFindings, notWritten := 0, 0, 0
	for _, fr := range res.Files {
		out, err := l.Fix(ctx, fr, o.Tune)
		if err != nil {
			return err
		}
		printFixNotes(ios.ErrOut, fr.Path, out)
		if !o.Write {
			// Nothing is written: what remains is what is there.
			remaining = append(remaining, out.Found...)
			if out.Changed() {
				fixedFiles++
				fixedFindings += len(out.Applied)
				name := filepath.ToSlash(fr.Path)
				diffs.WriteString(edit.Unified("a/"+name, "b/"+name, out.Old, out.New, 3))
			}
			continue
		}
		if !out.Changed() {
			remaining = append(remaining, out.Remaining...)
			continue
		}
		// out.Old is the bytes the fixes were computed from: the file is
		// replaced only while it still holds them.
		if err := writeFile(writeRoot(root, fr.Path), fr.Path, out.Old, out.New, edit.WriteOptions{Force: o.Force}); err != nil {
			hint := ""
			switch {
			case errors.Is(err, edit.ErrChanged):
				hint = " (run gpulint fix again)"
			case errors.Is(err, edit.ErrReadOnly):
				hint = " (use --force to write it anyway)"
			}
			fmt.Fprintf(ios.ErrOut, "gpulint: %s: not written: %v%s\n", fr.Path, err, hint)
			notWritten++
			remaining = append(remaining, out.Found...)
			continue
		}
		remaining = append(remaining, out.Remaining...)
		fixedFiles++
		fixedFindings += len(out.Applied)
	}
	remaining = finding.Sort(remaining)
	if !o.Write {
		if _, err := fmt.Fprint(ios.Out, diffs.String()); err != nil {
			return fmt.Errorf("write diff: %w", err)
		}
	} else {
		in := reportInput(&lint.Result{Files: res.Files, Findings: remaining})
		if err := report.Text(ios.Out, in, report.Options{Color: ios.ColorEnabled()}); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	verb := "would fix"
	if o.Write {
		verb = "fixed"
	}
	fmt.Fprintf(ios.ErrOut, "gpulint: %s %d %s in %d %s\n", verb, fixedFindings, plural(fixedFindings, "finding", "findings"), fixedFiles, plural(fixedFiles, "file", "files"))
	if notWritten > 0 {
		return notWrittenError{notWritten}
	}
	failOn, _ := finding.ParseSeverity(o.FailOn)
	if failOn != finding.SeverityNone && finding.Worst(remaining) >= failOn {
		return findingsError{}
	}
	return nil
}

// fixStdin prints standard input with its fixes applied (or, with --diff,
// the diff); nothing is written. Exit codes as for files, by the findings
// that remain in the fixed content.
func fixStdin(ctx context.Context, o *FixOptions, l *lint.Linter, res *lint.Result) error {
	ios := o.Factory.IO
	if len(res.Files) == 0 {
		return nil // excluded or a Helm template: nothing read
	}
	fr := res.Files[0]
	out, err := l.Fix(ctx, fr, o.Tune)
	if err != nil {
		return err
	}
	printFixNotes(ios.ErrOut, fr.Path, out)
	remaining := out.Remaining
	if !out.Changed() {
		remaining = out.Found
	}
	if o.Diff {
		if out.Changed() {
			name := filepath.ToSlash(fr.Path)
			fmt.Fprint(ios.Out, edit.Unified("a/"+name, "b/"+name, out.Old, out.New, 3))
		}
	} else if _, err := ios.Out.Write(out.New); err != nil {
		return fmt.Errorf("write fixed content: %w", err)
	}
	n := len(out.Applied)
	fmt.Fprintf(ios.ErrOut, "gpulint: fixed %d %s in %s\n", n, plural(n, "finding", "findings"), fr.Path)
	failOn, _ := finding.ParseSeverity(o.FailOn)
	if failOn != finding.SeverityNone && finding.Worst(remaining) >= failOn {
		return findingsError{}
	}
	return nil
}

// writeRoot is the directory a fix may write under: the working directory
// for files inside it, else the file's own directory. Symlinks leading out
// of it are refused by edit.WriteFile.
func writeRoot(wd, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Dir(path)
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return wd
	}
	return filepath.Dir(abs)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printFixNotes tells stderr which fixes were skipped and why a file's
// fixes were refused.
func printFixNotes(w io.Writer, path string, out lint.FixOutcome) {
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "gpulint: %s\n", s)
	}
	if out.Refused != "" {
		fmt.Fprintf(w, "gpulint: %s: %s\n", path, out.Refused)
	}
}
