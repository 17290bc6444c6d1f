package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/github/githubtest"
	"github.com/gpulint/gpulint/internal/iostreams"
)

// runIn is run with standard input.
func runIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	cacheDir := t.TempDir()
	e := cli.Env{Getenv: func(k string) string {
		if k == "GPULINT_CACHE_DIR" {
			return cacheDir
		}
		return ""
	}}
	code = cli.Run(args, ios, e, assets)
	return out.String(), errOut.String(), code
}

// jsonFiles lists the files a JSON report checked and skipped.
func jsonFiles(t *testing.T, stdout string) (files, skipped []string) {
	t.Helper()
	var doc struct {
		Files   []struct{ Path string }
		Skipped []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	for _, f := range doc.Files {
		files = append(files, filepath.Base(f.Path))
	}
	for _, s := range doc.Skipped {
		skipped = append(skipped, filepath.Base(s.Path)+": "+s.Reason)
	}
	return files, skipped
}

// TestExclude: --exclude and exclude: in .gpulint.yaml leave files out of
// the run, whether a directory walk found them or they were named.
func TestExclude(t *testing.T) {
	tests := []struct {
		name    string
		project string
		args    []string
		want    []string
	}{
		{"nothing excluded", "", nil, []string{"a.json", "c.json", "b.json"}}, // gen/ sorts before legacy/
		{"flag, a name anywhere", "", []string{"--exclude", "legacy"}, []string{"a.json", "c.json"}},
		{"flag, a glob with **", "", []string{"--exclude", "**/gen/*.json"}, []string{"a.json", "b.json"}},
		{"flag repeated", "", []string{"--exclude", "legacy", "--exclude", "c.json"}, []string{"a.json"}},
		{"project file", "exclude: [\"legacy/**\"]\n", nil, []string{"a.json", "c.json"}},
		{"project file and flag", "exclude: [gen]\n", []string{"--exclude", "legacy"}, []string{"a.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.json", cleanDS)
			write(t, dir, "legacy/b.json", cleanDS)
			write(t, dir, "gen/c.json", cleanDS)
			if tc.project != "" {
				write(t, dir, ".gpulint.yaml", tc.project)
			}
			args := append([]string{"lint", "--format", "json"}, tc.args...)
			// The directory and a named file under it: both are excluded.
			stdout, stderr, code := run(t, false, nil, append(args, dir, filepath.Join(dir, "legacy", "b.json"))...)
			if code != 0 {
				t.Fatalf("code %d, stderr %s", code, stderr)
			}
			got, _ := jsonFiles(t, stdout)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixExclude: fix takes --exclude as lint does: no diff for an
// excluded file.
func TestFixExclude(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.json", fp32DS)
	write(t, dir, "legacy/b.json", fp32DS)
	for _, tc := range []struct {
		name  string
		args  []string
		wantB bool
	}{
		{"all", nil, true},
		{"legacy excluded", []string{"--exclude", "legacy"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, _ := run(t, false, nil, append(append([]string{"fix", "--gpu", "H100"}, tc.args...), dir)...)
			if !strings.Contains(stdout, "a.json") || strings.Contains(stdout, "b.json") != tc.wantB {
				t.Errorf("diff for b.json = %v, want %v\n%s%s", !tc.wantB, tc.wantB, stdout, stderr)
			}
		})
	}
}

// TestHelmTemplatesSkipped: a chart's templates are Go templates, not
// YAML; they are skipped with a notice, never a parse error.
func TestHelmTemplatesSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "chart/Chart.yaml", "apiVersion: v2\nname: serve\nversion: 0.1.0\n")
	write(t, dir, "chart/templates/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\n{{- if .Values.gpu }}\nspec: {{ .Values.spec | toYaml }}\n{{- end }}\n")
	write(t, dir, "chart/values.yaml", "gpu: true\n")
	// templates/ outside a chart is an ordinary directory.
	write(t, dir, "other/templates/broken.yaml", "a: [\n")
	for _, args := range [][]string{{dir}, {filepath.Join(dir, "chart/templates/deploy.yaml")}} {
		stdout, stderr, code := run(t, false, nil, append([]string{"lint", "--format", "json"}, args...)...)
		files, skipped := jsonFiles(t, stdout)
		if strings.Contains(strings.Join(files, " "), "deploy.yaml") {
			t.Errorf("%v: the Helm template was read:\n%s", args, stdout)
		}
		if !strings.Contains(stderr, "deploy.yaml: skipped: a Helm chart template") {
			t.Errorf("%v: no notice on stderr: %q", args, stderr)
		}
		if !strings.Contains(strings.Join(skipped, "\n"), "deploy.yaml: helm chart template") {
			t.Errorf("%v: skipped = %q", args, skipped)
		}
		wantCode := 0
		if len(args) == 1 && args[0] == dir {
			wantCode = 1 // other/templates/broken.yaml is not in a chart
		}
		if code != wantCode {
			t.Errorf("%v: code %d, want %d; stdout %s", args, code, wantCode, stdout)
		}
	}
}

// TestParseErrorIgnoredByPath: parse-error is silenced per path by
// ignore: like any rule, and off under rules:.
func TestParseErrorIgnoredByPath(t *testing.T) {
	tests := []struct {
		name, project string
		wantCode      int
	}{
		{"reported", "", 1},
		{"ignored for the path", "ignore:\n  - {path: \"vendored/*.yaml\", rule: parse-error, reason: upstream file with tabs}\n", 0},
		{"ignore for another path", "ignore:\n  - {path: \"other/*.yaml\", rule: parse-error, reason: upstream}\n", 1},
		{"turned off", "rules:\n  parse-error: off\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, "vendored/x.yaml", "a: [\n")
			if tc.project != "" {
				write(t, dir, ".gpulint.yaml", tc.project)
			}
			stdout, stderr, code := run(t, false, nil, "lint", p)
			if code != tc.wantCode {
				t.Errorf("code %d, want %d\n%s%s", code, tc.wantCode, stdout, stderr)
			}
		})
	}
}

// TestStdin: lint - reads standard input; --stdin-filename names it for
// kind detection, the project file and the report.
func TestStdin(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "train/.gpulint.yaml", "targets:\n  - paths: [\"**\"]\n    gpu: T4\n")
	named := filepath.Join(dir, "train", "ds.json")
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{"unnamed", fp32DS, []string{"lint", "--gpu", "H100", "-"}, 0, []string{"<stdin>:3:", "fp32-where-bf16", "1 file checked"}, ""},
		{"named: the project file above the name applies", fp32DS, []string{"lint", "--verbose", "--stdin-filename", named, "-"}, 0, []string{named + ":3:", "T4 has no BF16"}, ""},
		{"not a GPU config", "hello: world\n", []string{"lint", "-"}, 0, []string{"1 file skipped as not GPU configs", "no GPU config recognised"}, ""},
		{"named and excluded", fp32DS, []string{"lint", "--exclude", "train", "--stdin-filename", named, "-"}, 0, []string{"0 files checked"}, ""},
		{"with other paths", "", []string{"lint", "-", named}, 2, nil, "cannot be combined"},
		{"name without -", "", []string{"lint", "--stdin-filename", "x.json", dir}, 2, nil, "needs the path -"},
		{"fix prints the fixed content", fp32DS, []string{"fix", "--gpu", "H100", "-"}, 0, []string{`"bf16": {`, `"train_micro_batch_size_per_gpu": 4`}, "fixed 1 finding in <stdin>"},
		{"fix --diff prints a diff", fp32DS, []string{"fix", "--gpu", "H100", "--diff", "-"}, 0, []string{"--- a/<stdin>", `+  "bf16": {`}, ""},
		{"fix --write refused", fp32DS, []string{"fix", "--write", "-"}, 2, nil, "--write has no file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, tc.stdin, tc.args...)
			if code != tc.wantCode {
				t.Errorf("code %d, want %d\nstdout %s\nstderr %s", code, tc.wantCode, stdout, stderr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q: %q", tc.wantStderr, stderr)
			}
		})
	}
	if _, err := os.Stat(named); err == nil {
		t.Errorf("fix - wrote %s", named)
	}
}

// TestBaseline: --write-baseline records the findings; --baseline reports
// only new ones and exits by them, even after lines are added above.
func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "ds.json", fp32DS)
	base := filepath.Join(dir, "gpulint-baseline.json")
	args := []string{"--gpu", "H100", "--fail-on", "info"}

	_, stderr, code := run(t, false, nil, append([]string{"lint", "--write-baseline", base}, append(args, p)...)...)
	if code != 0 || !strings.Contains(stderr, "wrote 1 finding to") {
		t.Fatalf("write-baseline: code %d stderr %q", code, stderr)
	}
	lintBase := append([]string{"lint", "--baseline", base}, append(args, p)...)
	stdout, _, code := run(t, false, nil, lintBase...)
	if code != 0 || strings.Contains(stdout, "fp32-where-bf16") || !strings.Contains(stdout, "1 in the baseline not shown") {
		t.Errorf("baselined run: code %d\n%s", code, stdout)
	}

	// Lines above the finding move it; it stays baselined.
	write(t, dir, "ds.json", "{\n  \"steps_per_print\": 10,\n  \"wall_clock_breakdown\": false,\n"+strings.TrimPrefix(fp32DS, "{\n"))
	stdout, _, code = run(t, false, nil, lintBase...)
	if code != 0 || strings.Contains(stdout, "fp32-where-bf16") {
		t.Errorf("after an edit above: code %d\n%s", code, stdout)
	}

	// A new file with the same problem is new.
	q := write(t, dir, "new/ds.json", fp32DS)
	stdout, _, code = run(t, false, nil, append([]string{"lint", "--baseline", base}, append(args, p, q)...)...)
	if code != 1 || !strings.Contains(stdout, filepath.Join("new", "ds.json")+":3:") || strings.Count(stdout, "fp32-where-bf16") != 1 {
		t.Errorf("new finding: code %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"missing baseline", "", []string{"--baseline", filepath.Join(dir, "none.json")}, "write one with --write-baseline"},
		{"not a baseline", "{\"version\": 7, \"findings\": []}", []string{"--baseline", filepath.Join(dir, "bad.json")}, "version 7"},
		{"both flags", "", []string{"--baseline", base, "--write-baseline", base}, "cannot be combined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.content != "" {
				write(t, dir, "bad.json", tc.content)
			}
			_, stderr, code := run(t, false, nil, append(append([]string{"lint"}, tc.args...), p)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("code %d stderr %q, want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestProjectFileStrict: what .gpulint.yaml names must exist; a typo is a
// usage error at its line with a did-you-mean, never a rule quietly off.
func TestProjectFileStrict(t *testing.T) {
	tests := []struct {
		name, project string
		want          []string
	}{
		{"unknown GPU", "targets:\n  - paths: [\"**\"]\n    gpu: H1000\n", []string{".gpulint.yaml:3:10: targets: unknown GPU \"H1000\" (did you mean H100"}},
		{"unknown model", "targets:\n  - paths: [\"**\"]\n    model: meta-llama/Llama-3.1-8C\n", []string{".gpulint.yaml:3:12: targets: unknown model \"meta-llama/Llama-3.1-8C\" (did you mean meta-llama/Llama-3.1-8B?)"}},
		{"unknown rule under rules", "rules:\n  fixed-batch-sise: off\n", []string{".gpulint.yaml:2:3: rules: unknown rule \"fixed-batch-sise\" (did you mean"}},
		{"unknown rule in ignore", "ignore:\n  - {path: \"*.json\", rule: fp32-where-bf61, reason: old}\n", []string{".gpulint.yaml:2:", "ignore: unknown rule \"fp32-where-bf61\" (did you mean \"fp32-where-bf16\"?)"}},
		{"ignore without a reason", "ignore:\n  - {path: \"*.json\", rule: fp32-where-bf16}\n", []string{".gpulint.yaml:2:", "reason"}},
		{"ignore with a blank reason", "ignore:\n  - {path: \"*.json\", rule: fp32-where-bf16, reason: \" \"}\n", []string{".gpulint.yaml:2:", "reason"}},
		{"misspelt memory-model input", "targets:\n  - paths: [\"**\"]\n    optimiser: adam8bit\n", []string{".gpulint.yaml:3:", `unknown key "optimiser" in targets[0] (did you mean "optimizer"?)`}},
		{"optimizer the model does not know", "targets:\n  - paths: [\"**\"]\n    optimizer: lion\n", []string{".gpulint.yaml:3:16:"}},
		{"FSDP strategy that does not exist", "targets:\n  - paths: [\"**\"]\n    fsdp: zero3\n", []string{".gpulint.yaml:3:11:"}},
		{"memory size without a unit", "targets:\n  - paths: [\"**\"]\n    gpu_memory: \"24\"\n", []string{".gpulint.yaml:3:17:", "a memory size such as 24GiB"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, "ds.json", cleanDS)
			write(t, dir, ".gpulint.yaml", tc.project)
			_, stderr, code := run(t, false, nil, "lint", p)
			if code != 2 {
				t.Errorf("code %d, want 2; stderr %q", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestUnusedIgnore: an ignore entry that covers checked files and silences
// nothing is reported at its line; one that silences something is not. A
// wildcard entry is judged only when the run walked the whole project: a
// run over named files (pre-commit, a pull request) cannot know the rest.
func TestUnusedIgnore(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "ds.json", fp32DS)
	write(t, dir, ".gpulint.yaml", "ignore:\n  - {path: \"*.json\", rule: fp32-where-bf16, reason: V100 cluster}\n  - {path: \"*.json\", rule: DS001, reason: stale}\n  - {path: ds.json, rule: DS002, reason: stale}\n")
	want := []string{
		".gpulint.yaml:3:5: warning suppression-unused: ignore entry for DS001 on *.json silences nothing in the files checked",
		".gpulint.yaml:4:5: warning suppression-unused: ignore entry for DS002 on ds.json silences nothing in the files checked",
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"the project walked", dir, want},
		{"one file named: only the literal entry is judged", p, want[1:]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := map[string]string{"GPULINT_CACHE_DIR": filepath.Join(t.TempDir(), "cache")}
			var outs []string
			for range 2 { // cold, then answered from the cache
				stdout, _, _ := run(t, false, cache, "lint", "--gpu", "H100", tc.path)
				outs = append(outs, stdout)
			}
			stdout := outs[0]
			if strings.Contains(stdout, "fp32-where-bf16:") {
				t.Errorf("ignore entry not applied:\n%s", stdout)
			}
			var got []string
			for _, line := range strings.Split(stdout, "\n") {
				if strings.Contains(line, "suppression-unused") {
					got = append(got, line[strings.Index(line, ".gpulint.yaml"):])
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unused entries (-want +got):\n%s", diff)
			}
			if outs[1] != stdout {
				t.Errorf("cold and warm runs differ:\n%s\n---\n%s", stdout, outs[1])
			}
		})
	}
}

// TestSkippedSummary: the text summary counts files that are not GPU
// configs, and says so when it recognised none.
func TestSkippedSummary(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "docs/mkdocs.yaml", "site_name: x\n")
	stdout, _, code := run(t, false, nil, "lint", filepath.Join(dir, "docs"))
	if code != 0 || !strings.Contains(stdout, "1 file checked: 0 errors, 0 warnings, 0 infos; 1 file skipped as not GPU configs; no GPU config recognised") {
		t.Errorf("code %d:\n%s", code, stdout)
	}
	write(t, dir, "docs/ds.json", cleanDS)
	stdout, _, _ = run(t, false, nil, "lint", filepath.Join(dir, "docs"))
	if !strings.Contains(stdout, "2 files checked: 0 errors, 0 warnings, 0 infos; 1 file skipped as not GPU configs\n") {
		t.Errorf("mixed:\n%s", stdout)
	}
}

// TestConftestPolicyDirRefused: a policy directory with no gpulint rule
// would check nothing; it is an error saying what gpulint reads.
func TestConftestPolicyDirRefused(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy")
	write(t, pol, "deny.rego", "package main\n\ndeny contains msg if {\n  input.kind == \"Pod\"\n  msg := \"no pods\"\n}\n")
	p := write(t, dir, "ds.json", cleanDS)
	_, stderr, code := run(t, false, nil, "lint", "--policy", pol, p)
	if code != 2 || !strings.Contains(stderr, "defines no gpulint rule") || !strings.Contains(stderr, "# METADATA") {
		t.Errorf("code %d stderr %q", code, stderr)
	}
}

// TestDidYouMean: flags, rule ids and models suggest the closest name.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "ds.json", cleanDS)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"flag", []string{"lint", "--exlcude", "x", p}, "unknown flag: --exlcude (did you mean --exclude?)"},
		{"flag on fix", []string{"fix", "--wirte", p}, "(did you mean --write?)"},
		{"rule id", []string{"explain", "DS01"}, "unknown rule \"DS01\" (did you mean DS001?)"},
		{"rule slug", []string{"explain", "fp32-where-bf61"}, "(did you mean fp32-where-bf16?)"},
		{"rule id in lower case", []string{"explain", "ds01"}, "(did you mean DS001?)"},
		{"model", []string{"lint", "--model", "meta-llama/Llama-3.1-8C", p}, "(did you mean meta-llama/Llama-3.1-8B?)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, false, nil, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("code %d stderr %q, want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestActionBaseline: the Action's baseline input works as --baseline,
// resolved inside the workspace.
func TestActionBaseline(t *testing.T) {
	srv := githubtest.NewServer(t)
	a := newActionRun(t, srv.URL, pushEvent, map[string]string{"configs/ds.json": fp32DS})
	// Written from another directory than the Action runs in: paths in
	// the baseline are relative to it.
	if _, stderr, code := run(t, false, nil, "lint", "--gpu", "A100-80GB", "--write-baseline", filepath.Join(a.ws, "gpulint-baseline.json"), filepath.Join(a.ws, "configs")); code != 0 {
		t.Fatalf("write-baseline: %d %s", code, stderr)
	}
	write(t, a.ws, "configs/new.json", fp32DS)
	stdout, stderr, code := a.run(t, map[string]string{"paths": "configs", "baseline": "gpulint-baseline.json", "fail-on": "warning"})
	if code != 1 || !strings.Contains(stderr, "1 finding in the baseline gpulint-baseline.json not reported") {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if w := annotations(t, stdout)["warning"]; len(w) != 1 || !strings.Contains(w[0], "file=configs/new.json") {
		t.Errorf("annotations: %q", w)
	}
	if got := a.outputs(t)["findings"]; got != "1" {
		t.Errorf("findings output %s, want 1", got)
	}
	_, stderr, code = a.run(t, map[string]string{"paths": "configs", "baseline": "../outside.json"})
	if code != 2 || !strings.Contains(stderr, "input baseline") {
		t.Errorf("baseline outside the workspace: exit %d stderr %s", code, stderr)
	}
}
