package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/github/githubtest"
	"github.com/gpulint/gpulint/internal/iostreams"
)

// TestActionAnnotationCap: GitHub shows ten annotations per level and
// step, so the action writes the ten most severe of each level, errors
// first, and counts the rest in the job summary.
func TestActionAnnotationCap(t *testing.T) {
	files := map[string]string{"info/.gpulint.yaml": "rules:\n  fp32-where-bf16: info\n"}
	for i := range 11 {
		files[fmt.Sprintf("err/e%02d.json", i)] = brokenDS
	}
	for i := range 12 {
		files[fmt.Sprintf("warn/w%02d.json", i)] = fp32DS
	}
	for i := range 3 {
		files[fmt.Sprintf("info/i%02d.json", i)] = fp32DS
	}
	a := newActionRun(t, "", pushEvent, files)
	stdout, stderr, code := a.run(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	got := annotations(t, stdout)
	counts := map[string]int{}
	for k, v := range got {
		counts[k] = len(v)
	}
	if diff := cmp.Diff(map[string]int{"add-mask": 1, "error": 10, "warning": 10, "notice": 3}, counts); diff != "" {
		t.Errorf("annotations per level (-want +got):\n%s", diff)
	}
	// Most severe first: no error after a warning, no warning after a notice.
	rank := map[string]int{"error": 0, "warning": 1, "notice": 2}
	last := 0
	for _, line := range strings.Split(stdout, "\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "::"), " ")
		if r, ok := rank[name]; ok {
			if r < last {
				t.Errorf("%s annotation after a less severe one: %q", name, line)
			}
			last = r
		}
	}
	if s := a.read(t, a.summary); !strings.Contains(s, "1 error, 2 warnings more are listed above only") {
		t.Errorf("summary does not count the annotations left out:\n%s", s)
	}
	if diff := cmp.Diff(map[string]string{"findings": "26", "errors": "11", "warnings": "12", "sarif-file": ""}, a.outputs(t)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

// TestActionPushAndSARIF: outside a pull request the action lints the
// paths, makes no API call, writes the SARIF log where sarif-file says
// (relative to the workspace) and sets the outputs.
func TestActionPushAndSARIF(t *testing.T) {
	srv := githubtest.NewServer(t)
	a := newActionRun(t, srv.URL, pushEvent, map[string]string{
		"configs/ds.json": fp32DS, "configs/broken.json": brokenDS, "other/ds.json": fp32DS,
	})
	stdout, stderr, code := a.run(t, map[string]string{"paths": "configs\n", "sarif-file": "reports/gpulint.sarif", "fail-on": "never"})
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d API requests on a push, want none", n)
	}
	if !strings.Contains(stderr, "not a pull request event (push)") {
		t.Errorf("stderr does not say why there is no comment:\n%s", stderr)
	}
	if a := annotations(t, stdout); len(a["error"]) != 1 || len(a["warning"]) != 1 || !strings.Contains(a["error"][0], "file=configs/broken.json,line=1") {
		t.Errorf("annotations: %q", a)
	}
	if diff := cmp.Diff(map[string]string{"findings": "2", "errors": "1", "warnings": "1", "sarif-file": "reports/gpulint.sarif"}, a.outputs(t)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct{ Version string }
			}
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(a.read(t, filepath.Join(a.ws, "reports", "gpulint.sarif"))), &log); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range log.Runs[0].Results {
		uris = append(uris, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	if diff := cmp.Diff([]string{"configs/broken.json", "configs/ds.json"}, uris); diff != "" {
		t.Errorf("SARIF locations (-want +got):\n%s", diff)
	}
	if v := log.Runs[0].Tool.Driver.Version; v != cli.ToolVersion() {
		t.Errorf("SARIF tool version %q, want %q", v, cli.ToolVersion())
	}
	if s := a.read(t, a.summary); !strings.HasPrefix(s, "## gpulint\n\n1 error, 1 warning and 0 infos in 2 of 2 files checked.") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestActionInjection: file names and values from the repository cannot
// start a workflow command or forge an output; a sarif-file input with a
// line break is refused.
func TestActionInjection(t *testing.T) {
	evil := "configs/a::b,c\n::error file=evil::pwned.json"
	files := map[string]string{
		evil:              brokenDS,
		"configs/k.json":  "{\n  \"x\\n::warning file=evil::pwned %0A\": 1,\n  \"train_micro_batch_size_per_gpu\": 4\n}\n",
		"configs/ds.json": fp32DS,
	}
	var pf []githubtest.File
	for name, content := range files {
		pf = append(pf, added(name, content))
	}
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 1, headSHA, pf...))
	a := newActionRun(t, srv.URL, prEvent, files)
	stdout, stderr, code := a.run(t, nil)
	if code != 1 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	got := annotations(t, stdout) // fails on any stray command line
	if len(got["error"]) != 1 || len(got["warning"]) != 3 {
		t.Errorf("want 1 error and 3 warnings (fp32 twice, unknown key), got %q", got)
	}
	wantProp := "file=configs/a%3A%3Ab%2Cc%0A%3A%3Aerror file=evil%3A%3Apwned.json,line=1"
	if len(got["error"]) == 1 && !strings.HasPrefix(got["error"][0], "::error "+wantProp) {
		t.Errorf("error annotation %q does not start with the escaped file %q", got["error"][0], wantProp)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("stderr line could be a workflow command: %q", line)
		}
	}
	if diff := cmp.Diff(map[string]string{"findings": "4", "errors": "1", "warnings": "3", "sarif-file": ""}, a.outputs(t)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if c := commentBodies(srv.Fake); len(c) != 1 || strings.Contains(c[0], "\n::error") {
		t.Errorf("comment carries a raw line break from the file name:\n%s", c)
	}

	_, stderr, code = a.run(t, map[string]string{"sarif-file": "x.sarif\nfindings<<EOF"})
	if code != 2 || !strings.Contains(stderr, "input sarif-file: a path cannot contain a line break") {
		t.Errorf("sarif-file with a line break: exit %d, stderr %q", code, stderr)
	}
}

// TestActionTokenNeverLeaks runs the action with a known token, once
// accepted and once rejected, and looks for the token in everything the
// action writes: only the add-mask command, first, may carry it.
func TestActionTokenNeverLeaks(t *testing.T) {
	const token = "ghs_leakCanary0123456789ABCDEFGHIJabcdefgh"
	tests := []struct {
		name      string
		fakeToken string
		wantCode  int
	}{
		{"accepted", token, 1},
		{"rejected", "ghs_someOtherToken", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.NewServer(t, githubtest.WithToken(tc.fakeToken), githubtest.WithPullRequest("o", "r", 1, headSHA,
				added("configs/ds.json", fp32DS), added("configs/broken.json", brokenDS)))
			a := newActionRun(t, srv.URL, prEvent, map[string]string{"configs/ds.json": fp32DS, "configs/broken.json": brokenDS})
			stdout, stderr, code := a.run(t, map[string]string{"github-token": token, "sarif-file": "gpulint.sarif"})
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			first, rest, _ := strings.Cut(stdout, "\n")
			if first != "::add-mask::"+token {
				t.Errorf("first stdout line %q, want the add-mask command", first)
			}
			st := srv.State()
			state, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			places := map[string]string{"stdout after add-mask": rest, "stderr": stderr, "fake API state": string(state)}
			for _, p := range []string{a.output, a.summary, filepath.Join(a.ws, "gpulint.sarif")} {
				if data, err := os.ReadFile(p); err == nil {
					places[filepath.Base(p)] = string(data)
				}
			}
			for where, text := range places {
				if strings.Contains(text, token) {
					t.Errorf("the token appears in %s", where)
				}
			}
			if tc.wantCode == 1 && len(st.Comments) != 1 {
				t.Errorf("%d comments, want 1 (the check must cover a posted comment)", len(st.Comments))
			}
			if tc.wantCode == 2 && !strings.Contains(stderr, "GitHub rejected the github-token (401") {
				t.Errorf("stderr does not explain the 401:\n%s", stderr)
			}
		})
	}
}

// TestActionAPIErrors: a pull request the token cannot see and a missing
// token are usage errors with a clear message.
func TestActionAPIErrors(t *testing.T) {
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 2, headSHA))
	tests := []struct {
		name       string
		inputs     map[string]string
		wantCode   int
		wantStderr string
	}{
		{"unknown pull request", nil, 2, "GitHub answered 404 for o/r#1: the repository or pull request does not exist, or the token cannot see it"},
		{"no token", map[string]string{"github-token": "-"}, 2, "input github-token is empty"},
		{"no token needed without API use", map[string]string{"github-token": "-", "comment": "false", "suggestions": "false", "only-changed": "false"}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newActionRun(t, srv.URL, prEvent, map[string]string{"configs/ds.json": cleanDS})
			_, stderr, code := a.run(t, tc.inputs)
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr, tc.wantCode, tc.wantStderr)
			}
		})
	}
}

// TestActionSkipsLinksOutOfWorkspace: a changed file that is a symlink
// to a file outside the workspace is not read.
func TestActionSkipsLinksOutOfWorkspace(t *testing.T) {
	outside := write(t, t.TempDir(), "secret.json", brokenDS)
	srv := githubtest.NewServer(t, githubtest.WithPullRequest("o", "r", 1, headSHA,
		githubtest.File{Filename: "configs/link.json", Status: "added"}, added("configs/ds.json", cleanDS)))
	a := newActionRun(t, srv.URL, prEvent, map[string]string{"configs/ds.json": cleanDS})
	if err := os.Symlink(outside, filepath.Join(a.ws, "configs", "link.json")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	_, stderr, code := a.run(t, map[string]string{"paths": "configs/link.json configs"})
	if code != 0 || !strings.Contains(stderr, "skipped configs/link.json: it leads outside the workspace") || !strings.Contains(stderr, "1 file checked") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// cmpIgnoreDeps compares options without their dependencies.
var cmpIgnoreDeps = cmp.Options{cmpopts.IgnoreFields(cli.ActionOptions{}, "Factory"), cmpopts.IgnoreUnexported(cli.ActionOptions{})}

// TestActionInputs checks how inputs become options, through the runF
// seam.
func TestActionInputs(t *testing.T) {
	base := map[string]string{"GITHUB_WORKSPACE": "/ws", "INPUT_GITHUB-TOKEN": "tok"}
	tests := []struct {
		name       string
		env        map[string]string
		want       cli.ActionOptions
		wantStderr string
	}{
		{"defaults", nil, cli.ActionOptions{Token: "tok", Paths: []string{"."}, FailOn: "error", Comment: true, Suggestions: true, OnlyChanged: true, Timeout: cli.DefaultActionTimeout, Workspace: "/ws"}, ""},
		{"every input", map[string]string{
			"INPUT_PATHS": "configs/\nk8s, deploy/vllm.yaml", "INPUT_GPU": "H100-80GB", "INPUT_GPUS": "8",
			"INPUT_MODEL": "meta-llama/Llama-3.1-8B", "INPUT_CONFIG": "ci/gpulint.yaml", "INPUT_FAIL-ON": "warning",
			"INPUT_COMMENT": "false", "INPUT_SUGGESTIONS": "False", "INPUT_ONLY-CHANGED": "TRUE", "INPUT_SARIF-FILE": " out/g.sarif ", "INPUT_TIMEOUT": "90s",
			"GITHUB_API_URL": "http://127.0.0.1:1/", "GITHUB_EVENT_NAME": "pull_request",
		}, cli.ActionOptions{
			Token: "tok", Paths: []string{"configs/", "k8s", "deploy/vllm.yaml"},
			Target: cli.TargetFlags{GPU: "H100-80GB", GPUs: 8, Model: "meta-llama/Llama-3.1-8B", Config: "ci/gpulint.yaml"},
			FailOn: "warning", OnlyChanged: true, SARIFFile: "out/g.sarif", Timeout: 90 * time.Second, Workspace: "/ws",
			APIURL: "http://127.0.0.1:1/", EventName: "pull_request",
		}, ""},
		{"bad boolean", map[string]string{"INPUT_COMMENT": "yes"}, cli.ActionOptions{}, `input comment: "yes" is not a boolean (want true or false)`},
		{"bad gpus", map[string]string{"INPUT_GPUS": "-1"}, cli.ActionOptions{}, `input gpus: "-1" is not a number of GPUs`},
		{"bad fail-on", map[string]string{"INPUT_FAIL-ON": "sometimes"}, cli.ActionOptions{}, "input fail-on: unknown severity"},
		{"bad timeout", map[string]string{"INPUT_TIMEOUT": "0s"}, cli.ActionOptions{}, `input timeout: "0s" is not a positive duration`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			ios, _, out, errOut := iostreams.Test()
			var got *cli.ActionOptions
			f := &cli.Factory{IO: ios, Env: cli.Env{Getenv: func(k string) string { return env[k] }}}
			cmd := cli.NewCmdAction(f, func(o *cli.ActionOptions) error { got = o; return nil })
			cmd.SetArgs(nil)
			cmd.SetOut(out)
			cmd.SetErr(errOut)
			err := cmd.Execute()
			if tc.wantStderr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantStderr) {
					t.Fatalf("error %v, want %q", err, tc.wantStderr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmpIgnoreDeps); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if out.String() != "::add-mask::tok\n" {
				t.Errorf("stdout %q, want only the mask", out.String())
			}
		})
	}
}

// TestLintFormats: lint's --format takes every renderer, the Action's
// among them.
func TestLintFormats(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gpulint.yaml", statedProject)
	p := write(t, dir, "ds.json", fp32DS)
	tests := []struct{ format, wantPrefix string }{
		{"github", "::warning file=" + filepath.ToSlash(p) + ",line=3,col=12"},
		{"markdown", "## gpulint\n\n0 errors, 1 warning and 0 infos in 1 of 1 file checked."},
		{"sarif", "{\n  \"$schema\": \"https://docs.oasis-open.org/sarif/"},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			stdout, stderr, code := run(t, false, nil, "lint", "--gpu", "A100-80GB", "--format", tc.format, p)
			if code != 0 || !strings.HasPrefix(stdout, tc.wantPrefix) {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant prefix %q", code, stderr, stdout, tc.wantPrefix)
			}
		})
	}
}
