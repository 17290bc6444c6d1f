package act_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/github"
	"github.com/gpulint/gpulint/internal/github/githubtest"
)

const (
	headSHA = "0123456789abcdef0123456789abcdef01234567"
	token   = "ghs_actEndToEnd0123456789abcdefABCDEFGHIJ"
	fp32DS  = "{\n  \"train_micro_batch_size_per_gpu\": 4,\n  \"fp16\": {\"enabled\": false}\n}\n"
	broken  = "{\"train_batch_size\": }\n"
	cleanDS = "{\"train_micro_batch_size_per_gpu\": 4, \"bf16\": {\"enabled\": true}}\n"
	event   = `{"action":"synchronize","number":1,"pull_request":{"number":1,"head":{"sha":"` + headSHA + `"},"base":{"ref":"main"}},"repository":{"name":"r","full_name":"o/r","owner":{"login":"o"},"default_branch":"main"}}`
	// actTimeout bounds the act run, gpulint's build included.
	actTimeout = 5 * time.Minute
)

// skipDirs are not copied into the workspace: not needed to build gpulint.
var skipDirs = map[string]bool{".git": true, "test": true, "docs": true, "examples": true, "bench": true, "dist": true}

// added is a pull request file that adds content.
func added(name, content string) githubtest.File {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	return githubtest.File{Filename: name, Status: "added",
		Patch: fmt.Sprintf("@@ -0,0 +1,%d @@\n+%s", len(lines), strings.Join(lines, "\n+"))}
}

// releaseTag is the release the test serves: the Action used at this ref
// downloads its binary instead of building one.
const releaseTag = "v0.9.9"

// TestActionWithAct runs the Action on a pull request three ways: at a
// ref that is no release (uses: ./, built from source), at a release tag
// whose assets a local server serves (downloaded and verified), and at a
// release tag whose archive does not match checksums.txt (never run;
// built from source). Each must then lint, comment and suggest alike.
func TestActionWithAct(t *testing.T) {
	actBin, err := exec.LookPath("act")
	if err != nil {
		t.Skip("act is not on PATH; install it with `go install github.com/nektos/act@v0.2.89` (.ci/run does) to run the Action end to end")
	}
	if testing.Short() {
		t.Skip("the act end-to-end test builds gpulint; skipped with -short")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	copyTree(t, repo, ws)
	configs := map[string]string{"configs/ds.json": fp32DS, "configs/broken.json": broken, "configs/clean.json": cleanDS}
	var files []githubtest.File
	for name, content := range configs {
		writeFile(t, filepath.Join(ws, name), content)
		files = append(files, added(name, content))
	}
	// The project file states the dtype the training script loads the model
	// in: without it fp32-where-bf16 rests on an assumed input and is only
	// info. It is not part of the pull request.
	writeFile(t, filepath.Join(ws, ".gpulint.yaml"), "targets:\n  - paths: [\"**\"]\n    model_dtype: float32\n")
	// A config outside the pull request: only-changed must leave it alone.
	writeFile(t, filepath.Join(ws, "untouched", "ds.json"), fp32DS)
	eventPath := filepath.Join(tmp, "event.json")
	writeFile(t, eventPath, event)

	asset, sum := releaseAsset(t, repo, tmp)
	workflow, err := os.ReadFile(filepath.Join(testdata, "workflows", "pull_request.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(workflow, []byte("uses: ./\n")) {
		t.Fatal("pull_request.yml no longer uses the action as ./")
	}

	tests := []struct {
		name string
		// uses is the workflow's reference to the action.
		uses string
		// checksum is the sha256 checksums.txt gives the archive.
		checksum string
		want     []string
		absent   []string
		// downloads are the release files the action must fetch.
		downloads []string
	}{
		{
			name: "ref that is no release: built from source",
			uses: "./",
			want: []string{"gpulint: ref 'none' is not a release tag; building from source", "go version go", "Success - Main Build gpulint"},
		},
		{
			name:      "release tag: the verified release binary",
			uses:      "gpulint/gpulint@" + releaseTag,
			checksum:  sum,
			want:      []string{"sha256 " + sum + " verified", "gpulint " + releaseTag + " (", "Success - Main Download gpulint release"},
			absent:    []string{"go version go", "Main Build gpulint"},
			downloads: []string{"checksums.txt", asset.name},
		},
		{
			name:      "release tag, archive not matching checksums.txt: built from source",
			uses:      "gpulint/gpulint@" + releaseTag,
			checksum:  strings.Repeat("0", 64),
			want:      []string{"does not match the release's checksums.txt", "not running it, building gpulint from source", "go version go", "Success - Main Build gpulint"},
			absent:    []string{"gpulint " + releaseTag + " (", " verified"},
			downloads: []string{"checksums.txt", asset.name},
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, fmt.Sprint(i))
			wf := filepath.Join(dir, "pull_request.yml")
			writeFile(t, wf, strings.Replace(string(workflow), "uses: ./\n", "uses: "+tc.uses+"\n", 1))
			rel := newReleaseServer(t, asset, tc.checksum)
			out, srv := runAct(t, actBin, dir, ws, wf, eventPath, files, rel.URL,
				"--local-repository", "gpulint/gpulint@"+releaseTag+"="+ws)
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("act's log lacks %q", want)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("act's log has %q", a)
				}
			}
			if diff := cmp.Diff(tc.downloads, rel.requests()); diff != "" {
				t.Errorf("release downloads (-want +got):\n%s", diff)
			}
			checkRun(t, out, srv)
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "Main ") && (strings.Contains(line, "Success - ") || strings.Contains(line, "Failure - ")) {
					t.Logf("step time: %s", strings.TrimSpace(line[strings.Index(line, "Main "):]))
				}
			}
			if t.Failed() {
				t.Logf("act's log:\n%s", out)
			}
		})
	}
}

// runAct runs the workflow wf on the pull request event with act and
// returns its log and the fake API's server.
func runAct(t *testing.T, actBin, tmp, ws, wf, eventPath string, files []githubtest.File, serverURL string, extra ...string) (string, *githubtest.Server) {
	t.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	srv := githubtest.NewServer(t, githubtest.WithToken(token), githubtest.WithPullRequest("o", "r", 1, headSHA, files...))

	ctx, cancel := context.WithTimeout(context.Background(), actTimeout)
	defer cancel()
	args := []string{"pull_request",
		"-W", wf,
		"-e", eventPath,
		"-C", ws,
		"-P", "ubuntu-latest=-self-hosted",
		"--local-repository", "actions/setup-go@v5=" + filepath.Join(testdata, "stubs", "setup-go"),
		"--local-repository", "actions/checkout@v4=" + filepath.Join(testdata, "stubs", "checkout"),
		"--action-cache-path", filepath.Join(tmp, "act-cache"),
		"--no-cache-server",
		"--env", "GITHUB_API_URL=" + strings.TrimSuffix(srv.URL, "/"),
		// The server the action downloads releases from.
		"--env", "GITHUB_SERVER_URL=" + serverURL,
		"--env", "GITHUB_REPOSITORY=o/r",
		"-s", "GITHUB_TOKEN=" + token,
	}
	cmd := exec.CommandContext(ctx, actBin, append(args, extra...)...)
	cmd.Env = actEnv(t, tmp)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err = cmd.Run()
	t.Logf("act ran for %s", time.Since(start).Round(time.Second))
	out := log.String()
	if err != nil {
		t.Fatalf("act: %v\n%s", err, out)
	}
	return out, srv
}

// checkRun checks what every way of installing gpulint must lead to: the
// annotations, outputs, SARIF, comment and suggestion of the run.
func checkRun(t *testing.T, out string, srv *githubtest.Server) {
	t.Helper()
	for _, want := range []string{
		// Annotations, as act logs the workflow commands it received.
		"::error file=configs/broken.json,line=1,col=22",
		"::warning file=configs/ds.json,line=3,col=12",
		// Exit by findings (the error), outputs set before that.
		"e2e-result outcome=failure findings=2 errors=1 warnings=1 sarif=gpulint.sarif",
		// The SARIF log in the workspace act ran the job in.
		"e2e-sarif results=2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("act's log lacks %q", want)
		}
	}
	if strings.Contains(out, token) {
		t.Errorf("the token appears in act's log")
	}
	if strings.Contains(out, "untouched/ds.json") {
		t.Errorf("a file outside the pull request was linted")
	}

	st := srv.State()
	if len(st.Comments) != 1 || !strings.HasPrefix(st.Comments[0].Body, github.Marker) || !strings.Contains(st.Comments[0].Body, "configs/broken.json:1") {
		t.Errorf("want one gpulint comment naming configs/broken.json, got %+v", st.Comments)
	}
	if len(st.ReviewComments) != 1 || st.ReviewComments[0].Path != "configs/ds.json" || st.ReviewComments[0].Line != 3 {
		t.Errorf("want one suggestion on configs/ds.json line 3, got %+v", st.ReviewComments)
	}
}

// actEnv is the environment act runs in: a private home (act reads
// ~/.actrc and caches there), the host's Go caches so that the build
// finds its modules and compiled packages, and no network for Go.
func actEnv(t *testing.T, tmp string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	goEnv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		goEnv[k] = strings.TrimSpace(string(v))
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GOCACHE=" + goEnv["GOCACHE"], "GOMODCACHE=" + goEnv["GOMODCACHE"], "GOPATH=" + goEnv["GOPATH"],
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod",
		"PATH=" + filepath.Dir(goBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GITHUB_"), strings.HasPrefix(k, "INPUT_"), strings.HasPrefix(k, "RUNNER_"), strings.HasPrefix(k, "ACTIONS_"):
			// A CI runner's own variables must not leak into the run.
		case k == "HOME", k == "PATH", strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "GO"):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// copyTree copies the source gpulint is built from into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[rel] || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(p, ".test") {
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
