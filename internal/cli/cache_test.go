package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheNeverStale: a warm cache returns the same results, and a change
// to the file, a policy, the target or the project file is never answered
// from the cache.
func TestCacheNeverStale(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	env := map[string]string{"GPULINT_CACHE_DIR": cache}
	cfg := write(t, dir, "train/ds.json", fp32DS)
	pol := filepath.Join(dir, "policies")
	write(t, dir, "policies/probe.rego", strings.Replace(sandboxPolicy(`	input.kind == "deepspeed"`), `"message": "probe"`, `"message": "probe v1"`, 1))

	lintOut := func(args ...string) string {
		t.Helper()
		out, stderr, code := run(t, false, env, append([]string{"lint", "--fail-on", "never", "--policy", pol}, args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("code %d stderr %q", code, stderr)
		}
		return out
	}
	entries := func() int {
		n := 0
		filepath.WalkDir(cache, func(_ string, d os.DirEntry, _ error) error {
			if d != nil && !d.IsDir() {
				n++
			}
			return nil
		})
		return n
	}

	cold := lintOut("--gpu", "H100", cfg)
	if entries() != 1 {
		t.Fatalf("%d cache entries after the first run, want 1", entries())
	}
	if warm := lintOut("--gpu", "H100", cfg); warm != cold {
		t.Fatalf("warm run differs:\n%s\nvs\n%s", warm, cold)
	}
	if entries() != 1 {
		t.Fatalf("a warm run wrote %d entries", entries())
	}

	// Another target.
	if out := lintOut("--gpu", "T4", cfg); !strings.Contains(out, "T4 has no BF16") {
		t.Errorf("target change answered from the cache:\n%s", out)
	}
	// A changed policy.
	write(t, dir, "policies/probe.rego", strings.Replace(sandboxPolicy(`	input.kind == "deepspeed"`), `"message": "probe"`, `"message": "probe v2"`, 1))
	if out := lintOut("--gpu", "H100", cfg); !strings.Contains(out, "probe v2") {
		t.Errorf("policy change answered from the cache:\n%s", out)
	}
	// A changed project file (a related file: it sets rules and targets).
	write(t, dir, ".gpulint.yaml", "rules:\n  fp32-where-bf16: off\n")
	if out := lintOut("--gpu", "H100", cfg); strings.Contains(out, "fp32-where-bf16") {
		t.Errorf("project file change answered from the cache:\n%s", out)
	}
	// A changed file.
	write(t, dir, "train/ds.json", cleanDS)
	write(t, dir, ".gpulint.yaml", "{}\n")
	if out := lintOut("--gpu", "H100", cfg); strings.Contains(out, "fp32-where-bf16") {
		t.Errorf("file change answered from the cache:\n%s", out)
	}
	// --no-cache neither reads nor writes.
	before := entries()
	out, _, _ := run(t, false, env, "lint", "--no-cache", "--fail-on", "never", cfg)
	if entries() != before || !strings.Contains(out, "1 file checked") {
		t.Errorf("--no-cache touched the cache (%d -> %d entries)", before, entries())
	}
}
