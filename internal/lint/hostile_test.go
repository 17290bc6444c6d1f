package lint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpulint/gpulint/internal/lint"
)

// TestHostileTestdata runs the hostile-input set in testdata/hostile -
// alias bombs, 200,000-deep nesting, binary garbage, invalid UTF-8, BOMs,
// CRLF, duplicate keys, wrong types everywhere - plus a 40 MiB file made
// at test time: each yields findings or a clean result (never an error or
// a panic), within 10 s, and the whole set stays far below 1 GiB of
// memory.
func TestHostileTestdata(t *testing.T) {
	dir := filepath.Join("testdata", "hostile")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(dir, e.Name()))
	}
	big := filepath.Join(t.TempDir(), "forty-mib.json")
	if err := os.WriteFile(big, []byte(`{"train_batch_size": 8, "pad": "`+strings.Repeat("x", 40<<20)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, big)
	if len(files) < 20 {
		t.Fatalf("only %d hostile files", len(files))
	}

	l := newLinter(t, lint.Options{GPU: "H100", GPUs: 8, Model: "meta-llama/Llama-3.1-8B"})
	var peak uint64
	for _, f := range files {
		start := time.Now()
		res, err := l.Run(context.Background(), []string{f})
		if err != nil {
			t.Errorf("%s: error instead of a finding: %v", f, err)
			continue
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %s", f, d)
		}
		for _, fd := range res.Findings {
			if fd.Range.Start.Line < 1 || fd.Range.File != f {
				t.Errorf("%s: finding not placed in the file: %+v", f, fd)
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.Sys)
	}
	if peak > 1<<30 {
		t.Errorf("memory obtained from the OS reached %d MiB", peak>>20)
	}
	t.Logf("%d hostile files; Go runtime memory peaked at %d MiB", len(files), peak>>20)

	// The ones gpulint must refuse say so.
	for name, want := range map[string]string{
		"alias-bomb.yaml":     "limit-exceeded",
		"deep-200k.json":      "limit-exceeded",
		"deep-200k.yaml":      "limit-exceeded",
		"binary-garbage.json": "parse-error",
		"unterminated.json":   "parse-error",
	} {
		res, err := l.Run(context.Background(), []string{filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) == 0 || res.Findings[0].Slug != want {
			t.Errorf("%s: want %s, got %+v", name, want, res.Findings)
		}
	}
	res, err := l.Run(context.Background(), []string{big})
	if err != nil || len(res.Findings) != 1 || res.Findings[0].Slug != "limit-exceeded" {
		t.Errorf("40 MiB file: want one limit-exceeded finding, got %+v (%v)", res, err)
	}
}

func vllmPod(args []string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.10.1\n      args:\n")
	for _, a := range args {
		b.WriteString("        - " + a + "\n")
	}
	b.WriteString("      resources:\n        limits:\n          nvidia.com/gpu: 1\n")
	return b.String()
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestHostileGenerated holds every per-file stage to the file timeout plus
// a small constant on inputs made to be slow: megabyte-long unknown keys
// and enum values (did-you-mean), megabyte-long flags, one flag given
// 50,000 times in a container's args or an sh -c script (recognition and
// the duplicate-flag fix). Before the stages were capped these took from
// 3 s to many minutes each; now each takes well under a second, so the
// bound below is ten times what they need.
func TestHostileGenerated(t *testing.T) {
	mib := strings.Repeat("a", 1<<20)
	shc := func(script string) string {
		return strings.Replace(vllmPod([]string{`"` + script + `"`}), "      args:\n", "      command: [sh, -c]\n      args:\n", 1)
	}
	cases := []struct{ name, body string }{
		{"ds-1mib-key.json", `{"train_batch_size": 8, "` + mib + `": 1}`},
		{"ds-8x1mib-keys.json", `{"train_batch_size": 8, "zero_optimization": {"stage": 2` +
			strings.Repeat(`, "`+mib+`x": 1`, 1) + `, "b` + mib + `": 1, "c` + mib + `": 2, "d` + mib + `": 3, "e` + mib +
			`": 4, "f` + mib + `": 5, "g` + mib + `": 6, "h` + mib + `": 7}}`},
		{"acc-1mib-enum.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: " + mib + "\nmixed_precision: " + mib + "\nnum_processes: 8\n"},
		{"pod-1mib-flag.yaml", vllmPod([]string{"meta-llama/Llama-3.1-8B", "--" + mib})},
		{"pod-repeat-flag.yaml", vllmPod(append([]string{"meta-llama/Llama-3.1-8B"}, repeat("--max-num-seqs=4", 50000)...))},
		{"pod-repeat-flag-split.yaml", vllmPod(append([]string{"meta-llama/Llama-3.1-8B"}, repeat("--max-num-seqs\n        - \"4\"", 50000)...))},
		{"pod-unknown-flags.yaml", vllmPod(append([]string{"meta-llama/Llama-3.1-8B"}, repeat("--max-num-seqz=4", 50000)...))},
		{"pod-sh-c-repeat-flag.yaml", shc("vllm serve m" + strings.Repeat(" --max-num-seqs 4", 50000))},
		{"pod-sh-c-commands.yaml", shc(strings.Repeat("true; ", 50000) + "vllm serve m --max-num-seqs 4")},
	}
	const timeout = time.Second
	dir := t.TempDir()
	l := newLinter(t, lint.Options{GPU: "H100", GPUs: 8, Model: "meta-llama/Llama-3.1-8B", FileTimeout: timeout})
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			res, err := l.Run(context.Background(), []string{p})
			if err == nil && len(res.Findings) == 0 {
				err = errors.New("no findings")
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			t.Logf("%-28s %5.2fs (%d bytes)", c.name, time.Since(start).Seconds(), len(c.body))
		case <-time.After(timeout + 9*time.Second):
			// The run goes on in the background; the test has its answer.
			t.Fatalf("%s: still running after %s with a %s timeout", c.name, time.Since(start).Round(time.Second), timeout)
		}
	}
}
