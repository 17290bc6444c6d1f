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

// TestCacheLauncher: a DeepSpeed file's result depends on the Accelerate
// config that launches it (its process count is the world size). A
// launcher that appears, changes or goes away beside an unchanged file is
// never answered from the cache.
func TestCacheLauncher(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"GPULINT_CACHE_DIR": t.TempDir()}
	ds := write(t, dir, "ds.json", `{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
 "gradient_accumulation_steps": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
`)
	launcher := func(procs string) {
		write(t, dir, "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"+
			"deepspeed_config:\n  deepspeed_config_file: ds.json\nnum_machines: 1\nnum_processes: "+procs+"\nmixed_precision: bf16\n")
	}
	lintDS := func() string {
		t.Helper()
		out, stderr, code := run(t, false, env, "lint", "--fail-on", "never", ds)
		if code != 0 || stderr != "" {
			t.Fatalf("code %d stderr %q", code, stderr)
		}
		return out
	}
	const mismatch = "batch-size-mismatch"
	if out := lintDS(); strings.Contains(out, mismatch) {
		t.Fatalf("without a launcher the world size is unknown, yet:\n%s", out)
	}
	launcher("2")
	if out := lintDS(); !strings.Contains(out, mismatch) {
		t.Errorf("a launcher that appeared was answered from the cache:\n%s", out)
	}
	launcher("8")
	if out := lintDS(); strings.Contains(out, mismatch) {
		t.Errorf("a changed launcher was answered from the cache:\n%s", out)
	}
	launcher("2")
	if out := lintDS(); !strings.Contains(out, mismatch) {
		t.Errorf("a changed launcher was answered from the cache:\n%s", out)
	}
	if err := os.Remove(filepath.Join(dir, "acc.yaml")); err != nil {
		t.Fatal(err)
	}
	if out := lintDS(); strings.Contains(out, mismatch) {
		t.Errorf("a removed launcher was answered from the cache:\n%s", out)
	}
}
