package cli_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

var assets = cli.Assets{Policies: policies.FS, Schemas: schemas.FS}

func run(t *testing.T, tty bool, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	cacheDir := t.TempDir()
	e := cli.Env{Getenv: func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "GPULINT_CACHE_DIR" {
			return cacheDir
		}
		return ""
	}}
	code = cli.Run(args, ios, e, assets)
	return out.String(), errOut.String(), code
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const fp32DS = `{
  "train_micro_batch_size_per_gpu": 4,
  "fp16": {"enabled": false}
}
`

// statedProject states the load dtype fp32DS's training script uses, so
// that the full-FP32 verdict on it is certain: a warning, not the info a
// DeepSpeed file alone gets (its dtype is the script's).
const statedProject = "targets:\n  - paths: [\"**\"]\n    model_dtype: float32\n"

const cleanDS = `{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}
`

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gpulint.yaml", statedProject)
	bad := write(t, dir, "bad.json", fp32DS)
	clean := write(t, dir, "clean.json", cleanDS)
	broken := write(t, dir, "broken.json", "{\"train_batch_size\": }")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"clean file", []string{"lint", clean}, 0, ""},
		{"warning below the default fail-on", []string{"lint", bad}, 0, ""},
		{"warning at fail-on warning", []string{"lint", "--fail-on", "warning", bad}, 1, ""},
		{"fail-on never", []string{"lint", "--fail-on", "never", bad, broken}, 0, ""},
		{"parse error counts as an error", []string{"lint", broken}, 1, ""},
		{"unknown GPU", []string{"lint", "--gpu", "H1000", clean}, 2, "unknown GPU \"H1000\" (did you mean"},
		{"unknown model", []string{"lint", "--model", "acme/nope-9B", clean}, 2, "unknown model"},
		{"unknown format", []string{"lint", "--format", "xml", clean}, 2, "unknown --format \"xml\""},
		{"unknown fail-on", []string{"lint", "--fail-on", "sometimes", clean}, 2, "--fail-on"},
		{"unknown flag", []string{"lint", "--frobnicate", clean}, 2, "unknown flag"},
		{"missing path", []string{"lint", filepath.Join(dir, "nope.json")}, 2, "no such file or directory"},
		{"version", []string{"version"}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, false, nil, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr)
			}
			if tc.wantStderr != "" && !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.wantStderr)
			}
			if tc.wantStderr == "" && stderr != "" {
				t.Errorf("unexpected stderr %q", stderr)
			}
		})
	}
}

// TestJSONContract parses the JSON output and checks every documented
// field, including unknown files being listed.
func TestJSONContract(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gpulint.yaml", statedProject)
	write(t, dir, "ds.json", fp32DS)
	write(t, dir, "notes.yaml", "title: not a GPU config\n")
	stdout, stderr, code := run(t, false, nil, "lint", "--format", "json", "--gpu", "A100-80GB", dir)
	if code != 0 || stderr != "" {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
	var doc struct {
		Version int `json:"version"`
		Files   []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"files"`
		Findings []map[string]any `json:"findings"`
		Summary  map[string]int   `json:"summary"`
		Skipped  []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	if doc.Version != 1 {
		t.Errorf("version %d", doc.Version)
	}
	kinds := map[string]string{}
	for _, f := range doc.Files {
		kinds[filepath.Base(f.Path)] = f.Kind
	}
	if diff := cmp.Diff(map[string]string{"ds.json": "deepspeed", "notes.yaml": "unknown"}, kinds); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"files": 2, "errors": 0, "warnings": 1, "infos": 0, "skipped": 1}, doc.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if len(doc.Skipped) != 1 || filepath.Base(doc.Skipped[0].Path) != "notes.yaml" || doc.Skipped[0].Reason != "not a GPU config" {
		t.Errorf("skipped: %+v", doc.Skipped)
	}
	if len(doc.Findings) != 1 {
		t.Fatalf("findings: %v", doc.Findings)
	}
	f := doc.Findings[0]
	for _, k := range []string{"rule", "slug", "severity", "message", "file", "line", "column", "end_line", "end_column", "path"} {
		if _, ok := f[k]; !ok {
			t.Errorf("finding lacks %q: %v", k, f)
		}
	}
	got := map[string]any{"rule": f["rule"], "slug": f["slug"], "severity": f["severity"], "line": f["line"], "column": f["column"], "path": f["path"]}
	want := map[string]any{"rule": "GPU001", "slug": "fp32-where-bf16", "severity": "warning", "line": 3.0, "column": 12.0, "path": "fp16.enabled"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finding (-want +got):\n%s", diff)
	}
	fixes, _ := f["fixes"].([]any)
	if len(fixes) != 1 {
		t.Fatalf("fixes: %v", f["fixes"])
	}
	edits := fixes[0].(map[string]any)["edits"].([]any)
	e := edits[0].(map[string]any)
	for _, k := range []string{"file", "start", "end", "new_text"} {
		if _, ok := e[k]; !ok {
			t.Errorf("edit lacks %q: %v", k, e)
		}
	}
}

func TestTextOutputAndColor(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gpulint.yaml", statedProject)
	p := write(t, dir, "ds.json", fp32DS)
	tests := []struct {
		name      string
		tty       bool
		env       map[string]string
		args      []string
		wantColor bool
	}{
		{"pipe: no color", false, nil, nil, false},
		{"terminal: color", true, nil, nil, true},
		{"terminal with NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, nil, false},
		// no-color.org: an empty NO_COLOR is as if unset.
		{"terminal with NO_COLOR empty", true, map[string]string{"NO_COLOR": ""}, nil, true},
		{"terminal with NO_COLOR=0", true, map[string]string{"NO_COLOR": "0"}, nil, false},
		{"--color always on a pipe", false, nil, []string{"--color", "always"}, true},
		{"--color never on a terminal", true, nil, []string{"--color", "never"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetTTY(tc.tty)
			args := append([]string{"lint", "--gpu", "H100"}, tc.args...)
			args = append(args, p)
			// NO_COLOR reaches Run through the environment, as in main.
			env := cli.Env{LookupEnv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }}
			cli.Run(append([]string{args[0], "--no-cache"}, args[1:]...), ios, env, assets)
			s := out.String()
			if got := strings.Contains(s, "\x1b["); got != tc.wantColor {
				t.Errorf("color %v, want %v:\n%q", got, tc.wantColor, s)
			}
			plain := stripANSI(s)
			wantLine := p + ":3:12: warning fp32-where-bf16: DeepSpeed trains in full FP32"
			if !strings.Contains(plain, wantLine) {
				t.Errorf("output lacks %q:\n%s", wantLine, plain)
			}
			if !strings.Contains(plain, "1 file checked: 0 errors, 1 warning, 0 infos") {
				t.Errorf("no summary line:\n%s", plain)
			}
		})
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestProjectFile: targets come from .gpulint.yaml found above the file;
// flags win over it; an invalid project file exits 2 with its position.
func TestProjectFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "train/ds.json", fp32DS)
	write(t, dir, ".gpulint.yaml", "targets:\n  - paths: [\"train/**\"]\n    gpu: T4\n")
	stdout, _, _ := run(t, false, nil, "lint", "--verbose", p)
	if !strings.Contains(stdout, "T4 has no BF16") {
		t.Errorf("project target not applied:\n%s", stdout)
	}
	stdout, _, _ = run(t, false, nil, "lint", "--verbose", "--gpu", "H100", p)
	if !strings.Contains(stdout, "H100-80GB supports BF16") {
		t.Errorf("flag did not win over the project file:\n%s", stdout)
	}
	write(t, dir, ".gpulint.yaml", "targets:\n  - paths: [\"train/**\"]\n    gpuu: T4\n")
	_, stderr, code := run(t, false, nil, "lint", p)
	if code != 2 || !strings.Contains(stderr, ".gpulint.yaml:3:") {
		t.Errorf("invalid project file: code %d stderr %q", code, stderr)
	}
}

// TestFixExitCodes: fix --write exits by what remains after fixing; the
// diff mode writes nothing, so it exits by the findings as they are.
func TestFixExitCodes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".gpulint.yaml", statedProject)
	p := write(t, dir, "ds.json", fp32DS)
	out, _, code := run(t, false, nil, "fix", "--gpu", "H100", "--fail-on", "warning", p)
	if code != 1 || !strings.Contains(out, `+  "bf16": {`) {
		t.Errorf("diff mode: code %d, want 1, diff:\n%s", code, out)
	}
	_, _, code = run(t, false, nil, "fix", "--write", "--gpu", "H100", "--fail-on", "warning", p)
	if code != 0 {
		t.Errorf("--write: code %d, want 0 once the finding is fixed", code)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), `"bf16": {`) {
		t.Errorf("file not fixed:\n%s", data)
	}
}

// TestVerbose: text prints a long message's first clause on its one line;
// --verbose prints the arithmetic and evidence under it; JSON always
// carries the summary and the details.
func TestVerbose(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "ds.json", fp32DS)
	short, _, _ := run(t, false, nil, "lint", "--gpu", "T4", p)
	if strings.Contains(short, "T4 has no BF16") {
		t.Errorf("text without --verbose prints the details:\n%s", short)
	}
	for _, line := range strings.Split(short, "\n") {
		// The one line holds the verdict and, in short, what it assumes.
		if _, msg, ok := strings.Cut(line, "fp32-where-bf16: "); ok && len([]rune(strings.Split(msg, "; assumes ")[0])) > 160 {
			t.Errorf("message of %d characters on one line: %s", len([]rune(msg)), msg)
		}
	}
	long, _, _ := run(t, false, nil, "lint", "--verbose", "--gpu", "T4", p)
	if !strings.Contains(long, "\n      T4 has no BF16") {
		t.Errorf("--verbose lacks the details on an indented line:\n%s", long)
	}
	js, _, _ := run(t, false, nil, "lint", "--format", "json", "--gpu", "T4", p)
	if !strings.Contains(js, `"details": [`) || !strings.Contains(js, `"summary": "DeepSpeed trains`) {
		t.Errorf("json lacks the summary or the details:\n%s", js)
	}
}

// A recipe whose sharding only its launcher decides is sized under each
// sharding: the text report prints the sizing note on its own line, and
// the JSON sizing lists every alternative with its need and fit.
func TestLintShardingAlternatives(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "sft.yaml", "# Config for 1 node of 8 x H100s (80GB)\nmodel_name_or_path: meta-llama/Llama-3.1-8B\n"+
		"torch_dtype: bfloat16\nbf16: true\nper_device_train_batch_size: 2\nmax_length: 8192\ngradient_checkpointing: true\n")
	text, _, _ := run(t, false, nil, "lint", p)
	if !strings.Contains(text, p+": sizing: on 8× H100-80GB (79.1 GiB each) the estimate fits with ZeRO-2") ||
		!strings.Contains(text, "does not fit unsharded (DDP)") {
		t.Errorf("text lacks the sizing note:\n%s", text)
	}
	js, _, _ := run(t, false, nil, "lint", "--format", "json", p)
	var doc struct {
		Files []struct {
			Sizing struct {
				Open         string `json:"open"`
				Fits         bool   `json:"fits"`
				Alternatives []struct {
					Value string `json:"value"`
					Fits  bool   `json:"fits"`
				} `json:"alternatives"`
			} `json:"sizing"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Files) != 1 {
		t.Fatalf("decode: %v\n%s", err, js)
	}
	z := doc.Files[0].Sizing
	got := map[string]bool{}
	for _, a := range z.Alternatives {
		got[a.Value] = a.Fits
	}
	want := map[string]bool{"unsharded (DDP)": false, "ZeRO-2": true, "ZeRO-3": true, "FSDP full shard": true}
	if z.Open != "sharding" || z.Fits || !maps.Equal(got, want) {
		t.Errorf("sizing open %q fits %v alternatives %v, want sharding, not fitting every one, %v", z.Open, z.Fits, got, want)
	}
}
