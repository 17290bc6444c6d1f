package lint_test

import (
	"context"
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
