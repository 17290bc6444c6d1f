package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		out, stderr, code := run(t, false, env, append([]string{"lint", "--verbose", "--fail-on", "never", "--policy", pol}, args...)...)
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

// TestCacheCannotInject: a cache entry that was damaged or edited (a
// flipped byte, an edit's new text changed to inject a setting, a
// truncated file) is a miss: lint reports what the file says, fix neither
// prints nor writes the injected text, and the entry is rewritten.
func TestCacheCannotInject(t *testing.T) {
	const marker = "31337"
	tamper := []struct {
		name string
		edit func(t *testing.T, entry []byte) []byte
	}{
		{"flip a byte", func(t *testing.T, e []byte) []byte {
			i := bytes.Index(e, []byte("full FP32"))
			if i < 0 {
				t.Fatalf("no message in the entry:\n%s", e)
			}
			e[i] ^= 0x20 // "Full FP32"
			return e
		}},
		{"inject through an edit's new text", func(t *testing.T, e []byte) []byte {
			const from = `\"enabled\": true\n  }"`
			if !bytes.Contains(e, []byte(from)) {
				t.Fatalf("no edit to change in the entry:\n%s", e)
			}
			return bytes.Replace(e, []byte(from), []byte(`\"enabled\": true\n  },\n  \"gradient_clipping\": `+marker+`"`), 1)
		}},
		{"truncate", func(t *testing.T, e []byte) []byte { return e[:len(e)/2] }},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			dir, cache := t.TempDir(), t.TempDir()
			env := map[string]string{"GPULINT_CACHE_DIR": cache}
			cfg := write(t, dir, "ds.json", fp32DS)
			lint := func() string {
				t.Helper()
				out, stderr, code := run(t, false, env, "lint", "--gpu", "H100", "--fail-on", "never", cfg)
				if code != 0 || stderr != "" {
					t.Fatalf("lint: code %d stderr %q", code, stderr)
				}
				return out
			}
			cold := lint()
			entry := onlyEntry(t, cache)
			clean, err := os.ReadFile(entry)
			if err != nil {
				t.Fatal(err)
			}
			spoil := func() {
				t.Helper()
				if err := os.WriteFile(entry, tc.edit(t, bytes.Clone(clean)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rewritten := func(when string) {
				t.Helper()
				if got, _ := os.ReadFile(entry); !bytes.Equal(got, clean) {
					t.Errorf("%s: entry not rewritten:\n%s", when, got)
				}
			}

			spoil()
			if diff := cmp.Diff(cold, lint()); diff != "" {
				t.Errorf("lint over the tampered entry (-cold +got):\n%s", diff)
			}
			rewritten("lint")

			spoil()
			out, _, _ := run(t, false, env, "fix", "--gpu", "H100", "--fail-on", "never", cfg)
			if strings.Contains(out, marker) || !strings.Contains(out, `+  "bf16": {`) {
				t.Errorf("fix diff over the tampered entry:\n%s", out)
			}
			rewritten("fix")

			spoil()
			if _, stderr, code := run(t, false, env, "fix", "--write", "--gpu", "H100", "--fail-on", "never", cfg); code != 0 {
				t.Fatalf("fix --write: code %d stderr %q", code, stderr)
			}
			if got, _ := os.ReadFile(cfg); strings.Contains(string(got), marker) || !strings.Contains(string(got), `"bf16"`) {
				t.Errorf("fix --write over the tampered entry wrote:\n%s", got)
			}
		})
	}
}

// onlyEntry is the one file in a cache directory.
func onlyEntry(t *testing.T, cache string) string {
	t.Helper()
	var files []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one entry", files)
	}
	return files[0]
}
