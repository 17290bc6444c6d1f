package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulint/gpulint/internal/baseline"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/github"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/report"
)

// annotationCap is how many annotations of each level GitHub keeps per
// step; it counts the rest without showing them (actions/runner,
// src/Runner.Worker/ExecutionContext.cs, _maxIssueCount = 10).
const annotationCap = 10

// maxSummaryLen bounds the job summary: the runner refuses a step summary
// over 1 MiB ("$GITHUB_STEP_SUMMARY upload aborted, supports content up
// to a size of 1024k", docs.github.com/actions/using-workflows/
// workflow-commands-for-github-actions#adding-a-job-summary). Room is
// left for the closing notes.
const maxSummaryLen = 1<<20 - 4<<10

func runAction(ctx context.Context, o *ActionOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, &actionTimeoutError{o.Timeout})
		defer cancel()
	}
	var sarifPath string
	if o.SARIFFile != "" {
		p, err := o.workspacePath("sarif-file", o.SARIFFile)
		if err != nil {
			return err
		}
		sarifPath = p
	}
	pr, err := readPullRequest(o.EventPath, o.Repo)
	if err != nil {
		return err
	}
	var client *github.Client
	if o.needsToken(pr) {
		if o.Token == "" {
			return &usageError{errors.New("input github-token is empty; on a pull request it is needed to list the changed files and to comment (set comment, suggestions and only-changed to false to run without it)")}
		}
		client, err = github.NewClient(nil, o.Token, o.APIURL, github.WithRetryNotify(func(e github.RetryEvent) { o.logf("%s", e) }))
		if err != nil {
			return &usageError{err}
		}
	}
	if pr == nil {
		o.logf("not a pull request event (%s): linting %s; no comment", valueOr(o.EventName, "none"), strings.Join(o.Paths, " "))
	}

	var changed []github.ChangedFile
	if client != nil && (o.OnlyChanged || o.Suggestions) {
		if changed, err = client.ChangedFiles(ctx, pr.Owner, pr.Repo, pr.Number); err != nil {
			return apiError(timedOut(ctx, "listing the pull request's files", err), pr)
		}
	}
	files, unreadable, err := o.selectFiles(pr != nil && o.OnlyChanged, changed)
	if err != nil {
		return err
	}
	target, err := o.resolveTarget()
	if err != nil {
		return err
	}
	var base *baseline.Baseline
	if o.Baseline != "" {
		p, err := o.readablePath("baseline", o.Baseline)
		if err != nil {
			return err
		}
		if base, err = readBaseline(p); err != nil {
			return err
		}
	}
	res := &lint.Result{}
	var docs map[string]report.RuleDoc
	if len(files) > 0 || len(unreadable) > 0 {
		l, collected, _, err := prepareRun(o.Factory, files, target, 0)
		if err != nil {
			return err
		}
		docs = ruleDocs(l.Rules())
		// The lint is bounded by its own limits (run-timeout in the
		// project file), not cut off by the deadline, so that the report
		// is still written.
		if res, err = l.Run(context.WithoutCancel(ctx), collected.Files); err != nil {
			return err
		}
		l.AddUnreadable(res, unreadable)
	}
	baselined := 0
	res.Findings, baselined = base.Filter(res.Findings)
	if baselined > 0 {
		o.logf("%d %s in the baseline %s not reported", baselined, plural(baselined, "finding", "findings"), o.Baseline)
	}
	relativize(res, o.Workspace)
	in := reportInput(res)
	in.Summary.Baselined = baselined
	in.ToolVersion = ToolVersion()
	in.Rules = docs
	in.Category = "action"

	omitted, err := annotate(o.Factory.IO.Out, in.Findings)
	if err != nil {
		return fmt.Errorf("write annotations: %w", err)
	}
	if sarifPath != "" {
		if err := o.writeSARIF(sarifPath, in); err != nil {
			return err
		}
	}

	repo, sha := o.Repo, o.SHA
	if pr != nil {
		repo, sha = pr.Owner+"/"+pr.Repo, pr.HeadSHA
	}
	var feedbackErr error
	readOnly := false
	if ctx.Err() != nil {
		feedbackErr = timedOut(ctx, "linting; no comment or suggestions posted", ctx.Err())
	} else if client != nil {
		readOnly, feedbackErr = o.feedback(ctx, client, pr, in, changed, github.CommentOptions{Repo: repo, SHA: sha, ServerURL: o.ServerURL})
	}
	if readOnly {
		o.logf("%s", readOnlyNote)
	}

	summary := report.MarkdownBody(in, report.MarkdownOptions{Repo: repo, SHA: sha, ServerURL: o.ServerURL, MaxLen: maxSummaryLen})
	summary += omittedNote(omitted)
	if readOnly {
		summary += "\n_gpulint could not comment on this pull request: its token is read-only, as for pull requests from forks._\n"
	}
	if o.Factory.Env.get("GITHUB_STEP_SUMMARY") != "" {
		if err := guard("write the job summary", func() { o.gha.AddStepSummary(summary) }); err != nil {
			return err
		}
	}
	if err := o.setOutputs(in); err != nil {
		return err
	}
	s := in.Summary
	o.logf("%d %s checked: %s, %s, %s", s.Files, plural(s.Files, "file", "files"),
		count(s.Errors, "error"), count(s.Warnings, "warning"), count(s.Infos, "info"))
	if feedbackErr != nil {
		return apiError(timedOut(ctx, "posting the comment and suggestions", feedbackErr), pr)
	}
	failOn, _ := finding.ParseSeverity(o.FailOn)
	if failOn != finding.SeverityNone && finding.Worst(in.Findings) >= failOn {
		return findingsError{}
	}
	return nil
}

// actionTimeoutError is the cause of the run's context ending at its
// deadline.
type actionTimeoutError struct{ d time.Duration }

func (e *actionTimeoutError) Error() string {
	return fmt.Sprintf("the action passed its time limit of %s (input timeout)", e.d)
}

// timedOut names what was cut off when err came from the run's deadline.
func timedOut(ctx context.Context, what string, err error) error {
	var te *actionTimeoutError
	if errors.As(err, &te) {
		return err // named already
	}
	if cause := context.Cause(ctx); errors.As(cause, &te) {
		return fmt.Errorf("%w while %s: %w", te, what, err)
	}
	return err
}

func valueOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func count(n int, what string) string {
	return fmt.Sprintf("%d %s", n, plural(n, what, what+"s"))
}

// feedback keeps the pull request comment and posts the suggestions. It
// reports a read-only token instead of failing on it.
func (o *ActionOptions) feedback(ctx context.Context, c *github.Client, pr *pullRequest, in report.Input, changed []github.ChangedFile, co github.CommentOptions) (readOnly bool, err error) {
	if o.Comment {
		res, err := c.UpsertComment(ctx, pr.Owner, pr.Repo, pr.Number, github.CommentBody(in, co))
		if errors.Is(err, github.ErrReadOnlyToken) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		o.logf("comment %s: %s", res.Action, res.URL)
	}
	if o.Suggestions {
		sugs := github.Suggestions(in, github.ChangedLines(changed))
		posted, skipped, err := c.PostSuggestions(ctx, pr.Owner, pr.Repo, pr.Number, pr.HeadSHA, sugs)
		if errors.Is(err, github.ErrReadOnlyToken) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if posted+skipped > 0 {
			o.logf("suggestions: %d posted, %d already there or refused", posted, skipped)
		}
	}
	return false, nil
}

// selectFiles returns the absolute paths to lint: what the paths input
// names (directories walked as lint does), narrowed to the pull request's
// changed files when onlyChanged. Files whose real location lies outside
// the workspace (a symlink a pull request may add) are skipped.
func (o *ActionOptions) selectFiles(onlyChanged bool, changed []github.ChangedFile) ([]string, []*fs.PathError, error) {
	roots := make([]string, len(o.Paths))
	for i, p := range o.Paths {
		abs, err := o.workspacePath("paths", p)
		if err != nil {
			return nil, nil, err
		}
		// A directory is walked, so its real location must be inside;
		// a file that leads out is skipped below, as a changed file is.
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			if abs, err = o.readablePath("paths", p); err != nil {
				return nil, nil, err
			}
		}
		roots[i] = abs
	}
	c, err := lint.CollectAll(roots, lint.CollectOptions{})
	if err != nil {
		return nil, nil, &usageError{fmt.Errorf("input paths: %w", err)}
	}
	all := c.Files
	if onlyChanged {
		want := map[string]bool{}
		for _, f := range changed {
			if f.Status != "removed" && filepath.IsLocal(filepath.FromSlash(f.Path)) {
				want[filepath.Join(o.Workspace, filepath.FromSlash(f.Path))] = true
			}
		}
		kept := all[:0]
		for _, p := range all {
			if want[p] {
				kept = append(kept, p)
			}
		}
		all = kept
	}
	realWS, err := filepath.EvalSymlinks(o.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	var out []string
	for _, p := range all {
		if err := insideAsFile(realWS, p); err != nil {
			o.logf("skipped %s: %v", o.rel(p), err)
			continue
		}
		out = append(out, p)
	}
	return out, c.Unreadable, nil
}

// insideAsFile checks that p, with every symlink resolved, is a regular
// file inside the directory realRoot (itself resolved).
func insideAsFile(realRoot, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(rel) {
		return errors.New("it leads outside the workspace")
	}
	st, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return nil
}

// rel returns p relative to the workspace with forward slashes, or p
// itself when it lies outside.
func (o *ActionOptions) rel(p string) string { return relTo(o.Workspace, p) }

func relTo(root, p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	r, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(r) {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// relativize rewrites a result's paths relative to the workspace, as
// annotations, suggestions, links and SARIF need them.
func relativize(res *lint.Result, root string) {
	prefix := root + string(filepath.Separator)
	for i := range res.Files {
		fr := &res.Files[i]
		fr.Path = relTo(root, fr.Path)
		if fr.Sizing != nil && len(fr.Sizing.Related) > 0 {
			z := *fr.Sizing
			z.Related = slices.Clone(z.Related)
			for j := range z.Related {
				z.Related[j].File = relTo(root, z.Related[j].File)
			}
			fr.Sizing = &z
		}
	}
	for i := range res.Findings {
		f := &res.Findings[i]
		f.Range.File = relTo(root, f.Range.File)
		f.Message = strings.ReplaceAll(f.Message, prefix, "")
		for j := range f.Related {
			f.Related[j].Range.File = relTo(root, f.Related[j].Range.File)
		}
		for j, e := range f.Evidence {
			if e.Range != nil {
				r := *e.Range // a range may be shared by several findings
				r.File = relTo(root, r.File)
				f.Evidence[j].Range = &r
			}
		}
		for j := range f.Fixes {
			for k := range f.Fixes[j].Edits {
				f.Fixes[j].Edits[k].File = relTo(root, f.Fixes[j].Edits[k].File)
			}
		}
	}
}

// annotate writes the annotations, most severe first and at most
// annotationCap per level, and returns how many it left out per level.
func annotate(w io.Writer, fs []finding.Finding) (map[finding.Severity]int, error) {
	omitted := map[finding.Severity]int{}
	var shown []finding.Finding
	for _, sev := range []finding.Severity{finding.SeverityError, finding.SeverityWarning, finding.SeverityInfo} {
		n := 0
		for _, f := range fs {
			if f.Severity != sev {
				continue
			}
			if n == annotationCap {
				omitted[sev]++
				continue
			}
			shown = append(shown, f)
			n++
		}
	}
	return omitted, report.GitHub(w, report.Input{Findings: shown}, report.Options{})
}

// omittedNote tells the summary's reader which findings have no
// annotation.
func omittedNote(omitted map[finding.Severity]int) string {
	var parts []string
	for _, l := range []struct {
		sev  finding.Severity
		name string
	}{{finding.SeverityError, "error"}, {finding.SeverityWarning, "warning"}, {finding.SeverityInfo, "notice"}} {
		if n := omitted[l.sev]; n > 0 {
			parts = append(parts, count(n, l.name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\n_GitHub shows %d annotations of each level per step; %s more are listed above only._\n", annotationCap, strings.Join(parts, ", "))
}

// writeSARIF writes the SARIF log to path (inside the workspace, from
// workspacePath), creating its directory and replacing, never following,
// a symlink there.
func (o *ActionOptions) writeSARIF(path string, in report.Input) error {
	var buf bytes.Buffer
	if err := report.SARIF(&buf, in, report.Options{}); err != nil {
		return fmt.Errorf("render SARIF: %w", err)
	}
	if err := o.writeInWorkspace("sarif-file", path, buf.Bytes()); err != nil {
		return fmt.Errorf("write SARIF: %w", err)
	}
	return nil
}

// resolveTarget resolves the target inputs that name files: config, and
// model when it names a directory in the workspace rather than a catalog
// id. Neither may lead outside the workspace.
func (o *ActionOptions) resolveTarget() (TargetFlags, error) {
	target := o.Target
	if target.Config != "" {
		p, err := o.readablePath("config", target.Config)
		if err != nil {
			return target, err
		}
		target.Config = p
	}
	if target.Model != "" {
		// A catalog id never leaves the workspace when read as a path;
		// anything that does is no model gpulint may read.
		p, err := o.workspacePath("model", target.Model)
		if err != nil {
			return target, err
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if p, err = o.readablePath("model", target.Model); err != nil {
				return target, err
			}
			target.Model = p
		}
	}
	return target, nil
}

// setOutputs writes the step outputs when the runner provides the file.
// Values never hold a line break, so none can end the file command's
// delimited block early.
func (o *ActionOptions) setOutputs(in report.Input) error {
	if o.Factory.Env.get("GITHUB_OUTPUT") == "" {
		return nil
	}
	s := in.Summary
	outs := [][2]string{
		{"findings", strconv.Itoa(len(in.Findings))},
		{"errors", strconv.Itoa(s.Errors)},
		{"warnings", strconv.Itoa(s.Warnings)},
		{"sarif-file", ""},
	}
	if o.SARIFFile != "" {
		outs[3][1] = filepath.ToSlash(filepath.Clean(o.SARIFFile))
	}
	for _, kv := range outs {
		v := strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, kv[1])
		if err := guard("set output "+kv[0], func() { o.gha.SetOutput(kv[0], v) }); err != nil {
			return err
		}
	}
	return nil
}
