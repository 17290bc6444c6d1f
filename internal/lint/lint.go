package lint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/internal/source"
)

// Options configure a run.
type Options struct {
	// Target flags: they win over the project file, which wins over what
	// the configs themselves say.
	GPU   string
	GPUs  int
	Model string
	// Workers bounds the files checked at once (default: GOMAXPROCS).
	Workers int
	// Limits set by flags; zero fields fall back to the project file, then
	// to source.DefaultLimits.
	Limits source.Limits
	// FileTimeout bounds the evaluation of one file (flag; else the
	// project file; else 10 s). RunTimeout bounds the whole run.
	FileTimeout, RunTimeout time.Duration
	// Project, when set, overrides the .gpulint.yaml found by walking up.
	Project *config.Project
	// Projects are the project files found above the run's files; a
	// file read as context gets the nearest one above it too (Set.Find).
	Projects *config.Set
	// Cache, when set, returns stored results for unchanged inputs.
	Cache *Cache
	// Root bounds the launch scripts and manifests read as context for a
	// config (related_launch.go): none above it is read. Empty: the
	// repository a few levels above each config (the nearest directory
	// holding .git, else the outermost holding a project file; a nested
	// project file does not bound it), else the config's own directory.
	Root string
	// Home is the user's home directory: the repository walk without
	// Root (repoBoundary) never reaches it nor anything above it, so a
	// stray project file or .git there cannot widen the walk to the whole
	// home directory. Empty: no such ceiling (the filesystem root and
	// mount points still bound the walk).
	Home string
	// Walked are the directories the run walked whole (absolute): an
	// ignore entry with a wildcard is judged unused only when a walk
	// covered its project, since a run over a few named files (a
	// pre-commit hook, a pull request's changed files) cannot know what
	// the entry silences elsewhere.
	Walked []string
	// HFCache is the Hugging Face hub cache the run's model lookups read
	// (DepsOptions.HFCache); the result cache's salt covers its refs.
	HFCache string
}

// Deps are the compiled assets a Linter shares across files.
type Deps struct {
	Catalog   *rules.Catalog
	Engine    *check.Engine
	Validator *normalize.Validator
	Targets   *TargetResolver
}

// Linter checks files. It is safe for concurrent use.
type Linter struct {
	deps    Deps
	opts    Options
	related *relatedIndex
}

// New builds a Linter from compiled dependencies.
func New(deps Deps, opts Options) *Linter {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	return &Linter{deps: deps, opts: opts, related: newRelatedIndex()}
}

// Rules returns the rule catalog the linter runs, custom policies
// included.
func (l *Linter) Rules() *rules.Catalog { return l.deps.Catalog }

// defaultFileTimeout bounds one file's evaluation unless configured.
const defaultFileTimeout = 10 * time.Second

// limits returns the limits for a file: flags, then its project file,
// then the defaults.
func (l *Linter) limits(proj *config.Project) (source.Limits, time.Duration) {
	lim := source.DefaultLimits()
	timeout := defaultFileTimeout
	if proj != nil {
		pl := proj.Limits
		if pl.MaxBytes > 0 {
			lim.MaxBytes = int64(pl.MaxBytes)
		}
		if pl.MaxDepth > 0 {
			lim.MaxDepth = pl.MaxDepth
		}
		if pl.MaxNodes > 0 {
			lim.MaxNodes = pl.MaxNodes
		}
		if pl.Timeout > 0 {
			timeout = pl.Timeout
		}
	}
	if f := l.opts.Limits; f.MaxBytes > 0 {
		lim.MaxBytes = f.MaxBytes
	}
	if f := l.opts.Limits; f.MaxDepth > 0 {
		lim.MaxDepth = f.MaxDepth
	}
	if f := l.opts.Limits; f.MaxNodes > 0 {
		lim.MaxNodes = f.MaxNodes
	}
	if l.opts.FileTimeout > 0 {
		timeout = l.opts.FileTimeout
	}
	return lim, timeout
}

// FileResult is what one file produced.
type FileResult struct {
	Path     string
	Kind     source.Kind
	Findings []finding.Finding
	// Sizing is the memory verdict gpulint reached for the file with the
	// GPU and model it found (the tightest of its documents), whether or
	// not a rule fired; nil when it could not estimate.
	Sizing *Sizing
	// Data is the file's content as read (for fix, diff and the excerpts
	// and columns of reports). Run keeps it only for files with findings
	// and files a finding points to: a large run holds what it reports,
	// not every byte it read.
	Data []byte
	// incomplete marks a result cut short by the evaluation timeout; it
	// is never cached.
	incomplete bool
	// related are the other files the result depends on.
	related []relatedFile
	// cached marks a result answered from the cache: its findings are
	// reported, but Fix never applies its edits.
	cached bool
	// ignored are the indexes of the project file's ignore entries that
	// silenced a finding here.
	ignored []int
}

// Skipped reports whether the file was read but not recognised as a GPU
// config: of no known kind and with nothing to report.
func (fr FileResult) Skipped() bool {
	return fr.Kind == source.KindUnknown && len(fr.Findings) == 0
}

// Result is a whole run.
type Result struct {
	Files    []FileResult
	Findings []finding.Finding
	// Helm are the Helm chart templates the run skipped unread.
	Helm []string
}

// Summary counts findings by severity.
type Summary struct {
	Files, Errors, Warnings, Infos int
}

// Summary counts the run's findings by severity.
func (r *Result) Summary() Summary {
	s := Summary{Files: len(r.Files)}
	for _, f := range r.Findings {
		switch f.Severity {
		case finding.SeverityError:
			s.Errors++
		case finding.SeverityWarning:
			s.Warnings++
		case finding.SeverityInfo:
			s.Infos++
		}
	}
	return s
}

// Run lints the files (already collected) with a bounded pool of workers.
// A file that cannot be read or parsed yields findings, never an error; an
// error means gpulint itself could not work.
func (l *Linter) Run(ctx context.Context, files []string) (*Result, error) {
	if len(files) > 1 {
		l.deps.Engine.CompileAll()
	}
	results := make([]FileResult, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	var deadline time.Time
	if l.opts.RunTimeout > 0 {
		deadline = time.Now().Add(l.opts.RunTimeout)
	}
	// Each worker takes the next file by counting: no goroutine hands
	// them out, so a worker that finishes a file never waits for one to
	// be scheduled (a tenth of the workers' time in a two-worker run
	// when a channel fed them; block profile of BenchmarkRun). A worker
	// yields between files instead: with as many workers as CPUs, the
	// collector's background worker otherwise runs only when the
	// scheduler preempts one, and a mark phase that drags on makes every
	// allocation in it dearer (docs/performance.md).
	var next atomic.Int64
	for w := 0; w < min(l.opts.Workers, max(len(files), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				if !deadline.IsZero() && time.Now().After(deadline) {
					results[i] = l.limitResult(files[i], finding.Pos{Line: 1, Col: 1},
						fmt.Sprintf("not checked: the run reached its time limit of %s", l.opts.RunTimeout))
					continue
				}
				results[i], errs[i] = l.lintPath(ctx, files[i])
				if len(results[i].Findings) == 0 {
					results[i].Data = nil
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l.rereadRelated(results)
	res := &Result{Files: results}
	for _, fr := range results {
		res.Findings = append(res.Findings, fr.Findings...)
	}
	res.Findings = append(res.Findings, l.unusedIgnores(results)...)
	res.Findings = finding.Sort(res.Findings)
	finding.SplitLong(res.Findings)
	return res, nil
}

// rereadRelated reads again the files of the run that findings elsewhere
// point to (a launcher, a DeepSpeed config) and that dropped their bytes
// for having no findings of their own. A file that cannot be read now
// keeps none: reports then give its columns in bytes.
func (l *Linter) rereadRelated(results []FileResult) {
	need := map[string]bool{}
	for _, fr := range results {
		for _, f := range fr.Findings {
			for _, r := range f.Related {
				need[r.Range.File] = true
			}
		}
	}
	if len(need) == 0 {
		return
	}
	for i := range results {
		if fr := &results[i]; fr.Data == nil && need[fr.Path] {
			lim, _ := l.limits(l.project(fr.Path))
			fr.Data, _ = readLimited(fr.Path, lim.MaxBytes)
		}
	}
}

// lintPath reads one file within the size limit and lints it.
func (l *Linter) lintPath(ctx context.Context, path string) (FileResult, error) {
	lim, _ := l.limits(l.project(path))
	data, err := readLimited(path, lim.MaxBytes)
	if err != nil {
		var perr *source.Error
		if errors.As(err, &perr) {
			return l.limitResult(path, perr.Pos, perr.Msg), nil
		}
		return FileResult{Path: path, Kind: source.KindUnknown, Findings: []finding.Finding{l.parseFinding(&source.Error{
			File: path, Pos: finding.Pos{Line: 1, Col: 1}, Msg: err.Error(),
		})}}, nil
	}
	if l.opts.Cache == nil {
		return l.LintBytes(ctx, path, data)
	}
	key := l.opts.Cache.key(path, data, l.project(path))
	if e, ok := l.opts.Cache.get(key, data); ok && l.stillValid(e.Related) && bytes.Equal(e.Launcher, l.launcherSum(path, e.Kind)) {
		fr := FileResult{Path: path, Kind: e.Kind, Data: data, Findings: make([]finding.Finding, len(e.Findings)), cached: true, ignored: e.Ignored, Sizing: e.Sizing}
		for i, f := range e.Findings {
			fr.Findings[i] = f.Finding
		}
		return fr, nil
	}
	fr, err := l.LintBytes(ctx, path, data)
	if err == nil && !fr.incomplete {
		fr.related = l.withProjects(path, fr.related)
		l.opts.Cache.put(key, data, fr, l.launcherSum(path, fr.Kind))
	}
	return fr, err
}

// launcherSum names the Accelerate config that launches a DeepSpeed file
// (nil when none does): a cached DeepSpeed result holds only while the
// same launcher applies, since one may appear, change or go away beside
// an unchanged file. Other kinds never consult a launcher, so a warm run
// does not scan their directories.
func (l *Linter) launcherSum(path string, kind source.Kind) []byte {
	if kind != source.KindDeepSpeed {
		return nil
	}
	la := l.launcherFor(path)
	if la == nil {
		return nil
	}
	d := la.digest()
	return d.Sum[:]
}

// readLimited reads a file, refusing one over max bytes without reading it
// whole.
func readLimited(path string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if maxBytes > 0 && st.Size() > maxBytes {
		return nil, &source.Error{File: path, Pos: finding.Pos{Line: 1, Col: 1},
			Msg: fmt.Sprintf("file is %d bytes, over the %d-byte limit; not checked", st.Size(), maxBytes)}
	}
	r := io.Reader(f)
	if maxBytes > 0 {
		r = io.LimitReader(f, maxBytes+1)
	}
	// Sized from the stat so a regular file is read into one buffer, one
	// byte over to see the end; a file that grows meanwhile (or reports no
	// size) grows the buffer.
	size := st.Size() + 1
	if size <= 1 || (maxBytes > 0 && size > maxBytes+1) {
		size = 512
	}
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, &source.Error{File: path, Pos: finding.Pos{Line: 1, Col: 1},
			Msg: fmt.Sprintf("file is over the %d-byte limit; not checked", maxBytes)}
	}
	return data, nil
}

// limitResult is the result of a file not checked because of a limit.
func (l *Linter) limitResult(path string, pos finding.Pos, msg string) FileResult {
	r, _ := l.deps.Catalog.Lookup("limit-exceeded")
	end := pos
	end.Col++
	end.Offset++
	f := l.stamp(r, finding.Finding{Message: msg, Range: finding.Range{File: path, Start: pos, End: end}}, "")
	return FileResult{Path: path, Kind: source.KindUnknown, Findings: []finding.Finding{f}, incomplete: true}
}

// parseFinding turns a positioned input error into a parse-error finding,
// or a limit-exceeded one when the reader stopped at a limit.
func (l *Linter) parseFinding(e *source.Error) finding.Finding {
	slug := "parse-error"
	if e.Limit {
		slug = "limit-exceeded"
	}
	r, _ := l.deps.Catalog.Lookup(slug)
	end := e.Pos
	end.Col++
	end.Offset++
	return l.stamp(r, finding.Finding{
		Message: e.Msg,
		Range:   finding.Range{File: e.File, Start: e.Pos, End: end},
	}, "")
}

// stamp fills a finding's rule fields from the catalog and applies a level
// the rule is allowed to choose.
func (l *Linter) stamp(r *rules.Rule, f finding.Finding, level string) finding.Finding {
	if r == nil {
		return f
	}
	f.Rule, f.Slug, f.Severity, f.DocURL = r.ID, r.Slug, r.Severity, r.DocURL()
	if level != "" {
		if lv, err := finding.ParseSeverity(level); err == nil {
			for _, allowed := range r.Levels {
				if allowed == lv {
					f.Severity = lv
				}
			}
		}
	}
	return f
}
