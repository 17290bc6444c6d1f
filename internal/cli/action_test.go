package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/github"
	"github.com/gpulint/gpulint/internal/github/githubtest"
	"github.com/gpulint/gpulint/internal/iostreams"
)

const (
	headSHA   = "0123456789abcdef0123456789abcdef01234567"
	brokenDS  = "{\"train_batch_size\": }\n"
	prEvent   = `{"action":"synchronize","number":1,"pull_request":{"number":1,"head":{"sha":"` + headSHA + `"}},"repository":{"name":"r","full_name":"o/r","owner":{"login":"o"}}}`
	pushEvent = `{"ref":"refs/heads/main","repository":{"name":"r","full_name":"o/r","owner":{"login":"o"}}}`
)

// actionRun is one simulated Actions step: a workspace, the runner's
// files and the variables it sets.
type actionRun struct {
	ws, output, summary, event string
	vars                       map[string]string
}

// newActionRun prepares a workspace with files and a runner environment
// for event (a payload or "" for none) against the API at apiURL.
func newActionRun(t *testing.T, apiURL, event string, files map[string]string) *actionRun {
	t.Helper()
	dir := t.TempDir()
	a := &actionRun{
		ws:      filepath.Join(dir, "ws"),
		output:  filepath.Join(dir, "output"),
		summary: filepath.Join(dir, "summary.md"),
		event:   filepath.Join(dir, "event.json"),
	}
	if err := os.MkdirAll(a.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, a.ws, name, content)
	}
	if _, ok := files[".gpulint.yaml"]; !ok {
		write(t, a.ws, ".gpulint.yaml", statedProject)
	}
	for _, p := range []string{a.output, a.summary} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name := "push"
	if strings.Contains(event, `"pull_request"`) {
		name = "pull_request"
	}
	if event != "" {
		if err := os.WriteFile(a.event, []byte(event), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a.vars = map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": a.ws, "GITHUB_OUTPUT": a.output,
		"GITHUB_STEP_SUMMARY": a.summary, "GITHUB_EVENT_PATH": a.event, "GITHUB_EVENT_NAME": name,
		"GITHUB_API_URL": apiURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
		"GITHUB_SHA":         "fedcba9876543210fedcba9876543210fedcba98",
		"INPUT_GITHUB-TOKEN": githubtest.DefaultToken, "INPUT_GPU": "A100-80GB",
		"GPULINT_CACHE_DIR": filepath.Join(dir, "cache"),
	}
	return a
}

// run runs `gpulint action` with the inputs (name → value, "-" unsets).
func (a *actionRun) run(t *testing.T, inputs map[string]string) (stdout, stderr string, code int) {
	t.Helper()
	vars := map[string]string{}
	for k, v := range a.vars {
		vars[k] = v
	}
	for k, v := range inputs {
		key := "INPUT_" + strings.ToUpper(k)
		if v == "-" {
			delete(vars, key)
			continue
		}
		vars[key] = v
	}
	ios, _, out, errOut := iostreams.Test()
	code = cli.Run([]string{"action"}, ios, cli.Env{Getenv: func(k string) string { return vars[k] }}, assets)
	return out.String(), errOut.String(), code
}

func (a *actionRun) read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// outputs parses GITHUB_OUTPUT as the runner does: name=value lines and
// name<<DELIM blocks.
func (a *actionRun) outputs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(a.read(t, a.output)))
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			if _, dup := out[name]; dup {
				t.Errorf("output %s set twice", name)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(line, "="); ok {
			out[name] = val
		} else if line != "" {
			t.Errorf("GITHUB_OUTPUT line %q is neither name=value nor name<<delimiter", line)
		}
	}
	return out
}

// added returns a file entry of a pull request that adds content.
func added(name, content string) githubtest.File {
	lines := strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return githubtest.File{Filename: name, Status: "added", Patch: strings.TrimSuffix(b.String(), "\n")}
}

// annotations returns the workflow commands in stdout by command name,
// failing on any line that is not a command gpulint writes.
func annotations(t *testing.T, stdout string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		rest, ok := strings.CutPrefix(line, "::")
		if !ok {
			t.Errorf("stdout line is not a workflow command: %q", line)
			continue
		}
		cmdAndProps, _, ok := strings.Cut(rest, "::")
		if !ok {
			t.Errorf("workflow command without message separator: %q", line)
			continue
		}
		name, _, _ := strings.Cut(cmdAndProps, " ")
		switch name {
		case "add-mask", "error", "warning", "notice":
			got[name] = append(got[name], line)
		default:
			t.Errorf("unexpected workflow command %q in %q", name, line)
		}
	}
	return got
}

func commentBodies(f *githubtest.Fake) []string {
	var out []string
	for _, c := range f.Comments() {
		out = append(out, c.Body)
	}
	return out
}

// TestActionStickyComment runs the action three times on one pull
// request: the first run creates the comment, the second leaves the one
// comment in place, and after the configs are fixed the third turns it
// into the all-clear.
func TestActionStickyComment(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 1, headSHA,
		added("configs/ds.json", fp32DS), added("configs/broken.json", brokenDS)))
	a := newActionRun(t, srv.URL, prEvent, map[string]string{"configs/ds.json": fp32DS, "configs/broken.json": brokenDS})

	steps := []struct {
		name       string
		fix        bool
		wantCode   int
		wantInBody []string
	}{
		{"first run creates the comment", false, 1, []string{github.Marker, "configs/broken.json:1", "configs/ds.json:3", "/o/r/blob/" + headSHA + "/configs/ds.json#L3"}},
		{"second run keeps the one comment", false, 1, []string{"1 error, 1 warning and 0 infos"}},
		{"fixed configs turn it into the all-clear", true, 0, []string{github.Marker, "No findings — all clear (2 files checked)."}},
	}
	for _, st := range steps {
		if st.fix {
			write(t, a.ws, "configs/ds.json", cleanDS)
			write(t, a.ws, "configs/broken.json", cleanDS)
		}
		_, stderr, code := a.run(t, nil)
		if code != st.wantCode {
			t.Fatalf("%s: exit %d, want %d; stderr:\n%s", st.name, code, st.wantCode, stderr)
		}
		bodies := commentBodies(srv.Fake)
		if len(bodies) != 1 {
			t.Fatalf("%s: %d comments, want 1", st.name, len(bodies))
		}
		for _, w := range st.wantInBody {
			if !strings.Contains(bodies[0], w) {
				t.Errorf("%s: comment lacks %q:\n%s", st.name, w, bodies[0])
			}
		}
	}
	var creates, edits int
	for _, r := range srv.Requests() {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/issues/1/comments"):
			creates++
		case r.Method == "PATCH":
			edits++
		}
	}
	if creates != 1 || edits != 1 {
		t.Errorf("%d comment creations and %d edits, want 1 and 1 (the second run changes nothing)", creates, edits)
	}
	if n := len(srv.ReviewComments()); n != 1 {
		t.Errorf("%d review comments after three runs, want the one suggestion posted once", n)
	}
}

// TestActionChangedFilesPaged lists 250 changed files over three pages
// and lints only those that are configs present in the workspace.
func TestActionChangedFilesPaged(t *testing.T) {
	ws := map[string]string{
		"cfg/untouched.json":       fp32DS, // not in the pull request
		"cfg/renamed.json":         cleanDS,
		"docs/README.md":           "# not a config\n",
		".github/workflows/ci.yml": "on: push\n",
	}
	var files []githubtest.File
	for i := range 240 {
		name := fmt.Sprintf("cfg/f%03d.json", i)
		content := cleanDS
		if i == 7 {
			content = fp32DS
		}
		ws[name] = content
		files = append(files, added(name, content))
	}
	for i := range 5 {
		files = append(files, githubtest.File{Filename: fmt.Sprintf("gone/g%d.json", i), Status: "removed"})
	}
	files = append(files,
		githubtest.File{Filename: "cfg/renamed.json", Status: "renamed", PreviousFilename: "old/x.json"},
		githubtest.File{Filename: "docs/README.md", Status: "modified"},
		githubtest.File{Filename: ".github/workflows/ci.yml", Status: "modified"},
		githubtest.File{Filename: "missing/a.json", Status: "modified"},
		githubtest.File{Filename: "../outside.json", Status: "added"},
	)
	if len(files) != 250 {
		t.Fatalf("%d files, want 250", len(files))
	}
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 1, headSHA, files...))
	a := newActionRun(t, srv.URL, prEvent, ws)
	_, stderr, code := a.run(t, nil)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "gpulint: 241 files checked: 0 errors, 1 warning, 0 infos") {
		t.Errorf("stderr does not report 241 files (240 added, 1 renamed):\n%s", stderr)
	}
	var pages []string
	for _, r := range srv.Requests() {
		if r.Path == "/repos/o/r/pulls/1/files" {
			pages = append(pages, r.Query)
		}
	}
	if diff := cmp.Diff([]string{"per_page=100", "page=2&per_page=100", "page=3&per_page=100"}, pages); diff != "" {
		t.Errorf("file listing requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"findings": "1", "errors": "0", "warnings": "1", "sarif-file": ""}, a.outputs(t)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if body := commentBodies(srv.Fake); len(body) != 1 || !strings.Contains(body[0], "cfg/f007.json:3") || strings.Contains(body[0], "untouched") {
		t.Errorf("comment should name cfg/f007.json only:\n%s", body)
	}
}

// TestActionReadOnlyToken: a fork's read-only token costs the comment and
// the suggestions, with one log line; the exit code follows the findings.
func TestActionReadOnlyToken(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantCode int
	}{
		{"an error fails the step", map[string]string{"configs/ds.json": fp32DS, "configs/broken.json": brokenDS}, 1},
		{"a warning below fail-on passes", map[string]string{"configs/ds.json": fp32DS}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pf []githubtest.File
			for name, content := range tc.files {
				pf = append(pf, added(name, content))
			}
			srv := githubtest.NewServer(t, githubtest.WithReadOnlyToken(), githubtest.WithPullRequest("o", "r", 1, headSHA, pf...))
			a := newActionRun(t, srv.URL, prEvent, tc.files)
			stdout, stderr, code := a.run(t, nil)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if n := strings.Count(stderr, "cannot comment on this pull request: the token is read-only"); n != 1 {
				t.Errorf("the read-only note appears %d times, want once:\n%s", n, stderr)
			}
			if strings.Contains(stderr, "internal error") || strings.Contains(stderr, "403") {
				t.Errorf("stderr shows the refusal as a failure:\n%s", stderr)
			}
			if got := annotations(t, stdout)["warning"]; len(got) != 1 {
				t.Errorf("want the warning annotated, got %q", got)
			}
			if s := a.read(t, a.summary); !strings.Contains(s, "fp32-where-bf16") || !strings.Contains(s, "read-only") {
				t.Errorf("summary lacks the findings or the read-only note:\n%s", s)
			}
			if st := srv.State(); len(st.Comments)+len(st.Reviews) != 0 {
				t.Errorf("the fake holds %d comments and %d reviews", len(st.Comments), len(st.Reviews))
			}
		})
	}
}

// TestActionSuggestions: a fix becomes a suggestion only where the pull
// request changed the lines it replaces.
func TestActionSuggestions(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 1, headSHA,
		added("configs/new.json", fp32DS),
		// Only line 1 changed; the finding and its fix are on line 3.
		githubtest.File{Filename: "configs/old.json", Status: "modified", Patch: "@@ -1,1 +1,1 @@\n-{ \n+{"},
	))
	a := newActionRun(t, srv.URL, prEvent, map[string]string{"configs/new.json": fp32DS, "configs/old.json": fp32DS})
	if _, stderr, code := a.run(t, nil); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	type placed struct {
		Path            string
		StartLine, Line int
		Suggested       string
	}
	var got []placed
	for _, rc := range srv.ReviewComments() {
		_, s, _ := strings.Cut(rc.Body, "```suggestion\n")
		s, _, _ = strings.Cut(s, "```")
		got = append(got, placed{rc.Path, rc.StartLine, rc.Line, s})
	}
	want := []placed{{"configs/new.json", 0, 3, "  \"fp16\": {\"enabled\": false},\n  \"bf16\": {\n    \"enabled\": true\n  }\n"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("review comments (-want +got):\n%s", diff)
	}
	if rv := srv.Reviews(); len(rv) != 1 || rv[0].CommitID != headSHA {
		t.Errorf("reviews %+v, want one on the head commit", rv)
	}
}
