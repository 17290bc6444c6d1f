package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/baseline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/internal/source"
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
	// Exclude are globs of files and directories to skip, relative to the
	// working directory.
	Exclude []string
	// StdinName names standard input when the only path is "-": for kind
	// detection, the project file lookup and the reported path.
	StdinName string
}

// stdinPath is the path argument that means standard input.
const stdinPath = "-"

// stdinDefaultName is standard input's path when --stdin-filename is not
// given.
const stdinDefaultName = "<stdin>"

func (t *TargetFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.GPU, "gpu", "", "target GPU (e.g. H100-80GB, A100-40GB, L4, or a node label such as NVIDIA-H100-80GB-HBM3)")
	cmd.Flags().IntVar(&t.GPUs, "gpus", 0, "number of GPUs the job gets")
	cmd.Flags().StringVar(&t.Model, "model", "", "model: a catalog id (meta-llama/Llama-3.1-8B), an id in the local Hugging Face cache, or a directory with a Hugging Face config.json")
	cmd.Flags().StringVar(&t.Config, "config", "", "project file to use instead of the .gpulint.yaml found above each file")
	cmd.Flags().StringArrayVar(&t.Policies, "policy", nil, "directory of custom Rego policies (repeatable); they run in the same sandbox as the built-in rules")
	cmd.Flags().DurationVar(&t.Timeout, "timeout", 0, "stop evaluating one file after this long and report it (default 10s, or limits.timeout in .gpulint.yaml)")
	cmd.Flags().DurationVar(&t.RunTimeout, "run-timeout", 0, "report files not started after the whole run has taken this long (default none, or limits.run-timeout)")
	cmd.Flags().Int64Var(&t.MaxBytes, "max-file-bytes", 0, "do not parse files larger than this (default 10 MiB, or limits.max-file-bytes)")
	cmd.Flags().Int64Var(&t.PolicyMemory, "policy-memory", 0, "stop custom policies once the Go heap holds more than this many bytes (default 1 GiB, or limits.policy-memory)")
	cmd.Flags().BoolVar(&t.NoCache, "no-cache", false, "do not read or write the result cache")
	cmd.Flags().StringArrayVar(&t.Exclude, "exclude", nil, "skip files and directories matching this glob (repeatable; ** spans directories; a glob without / matches any name), as exclude: in .gpulint.yaml")
	cmd.Flags().StringVar(&t.StdinName, "stdin-filename", "", "with the path -, the name of the file read from standard input (kind detection, project file lookup, reported path)")
}

// validatePaths checks the path arguments against the target flags: "-"
// (standard input) stands alone, and --stdin-filename needs it.
func (t *TargetFlags) validatePaths(paths []string) error {
	if slices.Contains(paths, stdinPath) && len(paths) > 1 {
		return &usageError{errors.New("- (standard input) cannot be combined with other paths")}
	}
	if t.StdinName != "" && !slices.Equal(paths, []string{stdinPath}) {
		return &usageError{errors.New("--stdin-filename needs the path - (standard input)")}
	}
	return nil
}

// stdin reports whether the run reads standard input, and its name.
func (t *TargetFlags) stdin(paths []string) (string, bool) {
	if !slices.Equal(paths, []string{stdinPath}) {
		return "", false
	}
	return cmp.Or(t.StdinName, stdinDefaultName), true
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
	// Baseline is a baseline file: only findings not in it are reported.
	Baseline string
	// WriteBaseline records the run's findings in this file.
	WriteBaseline string
	// Verbose prints the details (arithmetic and evidence) under a
	// finding whose message text output shortens to its summary.
	Verbose bool
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
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "text output: print under each shortened finding the arithmetic and evidence its one line leaves out (json and sarif always carry them)")
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "error", "exit 1 on findings at or above: error, warning, info, never")
	cmd.Flags().StringVar(&opts.Color, "color", "auto", "color output: auto, always, never")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "files checked at once, and CPUs used (default: number of CPUs)")
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "report only findings not recorded in this baseline file, and exit by those alone")
	cmd.Flags().StringVar(&opts.WriteBaseline, "write-baseline", "", "record the findings in this baseline file (exits 0 unless gpulint cannot work)")
	opts.Target.register(cmd)
	return cmd
}

func (o *LintOptions) validate() error {
	if err := o.Target.validatePaths(o.Paths); err != nil {
		return err
	}
	if o.Baseline != "" && o.WriteBaseline != "" {
		return &usageError{errors.New("--baseline and --write-baseline cannot be combined: write the baseline from a run that reports everything")}
	}
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
	var early []source.Kind
	if prewarm {
		early = lint.SniffKinds(paths)
	}
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
	copts := lint.CollectOptions{Exclude: t.Exclude}
	var collected lint.Collection
	if name, ok := t.stdin(paths); ok {
		collected = lint.CollectNamed(name, copts)
	} else if collected, err = lint.CollectAll(paths, copts); err != nil {
		return nil, lint.Collection{}, nil, &usageError{err}
	}
	lopts := lint.Options{GPU: t.GPU, GPUs: t.GPUs, Model: t.Model, Workers: workers,
		FileTimeout: t.Timeout, RunTimeout: t.RunTimeout, HFCache: hfHubCache(f.Env),
		Home: f.Env.get("HOME")}
	lopts.Limits.MaxBytes = t.MaxBytes
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if abs, err := filepath.Abs(p); err == nil {
				lopts.Walked = append(lopts.Walked, abs)
			}
		}
	}
	policyDirs := append([]string(nil), t.Policies...)
	policyMemory := t.PolicyMemory // the flag, else the project file's
	var projects []*config.Project
	if t.Config != "" {
		p, err := config.Load(t.Config, deps.Validator)
		if err != nil {
			return nil, lint.Collection{}, nil, &usageError{err}
		}
		lopts.Project = p
		projects = []*config.Project{p}
		policyDirs = append(policyDirs, p.PolicyDirs()...)
		if lopts.RunTimeout == 0 {
			lopts.RunTimeout = p.Limits.RunTimeout
		}
		if policyMemory == 0 {
			policyMemory = p.Limits.PolicyMemory
		}
	} else {
		ps, err := config.LoadSet(collected.Files, deps.Validator)
		if err != nil {
			return nil, lint.Collection{}, nil, &usageError{err}
		}
		lopts.Projects = ps
		projects = ps.Projects()
		policyDirs = append(policyDirs, ps.PolicyDirs()...)
		if lopts.RunTimeout == 0 {
			lopts.RunTimeout = ps.RunTimeout()
		}
		if policyMemory == 0 {
			policyMemory = ps.PolicyMemory()
		}
	}
	collected.Files = slices.DeleteFunc(collected.Files, func(path string) bool {
		p := lopts.Project
		if p == nil {
			p = lopts.Projects.Find(path)
		}
		return p.Excluded(path) != ""
	})
	for _, h := range collected.Helm {
		fmt.Fprintf(f.IO.ErrOut, "gpulint: %s: skipped: a Helm chart template (render it with helm template and lint the output)\n", h)
	}
	if len(policyDirs) > 0 {
		custom, err := withCustomPolicies(f, policyDirs, policyMemory)
		if err != nil {
			return nil, lint.Collection{}, nil, err
		}
		deps = custom
	}
	for _, p := range projects {
		if err := deps.CheckProject(p); err != nil {
			return nil, lint.Collection{}, nil, &usageError{err}
		}
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
		// A directory written for another tool (conftest's package main
		// with deny) would load and check nothing: say what gpulint reads.
		if mods, err := rules.ParseModules(os.DirFS(abs), true); err == nil && !slices.ContainsFunc(mods, rules.Module.DefinesRule) {
			return nil, &usageError{fmt.Errorf("policy directory %s defines no gpulint rule: gpulint reads .rego files with a # METADATA block "+
				"(custom: id, slug, severity, ...) whose package defines `findings` built with data.gpulint.lib.finding; "+
				"conftest-style deny/warn rules are not read (see README, Custom policies)", d)}
		}
		fss = append(fss, os.DirFS(abs))
	}
	d, err := lint.BuildDepsWith(lint.DepsOptions{PolicyMemory: uint64(policyMemory), HFCache: hfHubCache(f.Env)},
		f.Assets.Policies, fss...)
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
	if _, ok := t.stdin(paths); ok {
		res, err := lintStdin(ctx, f, l, collected)
		return l, res, err
	}
	res, err := l.Run(ctx, collected.Files)
	if err != nil {
		return l, res, err
	}
	res.Helm = collected.Helm
	l.AddUnreadable(res, collected.Unreadable)
	return l, res, nil
}

// lintStdin lints standard input under the name collected for it (none
// when excluded or a Helm template).
func lintStdin(ctx context.Context, f *Factory, l *lint.Linter, collected lint.Collection) (*lint.Result, error) {
	res := &lint.Result{Helm: collected.Helm}
	if len(collected.Files) == 0 {
		return res, nil
	}
	if f.IO.In == nil {
		return nil, &usageError{errors.New("-: no standard input")}
	}
	data, err := io.ReadAll(f.IO.In)
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	fr, err := l.LintBytes(ctx, collected.Files[0], data)
	if err != nil {
		return nil, err
	}
	res.Files = []lint.FileResult{fr}
	res.Findings = finding.Sort(append([]finding.Finding(nil), fr.Findings...))
	return res, nil
}

func runLint(ctx context.Context, o *LintOptions) error {
	ios := o.Factory.IO
	var base *baseline.Baseline
	if o.Baseline != "" {
		b, err := readBaseline(o.Baseline)
		if err != nil {
			return err
		}
		base = b
	}
	l, res, err := lintPaths(ctx, o.Factory, o.Paths, o.Target, o.Workers, o.Color)
	if err != nil {
		return err
	}
	baselined := 0
	res.Findings, baselined = base.Filter(res.Findings)
	in := reportInput(res)
	in.Summary.Baselined = baselined
	in.Rules = ruleDocs(l.Rules())
	render := report.Renderers()[o.Format]
	if err := render(ios.Out, in, report.Options{Color: ios.ColorEnabled(), ShowFixes: true, Verbose: o.Verbose}); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if o.WriteBaseline != "" {
		return writeBaseline(ios.ErrOut, o.WriteBaseline, res.Findings)
	}
	failOn, _ := finding.ParseSeverity(o.FailOn)
	if failOn != finding.SeverityNone && finding.Worst(res.Findings) >= failOn {
		return findingsError{}
	}
	return nil
}

// ruleDocs is the catalog's text for each rule, for the renderers that
// describe rules (SARIF).
func ruleDocs(cat *rules.Catalog) map[string]report.RuleDoc {
	out := map[string]report.RuleDoc{}
	for _, r := range cat.All() {
		out[r.ID] = report.RuleDoc{Title: r.Title, Rationale: r.Rationale, Remediation: r.Remediation}
	}
	return out
}

// reportInput adapts a lint result for the renderers.
func reportInput(res *lint.Result) report.Input {
	in := report.Input{Findings: res.Findings, Sources: map[string][]byte{}, ToolVersion: ToolVersion()}
	for _, f := range res.Files {
		rf := report.File{Path: f.Path, Kind: string(f.Kind)}
		if z := f.Sizing; z != nil {
			rf.Sizing = &report.Sizing{GPU: z.GPU, Model: z.Model, Fits: z.Fits, PerGPUBytes: z.PerGPUBytes, CapacityBytes: z.CapacityBytes,
				AssumedModel: z.AssumedModel, AssumedWeights: z.AssumedWeights, Open: z.Open, Note: z.Note, NotStartable: z.NotStartable}
			for _, a := range z.Alternatives {
				rf.Sizing.Alternatives = append(rf.Sizing.Alternatives, report.Alternative{Value: a.Value, Fits: a.Fits, PerGPUBytes: a.PerGPUBytes})
			}
			for _, r := range z.Related {
				rf.Sizing.Related = append(rf.Sizing.Related, report.SizingSource{Role: r.Role, File: r.File, Line: r.Line})
			}
		}
		in.Files = append(in.Files, rf)
		in.Sources[f.Path] = f.Data
	}
	s := res.Summary()
	in.Summary = report.Summary{Files: s.Files, Errors: s.Errors, Warnings: s.Warnings, Infos: s.Infos}
	for _, f := range res.Files {
		if f.Skipped() {
			in.Summary.Skipped++
			in.Skipped = append(in.Skipped, report.Skip{Path: f.Path, Reason: "not a GPU config"})
		}
	}
	for _, h := range res.Helm {
		in.Skipped = append(in.Skipped, report.Skip{Path: h, Reason: "helm chart template"})
	}
	return in
}

// readBaseline loads a baseline file; a missing or malformed one is a
// usage error, since the run cannot know what is new.
func readBaseline(path string) (*baseline.Baseline, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &usageError{fmt.Errorf("baseline: %w (write one with --write-baseline)", err)}
	}
	defer fh.Close()
	b, err := baseline.Read(fh, path)
	if err != nil {
		return nil, &usageError{err}
	}
	return b, nil
}

// writeBaseline records findings in path and says so on errOut.
func writeBaseline(errOut io.Writer, path string, fs []finding.Finding) error {
	var buf bytes.Buffer
	if err := baseline.Write(&buf, path, fs); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	fmt.Fprintf(errOut, "gpulint: wrote %d %s to %s\n", len(fs), plural(len(fs), "finding", "findings"), path)
	return nil
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
