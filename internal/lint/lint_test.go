package lint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/policies"
)

func newLinter(t testing.TB, opts lint.Options) *lint.Linter {
	t.Helper()
	deps, err := lint.BuildDeps(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return lint.New(deps, opts)
}

var knownKinds = map[source.Kind]bool{
	source.KindDeepSpeed: true, source.KindAccelerate: true, source.KindVLLM: true,
	source.KindKubernetes: true, source.KindMIG: true, source.KindFinetune: true, source.KindHelm: true, source.KindUnknown: true,
}

// TestCorpus lints every corpus file: none may make gpulint fail, every
// file gets a kind, every parse error carries a line, and every finding
// lies inside its file. The per-file kinds and rule counts are a golden
// file, so a change in what gpulint says about real configs shows in
// review.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	files, err := lint.Collect([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 355 {
		t.Fatalf("collected %d corpus files, want all 355", len(files))
	}
	l := newLinter(t, lint.Options{})
	res, err := l.Run(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, fr := range res.Files {
		if !knownKinds[fr.Kind] {
			t.Errorf("%s: kind %q", fr.Path, fr.Kind)
		}
		counts := map[string]int{}
		for _, f := range fr.Findings {
			counts[f.Slug]++
			if f.Range.Start.Line < 1 || f.Range.Start.Col < 1 {
				t.Errorf("%s: %s finding without a position: %+v", fr.Path, f.Slug, f.Range)
			}
			if f.Range.Start.Offset > len(fr.Data) || f.Range.End.Offset > len(fr.Data) || f.Range.End.Offset < f.Range.Start.Offset {
				t.Errorf("%s: %s range %+v outside the file (%d bytes)", fr.Path, f.Slug, f.Range, len(fr.Data))
			}
		}
		var parts []string
		for _, k := range sortedKeys(counts) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
		}
		rel, _ := filepath.Rel(dir, fr.Path)
		fmt.Fprintf(&b, "%s\t%s\t%s\n", filepath.ToSlash(rel), fr.Kind, strings.Join(parts, " "))
	}
	golden.Check(t, filepath.Join("testdata", "corpus.golden"), []byte(b.String()))
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func writeFiles(t *testing.T, files map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return dir, paths
}

type placed struct {
	File string
	Line int
	Col  int
	Slug string
}

func places(dir string, fs []finding.Finding) []placed {
	var out []placed
	for _, f := range fs {
		out = append(out, placed{filepath.Base(f.Range.File), f.Range.Start.Line, f.Range.Start.Col, f.Slug})
	}
	_ = dir
	return out
}

// TestPositions checks findings land on the offending key, in the right
// document of a multi-document file.
func TestPositions(t *testing.T) {
	tests := []struct {
		name    string
		content string
		opts    lint.Options
		want    []placed
	}{
		{
			name: "key in the third document",
			content: `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: Service
metadata: {name: b}
---
apiVersion: v1
kind: Pod
metadata: {name: c}
spec:
  containers:
    - name: app
      image: app:1
      resources:
        limits:
          nvidia.com/mig-2g.20gb: 2
`,
			want: []placed{{"m.yaml", 18, 11, "mig-over-partitioned"}},
		},
		{
			name: "flag token inside a sh -c script",
			content: `apiVersion: v1
kind: Pod
metadata: {name: s}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:latest
      command: ["/bin/sh", "-c"]
      args:
        - |
          pip list && vllm serve Qwen/Qwen2.5-7B-Instruct \
            --dtype float32 --port 8000
`,
			opts: lint.Options{GPU: "A100-80GB"},
			want: []placed{{"m.yaml", 12, 13, "fp32-where-bf16"}, {"m.yaml", 12, 13, "tuned-settings"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, paths := writeFiles(t, map[string]string{"m.yaml": tc.content})
			res, err := newLinter(t, tc.opts).Run(context.Background(), paths)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, places(dir, res.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBadFileAmongGood: one broken file does not stop the others from
// being linted and reported.
func TestBadFileAmongGood(t *testing.T) {
	dir, paths := writeFiles(t, map[string]string{
		"a.json":      `{"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": false}}`,
		"broken.json": "{\n  \"train_batch_size\": 8,\n  \"fp16\": {\"enabled\": true,,}\n}\n",
		"c.yaml":      "distributed_type: MULTI_GPU\nmixed_precision: 'no'\nnum_processes: 2\n",
	})
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{
		{"a.json", 1, 48, "fp32-where-bf16"},
		{"broken.json", 3, 28, "parse-error"},
		{"c.yaml", 2, 1, "fp32-where-bf16"},
	}
	if diff := cmp.Diff(want, places(dir, res.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	kinds := map[string]source.Kind{}
	for _, f := range res.Files {
		kinds[filepath.Base(f.Path)] = f.Kind
	}
	if diff := cmp.Diff(map[string]source.Kind{"a.json": "deepspeed", "broken.json": "deepspeed", "c.yaml": "accelerate"}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// TestHostileInput: malformed, huge, binary and adversarial files yield a
// finding or a clean result quickly, never a panic, a hang or an error.
func TestHostileInput(t *testing.T) {
	var deep strings.Builder
	for i := 0; i < 200_000; i++ {
		deep.WriteByte('[')
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("l%d", i)
		bomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	bomb += "distributed_type: MULTI_GPU\n"
	big := "{\"train_batch_size\": 8, \"pad\": \"" + strings.Repeat("x", 11<<20) + "\"}"
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i * 7919 % 256)
	}
	cases := map[string]string{
		"deep.json":       deep.String(),
		"deep.yaml":       "a: " + deep.String(),
		"bomb.yaml":       bomb,
		"big.json":        big,
		"garbage.json":    string(garbage),
		"badutf8.yaml":    "distributed_type: MULTI_GPU\nmixed_precision: \"\xff\xfe\"\n",
		"bom.json":        "\ufeff{\"train_micro_batch_size_per_gpu\": 2, \"bf16\": {\"enabled\": true}}",
		"crlf.yaml":       "distributed_type: MULTI_GPU\r\nmixed_precision: bf16\r\nnum_processes: 2\r\n",
		"dupkeys.json":    `{"train_batch_size": 8, "train_batch_size": 16, "bf16": {"enabled": true}}`,
		"wrongtypes.json": `{"train_batch_size": "eight", "zero_optimization": {"stage": [3]}, "bf16": "yes", "fp16": 7}`,
		"wrongtypes.yaml": "distributed_type: [1, 2]\nmixed_precision: {a: b}\nnum_processes: many\n",
		"empty.yaml":      "",
		"spaces.json":     "   \n\t\n",
		"nul.yaml":        "a: b\x00c\n",
		"k8s-wrong.yaml":  "apiVersion: v1\nkind: Pod\nspec:\n  containers: 7\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: x, resources: {limits: {nvidia.com/gpu: [1]}}}]\n",
	}
	dir := t.TempDir()
	var paths []string
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	l := newLinter(t, lint.Options{})
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			start := time.Now()
			res, err := l.Run(context.Background(), []string{p})
			if err != nil {
				t.Fatalf("error instead of a finding: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			for _, f := range res.Findings {
				if f.Range.File != p || f.Range.Start.Line < 1 {
					t.Errorf("finding not placed in the file: %+v", f)
				}
			}
		})
	}
	// The ones gpulint must refuse say so: a limit for what is too big or
	// too deep, a parse error for what is not text.
	for name, want := range map[string]string{
		"deep.json": "limit-exceeded", "deep.yaml": "limit-exceeded", "bomb.yaml": "limit-exceeded",
		"big.json": "limit-exceeded", "garbage.json": "parse-error", "nul.yaml": "parse-error",
	} {
		res, err := l.Run(context.Background(), []string{filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) == 0 || res.Findings[0].Slug != want {
			t.Errorf("%s: want a %s finding, got %+v", name, want, res.Findings)
		}
	}
}

// TestRunKeepsBytesOfReportedFiles: a run keeps the bytes of files with
// findings and of files a finding points to (here the Accelerate config
// that launches a DeepSpeed config), and drops the rest.
func TestRunKeepsBytesOfReportedFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ds.json": `{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
 "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
`,
		"accelerate.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\nnum_processes: 8\n",
		"notes.yaml":      "owner: ml-platform\n",
	}
	var paths []string
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	related := false
	for _, f := range res.Findings {
		for _, r := range f.Related {
			related = related || filepath.Base(r.Range.File) == "accelerate.yaml"
		}
	}
	if !related {
		t.Fatalf("no finding points to accelerate.yaml; the test needs one: %+v", res.Findings)
	}
	for _, fr := range res.Files {
		name := filepath.Base(fr.Path)
		keep := name != "notes.yaml"
		if got := string(fr.Data); keep && got != files[name] || !keep && fr.Data != nil {
			t.Errorf("%s (%d findings): Data = %q, want kept: %v", name, len(fr.Findings), got, keep)
		}
	}
}
