package lint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/source"
)

// FuzzLintBytes drives the whole pipeline - detection, normalization,
// schema validation, rule evaluation, path-to-position mapping and fix
// generation - with arbitrary content under each kind's usual file name.
// Invariants: no panic, no error, every finding lies inside the file, and
// every fix's edits are valid edits of the file.
func FuzzLintBytes(f *testing.F) {
	seeds := []string{
		`{"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": false}, "zero_optimization": {"stage": 3}}`,
		"distributed_type: MULTI_GPU\nmixed_precision: 'no'\nnum_processes: 8\n",
		"model: meta-llama/Llama-3.1-8B-Instruct\ndtype: float32\nmax-num-seqs: 2\n",
		"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: v\n    image: vllm/vllm-openai\n    args: [\"m\", \"--dtype=float32\", \"--max-num-seqs\", \"1\"]\n    resources: {limits: {nvidia.com/mig-1g.10gb: 2}}\n",
		"version: v1\nmig-configs:\n  a:\n  - devices: all\n    mig-enabled: true\n    mig-devices: {\"4g.40gb\": 2}\n",
		"mixed_precision: 'no' # gpulint:ignore fp32-where-bf16 reason\ndistributed_type: MULTI_GPU\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	l := newLinter(f, lint.Options{GPU: "H100", GPUs: 8, Model: "meta-llama/Llama-3.1-8B"})
	names := []string{"config.json", "config.yaml"}
	f.Fuzz(func(t *testing.T, data []byte, nameIdx uint8) {
		dir := t.TempDir()
		path := filepath.Join(dir, names[int(nameIdx)%len(names)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fr, err := l.LintBytes(context.Background(), path, data)
		if err != nil {
			t.Fatalf("error instead of findings: %v", err)
		}
		for _, fd := range fr.Findings {
			r := fd.Range
			if r.Start.Offset < 0 || r.End.Offset > len(data)+1 || r.End.Offset < r.Start.Offset || r.Start.Line < 1 || r.Start.Col < 1 {
				t.Fatalf("%s: range %+v outside the %d-byte file", fd.Slug, r, len(data))
			}
			for _, fx := range fd.Fixes {
				if err := edit.Validate(data, path, fx.Edits); err != nil {
					t.Fatalf("%s: invalid fix %q: %v", fd.Slug, fx.Message, err)
				}
				out, err := edit.Apply(data, fx.Edits)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := source.Parse(path, out, source.DefaultLimits()); err != nil {
					if _, orig := source.Parse(path, data, source.DefaultLimits()); orig == nil {
						t.Fatalf("%s: fix %q turns a file that parses into one that does not: %v", fd.Slug, fx.Message, err)
					}
				}
			}
		}
	})
}
