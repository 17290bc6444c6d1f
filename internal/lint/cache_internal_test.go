package lint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/policies"
)

const forgedInput = `{
  "train_micro_batch_size_per_gpu": 4,
  "fp16": {"enabled": false}
}
`

// TestFixIgnoresForgedCacheEntry: the entry checksums catch damage, not
// someone who can write the cache and recompute them. Such an entry, with
// an edit that injects a setting, is reported by lint (it passes every
// check), but Fix lints the file again and applies only what the file's
// own bytes call for.
func TestFixIgnoresForgedCacheEntry(t *testing.T) {
	deps, err := BuildDeps(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ds.json")
	if err := os.WriteFile(path, []byte(forgedInput), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{GPU: "H100", Workers: 1}
	opts.Cache = NewCache(t.TempDir(), []byte("salt"))
	l := New(deps, opts)
	ctx := context.Background()

	clean, err := l.LintBytes(ctx, path, []byte(forgedInput))
	if err != nil {
		t.Fatal(err)
	}
	want, err := l.Fix(ctx, clean, false)
	if err != nil {
		t.Fatal(err)
	}
	if !want.Changed() {
		t.Fatalf("the input has nothing to fix; the test needs a fix: %+v", clean.Findings)
	}

	// Forge: every edit of every fix injects a setting; sums recomputed.
	const inject = `,
  "gradient_clipping": 31337`
	forged := clean
	forged.Findings = finding.Sort(append([]finding.Finding(nil), clean.Findings...))
	for i := range forged.Findings {
		f := &forged.Findings[i]
		f.Fixes = append([]finding.Fix(nil), f.Fixes...)
		for j := range f.Fixes {
			f.Fixes[j].Edits = append([]finding.Edit(nil), f.Fixes[j].Edits...)
			for k := range f.Fixes[j].Edits {
				f.Fixes[j].Edits[k].NewText += inject
			}
		}
	}
	data := []byte(forgedInput)
	key := opts.Cache.key(path, data, l.project(path))
	opts.Cache.put(key, data, forged, l.launcherSum(path, forged.Kind))

	res, err := l.Run(ctx, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	fr := res.Files[0]
	if !fr.cached {
		t.Fatal("the forged entry was not used; the test shows nothing")
	}
	got, err := l.Fix(ctx, fr, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got.New), "31337") {
		t.Errorf("Fix applied the forged edit:\n%s", got.New)
	}
	if diff := cmp.Diff(string(want.New), string(got.New)); diff != "" {
		t.Errorf("fixed file (-want +got):\n%s", diff)
	}
}

// TestCacheEntryChecks: get answers only an entry that is byte for byte
// what put wrote for that key and those file bytes.
func TestCacheEntryChecks(t *testing.T) {
	data := []byte(forgedInput)
	fr := FileResult{Kind: "deepspeed", Findings: []finding.Finding{{Rule: "GPU001", Message: "m", Fixes: []finding.Fix{{Message: "f", Edits: []finding.Edit{{NewText: "x"}}}}}}}
	const key, other = "aa00000000000000000000000000000000000000000000000000000000000000", "bb00000000000000000000000000000000000000000000000000000000000000"
	tests := []struct {
		name   string
		spoil  func(c *Cache, entry []byte)
		data   []byte
		wantOK bool
	}{
		{name: "as written", wantOK: true},
		{name: "other file bytes", data: []byte(forgedInput + " ")},
		{name: "flipped byte in the JSON", spoil: func(c *Cache, e []byte) {
			e[len(e)-10] ^= 1
			writeEntry(t, c, key, e)
		}},
		{name: "edited new text", spoil: func(c *Cache, e []byte) {
			writeEntry(t, c, key, []byte(strings.Replace(string(e), `"new_text":"x"`, `"new_text":"y"`, 1)))
		}},
		{name: "flipped byte in the sum", spoil: func(c *Cache, e []byte) {
			e[len(entryMagic)] ^= 1
			writeEntry(t, c, key, e)
		}},
		{name: "truncated", spoil: func(c *Cache, e []byte) { writeEntry(t, c, key, e[:len(e)-1]) }},
		{name: "header only", spoil: func(c *Cache, e []byte) { writeEntry(t, c, key, e[:len(entryMagic)+10]) }},
		{name: "copied from another key", spoil: func(c *Cache, e []byte) {
			c.put(other, data, FileResult{Kind: "deepspeed"}, nil)
			o, err := os.ReadFile(c.file(other))
			if err != nil {
				t.Fatal(err)
			}
			writeEntry(t, c, key, o)
		}},
		{name: "the old format", spoil: func(c *Cache, e []byte) {
			_, body, _ := strings.Cut(string(e), "\n")
			writeEntry(t, c, key, []byte(body))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(t.TempDir(), []byte("salt"))
			c.put(key, data, fr, nil)
			if tc.spoil != nil {
				e, err := os.ReadFile(c.file(key))
				if err != nil {
					t.Fatal(err)
				}
				tc.spoil(c, e)
			}
			d := data
			if tc.data != nil {
				d = tc.data
			}
			e, ok := c.get(key, d)
			if ok != tc.wantOK {
				t.Fatalf("get = %v, want %v", ok, tc.wantOK)
			}
			if ok && (len(e.Findings) != 1 || e.Findings[0].Fixes[0].Edits[0].NewText != "x") {
				t.Errorf("entry read back as %+v", e)
			}
		})
	}
}

func writeEntry(t *testing.T, c *Cache, key string, e []byte) {
	t.Helper()
	if err := os.WriteFile(c.file(key), e, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCacheEntryProbes: an entry carries the lookups its result
// consulted and no others, so a warm run over files that consult none
// re-asks nothing.
func TestCacheEntryProbes(t *testing.T) {
	deps, err := BuildDeps(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      nodeSelector: {%s}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
          resources: {limits: {nvidia.com/gpu: 1}}
`
	tests := []struct {
		name, file, data string
		want             []string // the entry's probe kinds, in order
	}{
		{name: "a vLLM config naming a catalog model", file: "serve.yaml",
			data: "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\n"},
		{name: "a pod on a GPU its own label states", file: "k8s.yaml",
			data: fmt.Sprintf(deploy, "cloud.google.com/gke-accelerator: nvidia-l4"), want: []string{probeKustomize}},
		{name: "a pod on a pool's label", file: "k8s.yaml",
			data: fmt.Sprintf(deploy, "NodeGroupType: gpu"), want: []string{probePool, probeKustomize}},
		{name: "a pod on a ComputeClass", file: "k8s.yaml",
			data: fmt.Sprintf(deploy, "cloud.google.com/compute-class: gpu-x1"), want: []string{probePool, probeClass, probeKustomize}},
		{name: "a DeepSpeed config", file: "ds.json",
			data: `{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true}}`, want: []string{probeLaunch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			cache := NewCache(t.TempDir(), []byte("salt"))
			l := New(deps, Options{Workers: 1, Cache: cache})
			if _, err := l.Run(context.Background(), []string{path}); err != nil {
				t.Fatal(err)
			}
			data := []byte(tc.data)
			e, ok := cache.get(cache.key(path, data, l.project(path)), data)
			if !ok {
				t.Fatal("no entry")
			}
			var got []string
			for _, r := range e.Related {
				if r.Probe != "" {
					got = append(got, r.Probe)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
		})
	}
}
