// Package realworld_test holds gpulint to hand judgments on public GPU
// configs it was never tuned against (testdata/realworld). It lints the set
// in-process as a new user would (no flags, `--format json --no-cache`,
// each repository's files in a checkout of their own),
// compares every finding with judgments.tsv by (file, line, rule), and
// writes docs/accuracy.md from the result. Run with -update to rewrite
// docs/accuracy.md after judging.
package realworld_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

const (
	setDir       = "../../testdata/realworld"
	judgmentFile = setDir + "/judgments.tsv"
	sourcesFile  = setDir + "/SOURCES.tsv"
	accuracyDoc  = "../../docs/accuracy.md"
)

// Verdicts in judgments.tsv.
const (
	tp      = "TP"       // right; the test fails if it disappears
	fp      = "FP"       // wrong and still reported; mark FIXED-FP once it is gone
	fixedFP = "FIXED-FP" // wrong and no longer reported; the test fails if it comes back
	fn      = "FN"       // rule "-": the file states its hardware and got no sized verdict
	fixedFN = "FIXED-FN" // rule "-": the file states its hardware and now gets a sized verdict; the test fails if it loses it
)

// sizedRules are the rules whose verdict rests on the GPU and its memory:
// a finding from one of them is a sized verdict for its file.
var sizedRules = map[string]bool{
	"ACC001": true, "DS002": true, "DS003": true, "FT002": true, "FT003": true, "FT004": true,
	"GPU003": true, "GPU004": true, "GPU005": true, "GPU006": true, "MIG001": true,
	"TUNE001": true, "VLLM001": true, "VLLM003": true,
}

type key struct {
	file string
	line int
	rule string
}

func (k key) String() string { return fmt.Sprintf("%s:%d %s", k.file, k.line, k.rule) }

type judgment struct {
	key
	severity, verdict, reason string
}

type finding struct {
	key
	severity string
	assumed  bool // the JSON marks an input of this finding as assumed
}

func TestRealWorld(t *testing.T) {
	checkSources(t)
	findings, sizings, recordsAssumptions := lint(t)
	judged := readJudgments(t)

	got := map[key]int{}
	for _, f := range findings {
		got[f.key]++
	}
	want := map[key]int{} // TP and FP rows: findings expected today
	fixed := map[key]bool{}
	fnFiles := map[string]bool{}
	fixedFNFiles := map[string]bool{}
	for _, j := range judged {
		switch j.verdict {
		case tp, fp:
			want[j.key]++
		case fixedFP:
			fixed[j.key] = true
		case fn:
			fnFiles[j.file] = true
		case fixedFN:
			fixedFNFiles[j.file] = true
		}
	}
	sizedFiles := map[string]bool{}
	for _, f := range findings {
		if sizedRules[f.rule] {
			sizedFiles[f.file] = true
		}
	}
	for f := range sizings {
		sizedFiles[f] = true
	}

	var problems []string
	for _, j := range judged {
		switch j.verdict {
		case tp:
			if got[j.key] == 0 {
				problems = append(problems, "judged true positive disappeared: "+j.String()+" ("+j.reason+")")
			}
		case fp:
			if got[j.key] == 0 {
				problems = append(problems, "false positive no longer reported, change its verdict to FIXED-FP: "+j.String())
			}
		case fixedFP:
			if got[j.key] > 0 {
				problems = append(problems, "judged false positive came back: "+j.String()+" ("+j.reason+")")
			}
		case fn, fixedFN:
			if _, err := os.Stat(filepath.Join(setDir, j.file)); err != nil {
				problems = append(problems, j.verdict+" row names a file not in the set: "+j.file)
			}
			if j.verdict == fixedFN && !sizedFiles[j.file] {
				problems = append(problems, "file that got a sized verdict lost it: "+j.file+" ("+j.reason+")")
			}
		}
	}
	for k, n := range got {
		if n > want[k] && !fixed[k] {
			problems = append(problems, fmt.Sprintf("finding not judged yet (add a TP or FP row to judgments.tsv): %s", k))
		}
	}
	for _, f := range findings {
		if sizedRules[f.rule] && fnFiles[f.file] {
			problems = append(problems, fmt.Sprintf("%s now gets a sized verdict (%s): judge it and change the file's FN row to FIXED-FN", f.file, f))
		}
	}
	for f, z := range sizings {
		if fnFiles[f] {
			problems = append(problems, fmt.Sprintf("%s now gets a sized verdict (%s): judge it and change the file's FN row to FIXED-FN", f, z))
		}
	}
	sort.Strings(problems)
	problems = dedupe(problems)
	for _, p := range problems {
		t.Error(p)
	}

	for f := range fixedFNFiles {
		fnFiles[f] = true // both state their hardware: the denominator of zero-config sizing
	}
	doc := accuracy(findings, judged, fnFiles, sizedFiles, recordsAssumptions)
	golden.Check(t, accuracyDoc, []byte(doc))
}

// lint runs `gpulint lint --format json --no-cache testdata/realworld` in-process
// on a checkout-like copy of the set (checkout).
// It returns the findings, the files whose JSON entry carries a memory
// verdict (files[].sizing, rendered for messages), and whether the
// findings record their assumed inputs.
func lint(t *testing.T) ([]finding, map[string]string, bool) {
	t.Helper()
	dir := checkout(t)
	ios, _, out, errOut := iostreams.Test()
	cacheDir := t.TempDir()
	env := cli.Env{Getenv: func(k string) string {
		if k == "GPULINT_CACHE_DIR" {
			return cacheDir
		}
		return ""
	}}
	assets := cli.Assets{Policies: policies.FS, Schemas: schemas.FS}
	code := cli.Run([]string{"lint", "--format", "json", "--no-cache", dir}, ios, env, assets)
	if code != 0 && code != 1 {
		t.Fatalf("gpulint lint exited %d: %s", code, errOut.String())
	}
	var report struct {
		Files []struct {
			Path   string `json:"path"`
			Sizing *struct {
				GPU           string `json:"gpu"`
				Model         string `json:"model"`
				Fits          bool   `json:"fits"`
				PerGPUBytes   int64  `json:"per_gpu_bytes"`
				CapacityBytes int64  `json:"capacity_bytes"`
			} `json:"sizing"`
		} `json:"files"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, out.String())
	}
	prefix := filepath.ToSlash(dir) + "/"
	sizings := map[string]string{}
	for _, f := range report.Files {
		if z := f.Sizing; z != nil {
			sizings[strings.TrimPrefix(filepath.ToSlash(f.Path), prefix)] = fmt.Sprintf("%s on %s: %.1f of %.1f GiB, fits %v",
				z.Model, z.GPU, float64(z.PerGPUBytes)/(1<<30), float64(z.CapacityBytes)/(1<<30), z.Fits)
		}
	}
	var found []finding
	records := false
	for _, m := range report.Findings {
		file, _ := m["file"].(string)
		line, _ := m["line"].(float64)
		rule, _ := m["rule"].(string)
		sev, _ := m["severity"].(string)
		f := finding{key: key{strings.TrimPrefix(filepath.ToSlash(file), prefix), int(line), rule}, severity: sev}
		for _, name := range []string{"assumed", "assumptions", "evidence", "inputs"} {
			if v, ok := m[name]; ok {
				records = true
				f.assumed = f.assumed || mentionsAssumed(v)
			}
		}
		found = append(found, f)
	}
	return found, sizings, records
}

// checkout copies the set into a temporary directory where each
// <owner>__<repo> directory is a repository root, as in the user's clone
// of that repository: it holds a .git directory (empty; gpulint reads only
// that it is there). The launch graph joins the files of one repository,
// a manifest in k8s/ with the recipe in config/, as it would in the clone;
// nothing else is added (no .gpulint.yaml: that would be configuration).
func checkout(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(setDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(setDir, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			if strings.Contains(d.Name(), "__") && filepath.Dir(rel) == "." {
				return os.Mkdir(filepath.Join(to, ".git"), 0o755)
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy the set as checkouts: %v", err)
	}
	return dst
}

// mentionsAssumed reports whether a JSON value marks an input as assumed:
// true, or any string or key mentioning "assum".
func mentionsAssumed(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.Contains(strings.ToLower(x), "assum")
	case []any:
		for _, e := range x {
			if mentionsAssumed(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.Contains(strings.ToLower(k), "assum") && e != false && e != nil {
				return true
			}
			if mentionsAssumed(e) {
				return true
			}
		}
	}
	return false
}

func readJudgments(t *testing.T) []judgment {
	t.Helper()
	var js []judgment
	for i, rec := range readTSV(t, judgmentFile, 6) {
		line, err := strconv.Atoi(rec[1])
		if err != nil {
			t.Fatalf("%s:%d: line %q is not a number", judgmentFile, i+2, rec[1])
		}
		j := judgment{key: key{rec[0], line, rec[2]}, severity: rec[3], verdict: rec[4], reason: rec[5]}
		switch j.verdict {
		case tp, fp, fixedFP, fn, fixedFN:
		default:
			t.Fatalf("%s:%d: verdict %q is not TP, FP, FIXED-FP, FN or FIXED-FN", judgmentFile, i+2, j.verdict)
		}
		if strings.TrimSpace(j.reason) == "" {
			t.Errorf("%s:%d: %s has no reason", judgmentFile, i+2, j.key)
		}
		js = append(js, j)
	}
	return js
}

// checkSources holds the set to SOURCES.tsv: every config listed, byte-for-byte
// (sha256), with a licence file for its repository.
func checkSources(t *testing.T) {
	t.Helper()
	listed := map[string]bool{}
	for i, rec := range readTSV(t, sourcesFile, 7) {
		dir, path, licence, sum := rec[0], rec[2], rec[4], rec[5]
		rel := dir + "/" + path
		listed[rel] = true
		b, err := os.ReadFile(filepath.Join(setDir, rel))
		if err != nil {
			t.Errorf("%s:%d: %v", sourcesFile, i+2, err)
			continue
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s changed: sha256 no longer matches SOURCES.tsv (the set is byte copies; never edit it)", rel)
		}
		if licence == "" {
			t.Errorf("%s:%d: no licence", sourcesFile, i+2)
		}
		if _, err := os.Stat(filepath.Join(setDir, "LICENSES", dir+".txt")); err != nil {
			t.Errorf("%s: no LICENSES/%s.txt", rel, dir)
		}
	}
	err := filepath.WalkDir(setDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(setDir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "LICENSES" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(rel, "/") {
			return nil // SOURCES.tsv, judgments.tsv, README.md
		}
		if !listed[rel] {
			t.Errorf("%s is in the set but not in SOURCES.tsv", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readTSV(t *testing.T, path string, cols int) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if n == 1 || sc.Text() == "" {
			continue // header
		}
		rec := strings.Split(sc.Text(), "\t")
		if len(rec) != cols {
			t.Fatalf("%s:%d: %d columns, want %d", path, n, len(rec), cols)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

type tally struct{ tp, fp int }

func (c tally) precision() string {
	if c.tp+c.fp == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(c.tp)/float64(c.tp+c.fp))
}

// accuracy renders docs/accuracy.md from today's findings and their judgments.
// A file is sized when a sized rule fired on it or the JSON output carries
// its memory verdict (sizedFiles), whether or not the workload fits.
func accuracy(findings []finding, judged []judgment, fnFiles, sizedFiles map[string]bool, recordsAssumptions bool) string {
	verdict := map[key][]string{}
	for _, j := range judged {
		if j.verdict == tp || j.verdict == fp {
			verdict[j.key] = append(verdict[j.key], j.verdict)
		}
	}
	severities := []string{"error", "warning", "info"}
	byRule := map[string]map[string]*tally{}
	bySev := map[string]*tally{"all": {}}
	for _, s := range severities {
		bySev[s] = &tally{}
	}
	used := map[key]int{}
	assumed := 0
	sized := map[string]bool{}
	for _, f := range findings {
		vs := verdict[f.key]
		if used[f.key] >= len(vs) {
			continue // not judged yet; the test reports it
		}
		v := vs[used[f.key]]
		used[f.key]++
		if byRule[f.rule] == nil {
			byRule[f.rule] = map[string]*tally{"all": {}}
		}
		for _, s := range []string{f.severity, "all"} {
			if byRule[f.rule][s] == nil {
				byRule[f.rule][s] = &tally{}
			}
			if bySev[s] == nil {
				bySev[s] = &tally{}
			}
			if v == tp {
				byRule[f.rule][s].tp++
				bySev[s].tp++
			} else {
				byRule[f.rule][s].fp++
				bySev[s].fp++
			}
		}
		if f.assumed {
			assumed++
		}
		if sizedRules[f.rule] {
			sized[f.file] = true
		}
	}

	var b strings.Builder
	b.WriteString("# Accuracy on real-world configs\n\n")
	b.WriteString("Generated by `go test ./test/realworld -update` from `testdata/realworld/judgments.tsv`; do not edit.\n")
	b.WriteString("The set is public GPU configs gpulint was never tuned against (`testdata/realworld/SOURCES.tsv`),\n")
	b.WriteString("linted with no flags (`gpulint lint --format json --no-cache testdata/realworld`), every finding\n")
	b.WriteString("judged by hand. Precision = TP / (TP + FP). The lint runs on a copy of the set in which each\n")
	b.WriteString("`<owner>__<repo>` directory is a repository root (it holds a `.git` directory, as a clone does), so the\n")
	b.WriteString("launch graph joins one repository's files - a manifest in `k8s/` with the recipe in `config/` - as in\n")
	b.WriteString("the user's checkout; nothing else is added (no `.gpulint.yaml`).\n\n")

	all := bySev["all"]
	fmt.Fprintf(&b, "**Overall precision: %s** (%d true positives, %d false positives, %d findings).\n\n", all.precision(), all.tp, all.fp, all.tp+all.fp)

	b.WriteString("## By severity\n\n| severity | TP | FP | precision |\n|---|---:|---:|---:|\n")
	for _, s := range append(severities, "all") {
		c := bySev[s]
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", s, c.tp, c.fp, c.precision())
	}

	b.WriteString("\n## By rule\n\n| rule | severity | TP | FP | precision |\n|---|---|---:|---:|---:|\n")
	rules := make([]string, 0, len(byRule))
	for r := range byRule {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	for _, r := range rules {
		for _, s := range append(severities, "all") {
			c := byRule[r][s]
			if c == nil {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", r, s, c.tp, c.fp, c.precision())
		}
	}

	b.WriteString("\n## Findings resting on assumed inputs\n\n")
	if recordsAssumptions {
		fmt.Fprintf(&b, "%d of %d findings rest on an assumed input (as the JSON output marks it).\n", assumed, all.tp+all.fp)
	} else {
		b.WriteString("Not yet recorded: the JSON output does not say which inputs a finding assumed.\n")
	}

	hw := map[string]bool{}
	for f := range fnFiles {
		hw[f] = true
	}
	for f := range sizedFiles {
		sized[f] = true
	}
	for f := range sized {
		hw[f] = true
	}
	b.WriteString("\n## Zero-config sizing\n\n")
	if len(hw) == 0 {
		b.WriteString("No file in the set states its hardware.\n")
	} else {
		fmt.Fprintf(&b, "%d of %d files that state or imply their hardware (a GPU node selector or label, an instance type, a comment naming the GPUs) got a sized verdict with no flags (%.0f%%): a sized rule fired, or the JSON output's `files[].sizing` carries the memory estimate, whether or not the workload fits. Files without one are the `FN` rows of `judgments.tsv`.\n",
			len(sized), len(hw), 100*float64(len(sized))/float64(len(hw)))
	}
	return b.String()
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
