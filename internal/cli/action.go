package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/github"
)

// ActionOptions are `gpulint action`'s inputs, read from the INPUT_*
// variables action.yml sets, and what it reads from the runner's
// environment.
type ActionOptions struct {
	Factory *Factory

	// Inputs, named as in action.yml.
	Token       string   // github-token
	Paths       []string // paths, relative to the workspace
	Target      TargetFlags
	FailOn      string // fail-on
	Comment     bool   // comment
	Suggestions bool   // suggestions
	OnlyChanged bool   // only-changed
	SARIFFile   string // sarif-file, relative to the workspace
	Baseline    string // baseline, relative to the workspace
	// Timeout bounds the whole run (timeout; default DefaultActionTimeout).
	Timeout time.Duration

	// From the runner.
	Workspace string // GITHUB_WORKSPACE, absolute
	APIURL    string // GITHUB_API_URL
	ServerURL string // GITHUB_SERVER_URL
	Repo      string // GITHUB_REPOSITORY, owner/name
	SHA       string // GITHUB_SHA
	EventName string // GITHUB_EVENT_NAME
	EventPath string // GITHUB_EVENT_PATH

	gha *githubactions.Action
}

// NewCmdAction builds `gpulint action`, the command action.yml runs. runF
// replaces the work in tests of input parsing.
func NewCmdAction(f *Factory, runF func(*ActionOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action: annotations, job summary, one pull request comment, suggested fixes",
		Long: `Run inside GitHub Actions (action.yml calls it). Inputs come from INPUT_*
variables, the pull request from GITHUB_EVENT_PATH, the API from
GITHUB_API_URL. On a pull request it lints the changed files (only-changed),
keeps one comment with the report, and posts fixes as review suggestions on
the changed lines. Everywhere it writes annotations, the job summary, the
outputs findings, errors, warnings and sarif-file, and the SARIF log when
sarif-file is set.

Exit codes as lint: findings at or above fail-on exit 1. A read-only token
(pull requests from forks) skips the comment with one log line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := newActionOptions(f)
			if err != nil {
				return oneLineErr(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return oneLineErr(runAction(cmd.Context(), opts))
		},
	}
}

// oneLineError shows an error on one line, so that a file name with a
// line break in it cannot start a workflow command when the error is
// printed; errors.Is and errors.As see the original.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

func oneLineErr(err error) error {
	if err == nil {
		return nil
	}
	return oneLineError{err}
}

// oneLine replaces line breaks with spaces.
func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }

// guard runs a go-githubactions call, which panics when it cannot write
// its stream or file, and returns that failure as an error.
func guard(op string, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", op, r)
		}
	}()
	fn()
	return nil
}

// newActionOptions reads the inputs. The token is masked before anything
// else is written, so that the runner hides it in every later log line.
func newActionOptions(f *Factory) (*ActionOptions, error) {
	gha := githubactions.New(githubactions.WithGetenv(f.Env.get), githubactions.WithWriter(f.IO.Out))
	o := &ActionOptions{Factory: f, gha: gha, Token: gha.GetInput("github-token")}
	if o.Token != "" {
		if err := guard("mask the token", func() { gha.AddMask(o.Token) }); err != nil {
			return nil, err
		}
	}
	o.Paths = splitPaths(gha.GetInput("paths"))
	o.Target = TargetFlags{GPU: gha.GetInput("gpu"), Model: gha.GetInput("model"), Config: gha.GetInput("config")}
	o.FailOn = cmp.Or(gha.GetInput("fail-on"), "error")
	o.SARIFFile = gha.GetInput("sarif-file")
	o.Baseline = gha.GetInput("baseline")
	var errs []error
	o.Timeout = DefaultActionTimeout
	if s := gha.GetInput("timeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("input timeout: %q is not a positive duration (such as 10m or 90s)", s))
		}
		o.Timeout = d
	}
	if s := gha.GetInput("gpus"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("input gpus: %q is not a number of GPUs", s))
		}
		o.Target.GPUs = n
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"comment", &o.Comment}, {"suggestions", &o.Suggestions}, {"only-changed", &o.OnlyChanged}} {
		v, err := boolInput(gha.GetInput(b.name), true)
		if err != nil {
			errs = append(errs, fmt.Errorf("input %s: %w", b.name, err))
		}
		*b.dst = v
	}
	if _, err := finding.ParseSeverity(o.FailOn); err != nil {
		errs = append(errs, fmt.Errorf("input fail-on: %w", err))
	}
	if strings.ContainsAny(o.SARIFFile, "\r\n\x00") {
		errs = append(errs, errors.New("input sarif-file: a path cannot contain a line break"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, &usageError{err}
	}

	o.APIURL = gha.Getenv("GITHUB_API_URL")
	o.ServerURL = gha.Getenv("GITHUB_SERVER_URL")
	o.Repo = gha.Getenv("GITHUB_REPOSITORY")
	o.SHA = gha.Getenv("GITHUB_SHA")
	o.EventName = gha.Getenv("GITHUB_EVENT_NAME")
	o.EventPath = gha.Getenv("GITHUB_EVENT_PATH")
	ws := cmp.Or(gha.Getenv("GITHUB_WORKSPACE"), f.Env.Dir)
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	o.Workspace = abs
	return o, nil
}

// DefaultActionTimeout bounds a whole Action run when the timeout input is
// empty: far above a normal run (seconds), far below the job's own limit
// (6 hours), which would end the step with no report at all.
const DefaultActionTimeout = 10 * time.Minute

// splitPaths reads the paths input: paths separated by line breaks,
// spaces or commas; none means the whole workspace.
func splitPaths(s string) []string {
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(out) == 0 {
		return []string{"."}
	}
	return out
}

// boolInput reads a boolean input as the Actions toolkit's getBooleanInput
// does (the YAML 1.2 core schema: true, True, TRUE, false, False, FALSE;
// actions/toolkit packages/core/src/core.ts); "" is the default.
func boolInput(s string, def bool) (bool, error) {
	switch s {
	case "":
		return def, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return def, fmt.Errorf("%q is not a boolean (want true or false)", s)
}

// pullRequest is the part of a pull_request event gpulint needs.
type pullRequest struct {
	Owner, Repo string
	Number      int
	HeadSHA     string
}

// maxEventBytes bounds the event payload read from GITHUB_EVENT_PATH.
const maxEventBytes = 64 << 20

// readPullRequest returns the pull request of the event at path, or nil
// when the event is not about one (a push, a schedule, no event file).
// repo ("owner/name", GITHUB_REPOSITORY) names the repository when the
// payload does not.
func readPullRequest(path, repo string) (*pullRequest, error) {
	if path == "" {
		return nil, nil
	}
	// A named pipe or a device blocks or never ends when opened and read:
	// only a regular file is opened, and checked again once open.
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the event payload: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read the event payload: GITHUB_EVENT_PATH %s is not a regular file (%s)", path, st.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the event payload: %w", err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read the event payload: GITHUB_EVENT_PATH %s is not a regular file", path)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		Repository struct {
			Name  string `json:"name"`
			Owner struct {
				Login string `json:"login"`
			} `json:"owner"`
		} `json:"repository"`
	}
	if err := json.NewDecoder(io.LimitReader(fh, maxEventBytes)).Decode(&ev); err != nil {
		return nil, fmt.Errorf("read the event payload %s: %w", path, err)
	}
	if ev.PullRequest == nil || ev.PullRequest.Number <= 0 {
		return nil, nil
	}
	pr := &pullRequest{Owner: ev.Repository.Owner.Login, Repo: ev.Repository.Name, Number: ev.PullRequest.Number, HeadSHA: ev.PullRequest.Head.SHA}
	if pr.Owner == "" || pr.Repo == "" {
		pr.Owner, pr.Repo, _ = strings.Cut(repo, "/")
	}
	if pr.Owner == "" || pr.Repo == "" || pr.HeadSHA == "" {
		return nil, fmt.Errorf("the event payload %s names pull request #%d but not its repository or head commit", path, pr.Number)
	}
	return pr, nil
}

// logf writes one line to the log. Line breaks in the arguments become
// spaces and the line starts with "gpulint:", so text from files or the
// API can never form a workflow command of its own.
func (o *ActionOptions) logf(format string, args ...any) {
	fmt.Fprintf(o.Factory.IO.ErrOut, "gpulint: %s\n", oneLine(fmt.Sprintf(format, args...)))
}

// needsToken reports whether the run talks to the API.
func (o *ActionOptions) needsToken(pr *pullRequest) bool {
	return pr != nil && (o.Comment || o.Suggestions || o.OnlyChanged)
}

// apiError explains a failed API call in the reader's terms: a bad token
// or an invisible repository is a usage error (exit 2), anything else an
// internal one.
func apiError(err error, pr *pullRequest) error {
	switch {
	case errors.Is(err, github.ErrUnauthorized):
		return &usageError{fmt.Errorf("GitHub rejected the github-token (401 Bad credentials): check the github-token input: %w", err)}
	case errors.Is(err, github.ErrNotFound):
		return &usageError{fmt.Errorf("GitHub answered 404 for %s/%s#%d: the repository or pull request does not exist, or the token cannot see it: %w", pr.Owner, pr.Repo, pr.Number, err)}
	case errors.Is(err, github.ErrForbidden):
		return &usageError{fmt.Errorf("the token lacks a permission (the workflow needs contents: read and pull-requests: write): %w", err)}
	}
	return err
}

// readOnlyNote is the one line logged when the token may not write.
const readOnlyNote = "cannot comment on this pull request: the token is read-only (pull requests from forks get a read-only GITHUB_TOKEN); findings are in the annotations and the job summary"
