package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
	"github.com/gpulint/gpulint/tuner"
)

// TargetFlags are the flags that name the target hardware and model, the
// project file, custom policies and the per-file time limit.
type TargetFlags struct {
	GPU        string
	GPUs       int
	Model      string
	Config     string
	Policies   []string
	Timeout    time.Duration
	RunTimeout time.Duration
	MaxBytes   int64
	// PolicyMemory bounds the Go heap while custom policies evaluate.
	PolicyMemory int64
	NoCache      bool
}

func (t *TargetFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.GPU, "gpu", "", "target GPU (e.g. H100-80GB, A100-40GB, L4, or a node label such as NVIDIA-H100-80GB-HBM3)")
	cmd.Flags().IntVar(&t.GPUs, "gpus", 0, "number of GPUs the job gets")
	cmd.Flags().StringVar(&t.Model, "model", "", "model: a catalog id (meta-llama/Llama-3.1-8B) or a local directory with a Hugging Face config.json")
	cmd.Flags().StringVar(&t.Config, "config", "", "project file to use instead of the .gpulint.yaml found above each file")
	cmd.Flags().StringArrayVar(&t.Policies, "policy", nil, "directory of custom Rego policies (repeatable); they run in the same sandbox as the built-in rules")
	cmd.Flags().DurationVar(&t.Timeout, "timeout", 0, "stop evaluating one file after this long and report it (default 10s, or limits.timeout in .gpulint.yaml)")
	cmd.Flags().DurationVar(&t.RunTimeout, "run-timeout", 0, "report files not started after the whole run has taken this long (default none, or limits.run-timeout)")
	cmd.Flags().Int64Var(&t.MaxBytes, "max-file-bytes", 0, "do not parse files larger than this (default 10 MiB, or limits.max-file-bytes)")
	cmd.Flags().Int64Var(&t.PolicyMemory, "policy-memory", 0, "stop custom policies once the Go heap holds more than this many bytes (default 1 GiB, or limits.policy-memory)")
	cmd.Flags().BoolVar(&t.NoCache, "no-cache", false, "do not read or write the result cache")
}

// LintOptions are `gpulint lint`'s flags and dependencies.
type LintOptions struct {
	Factory *Factory
	Paths   []string
	Format  string
	FailOn  string
	Color   string
	Workers int
	Target  TargetFlags
}

// NewCmdLint builds `gpulint lint`. runF replaces the work in tests of
// flag parsing.
func NewCmdLint(f *Factory, runF func(*LintOptions) error) *cobra.Command {
	opts := &LintOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Report misconfigurations in GPU configs",
		Long: `Lint DeepSpeed, Accelerate, vLLM, Kubernetes and MIG configs. Directories are
walked (skipping .git, vendor and node_modules); files are detected by content.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
2 usage or config error; 3 internal error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runLint(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: "+strings.Join(report.Formats(), ", "))
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "error", "exit 1 on findings at or above: error, warning, info, never")
	cmd.Flags().StringVar(&opts.Color, "color", "auto", "color output: auto, always, never")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "files checked at once, and CPUs used (default: number of CPUs)")
	opts.Target.register(cmd)
	return cmd
}

func (o *LintOptions) validate() error {
	if _, ok := report.Renderers()[o.Format]; !ok {
		return &usageError{fmt.Errorf("unknown --format %q (want %s)", o.Format, strings.Join(report.Formats(), ", "))}
	}
	if _, err := finding.ParseSeverity(o.FailOn); err != nil {
		return &usageError{fmt.Errorf("--fail-on: %w", err)}
	}
	if !slices.Contains([]string{"auto", "always", "never"}, o.Color) {
		return &usageError{fmt.Errorf("unknown --color %q (want auto, always or never)", o.Color)}
	}
	if o.Target.GPUs < 0 || o.Workers < 0 || o.Target.Timeout < 0 || o.Target.RunTimeout < 0 || o.Target.MaxBytes < 0 || o.Target.PolicyMemory < 0 {
		return &usageError{errors.New("--gpus, --workers, --timeout, --run-timeout, --max-file-bytes and --policy-memory must not be negative")}
	}
	return nil
}

// prepareRun builds the linter for a set of paths: dependencies, target
// flags checked against the catalogs, project files loaded.
func prepareRun(f *Factory, paths []string, t TargetFlags, workers int) (*lint.Linter, lint.Collection, *lint.Deps, error) {
	// A run over a few named files starts building the schema checks and
	// loading the rules of their kinds now, while the rest gets ready; a
	// one-file run otherwise waits for both after reading its file.
	early := lint.SniffKinds(paths)
	lint.WarmSchemas(f.Validator(), early)
	deps, err := f.Deps()
	if err != nil {
		return nil, lint.Collection{}, nil, err
	}
	if len(t.Policies) == 0 {
		deps.Warm(early) // custom policies make another engine (below)
	}
	if err := deps.Targets.CheckFlags(t.GPU, t.Model); err != nil {
		return nil, lint.Collection{}, nil, &usageError{err}
	}
	collected, err := lint.CollectAll(paths, lint.CollectOptions{})
	if err != nil {
		return nil, lint.Collection{}, nil, &usageError{err}
	}
	files := collected.Files
	lopts := lint.Options{GPU: t.GPU, GPUs: t.GPUs, Model: t.Model, Workers: workers,
		FileTimeout: t.Timeout, RunTimeout: t.RunTimeout}
	lopts.Limits.MaxBytes = t.MaxBytes
	policyDirs := append([]string(nil), t.Policies...)
	policyMemory := t.PolicyMemory // the flag, else the project file's
	if t.Config != "" {
		p, err := config.Load(t.Config, deps.Validator)
		if err != nil {
			return nil, lint.Collection{}, nil, &usageError{err}
		}
		lopts.Project = p
		policyDirs = append(policyDirs, p.PolicyDirs()...)
		if lopts.RunTimeout == 0 {
			lopts.RunTimeout = p.Limits.RunTimeout
		}
		if policyMemory == 0 {
			policyMemory = p.Limits.PolicyMemory
		}
	} else {
		ps, err := config.LoadSet(files, deps.Validator)
		if err != nil {
			return nil, lint.Collection{}, nil, &usageError{err}
		}
		lopts.Projects = ps
		policyDirs = append(policyDirs, ps.PolicyDirs()...)
		if lopts.RunTimeout == 0 {
			lopts.RunTimeout = ps.RunTimeout()
		}
		if policyMemory == 0 {
			policyMemory = ps.PolicyMemory()
		}
	}
	if len(policyDirs) > 0 {
		custom, err := withCustomPolicies(f, policyDirs, policyMemory)
		if err != nil {
			return nil, lint.Collection{}, nil, err
		}
		deps = custom
	}
	deps.Warm(early)
	if !t.NoCache {
		lopts.Cache = openCache(f, policyDirs, lopts)
	}
	return lint.New(*deps, lopts), collected, deps, nil
}

// openCache opens the result cache (GPULINT_CACHE_DIR, else the user cache
// directory); nil when there is none to use.
func openCache(f *Factory, policyDirs []string, lopts lint.Options) *lint.Cache {
	dir := f.Env.get("GPULINT_CACHE_DIR")
	if dir == "" {
		d, err := lint.DefaultCacheDir()
		if err != nil {
			return nil
		}
		dir = d
	}
	assets := []fs.FS{f.Assets.Policies, f.Assets.Schemas, tuner.ProfilesFS()}
	for _, d := range policyDirs {
		assets = append(assets, os.DirFS(d))
	}
	salt, err := lint.Salt(ToolVersion()+" "+buildIdentity(), assets, lopts)
	if err != nil {
		return nil
	}
	return lint.NewCache(dir, salt)
}

// withCustomPolicies compiles the built-in rules together with a team's
// own. A custom policy that does not compile (a refused built-in such as
// http.send or opa.runtime, a syntax error, incomplete metadata) is a
// usage error naming the file and line. policyMemory bounds the heap while
// they evaluate (0: the default).
func withCustomPolicies(f *Factory, dirs []string, policyMemory int64) (*lint.Deps, error) {
	var fss []fs.FS
	seen := map[string]bool{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, &usageError{fmt.Errorf("policy directory %s: %w", d, err)}
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		st, err := os.Stat(abs)
		if err != nil || !st.IsDir() {
			return nil, &usageError{fmt.Errorf("policy directory %s: not a directory", d)}
		}
		fss = append(fss, os.DirFS(abs))
	}
	d, err := lint.BuildDepsWith(lint.DepsOptions{PolicyMemory: uint64(policyMemory)}, f.Assets.Policies, fss...)
	if err != nil {
		return nil, &usageError{fmt.Errorf("custom policies: %w", err)}
	}
	d.Validator = f.Validator()
	return &d, nil
}

// lintPaths prepares a run over paths (dependencies, target flags,
// project files, cache) and lints them.
func lintPaths(ctx context.Context, f *Factory, paths []string, t TargetFlags, workers int, color string) (*lint.Linter, *lint.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	f.IO.SetColorMode(color)
	// --workers N also bounds the CPUs the run uses (the garbage collector
	// and background loading included), as a CI job sharing a machine
	// expects of a one-worker run.
	if workers > 0 && workers < runtime.GOMAXPROCS(0) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
	}
	l, collected, _, err := prepareRun(f, paths, t, workers)
	if err != nil {
		return nil, nil, err
	}
	res, err := l.Run(ctx, collected.Files)
	if err != nil {
		return l, res, err
	}
	l.AddUnreadable(res, collected.Unreadable)
	return l, res, nil
}

func runLint(ctx context.Context, o *LintOptions) error {
	ios := o.Factory.IO
	_, res, err := lintPaths(ctx, o.Factory, o.Paths, o.Target, o.Workers, o.Color)
	if err != nil {
		return err
	}
	in := reportInput(res)
	render := report.Renderers()[o.Format]
	if err := render(ios.Out, in, report.Options{Color: ios.ColorEnabled(), ShowFixes: true}); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	failOn, _ := finding.ParseSeverity(o.FailOn)
	if failOn != finding.SeverityNone && finding.Worst(res.Findings) >= failOn {
		return findingsError{}
	}
	return nil
}

// reportInput adapts a lint result for the renderers.
func reportInput(res *lint.Result) report.Input {
	in := report.Input{Findings: res.Findings, Sources: map[string][]byte{}, ToolVersion: ToolVersion()}
	for _, f := range res.Files {
		in.Files = append(in.Files, report.File{Path: f.Path, Kind: string(f.Kind)})
		in.Sources[f.Path] = f.Data
	}
	s := res.Summary()
	in.Summary = report.Summary{Files: s.Files, Errors: s.Errors, Warnings: s.Warnings, Infos: s.Infos}
	return in
}

// buildIdentity names the running binary: a rebuilt gpulint, whose Go
// logic may differ under the same version, gets new cache keys. The
// executable's size and modification time change with every build; the
// VCS revision is added when the build recorded it.
func buildIdentity() string {
	id := ""
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			id = fmt.Sprintf("%s %d %d", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Key + "=" + s.Value
			}
		}
	}
	return id
}
