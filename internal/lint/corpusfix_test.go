package lint_test

import (
	"context"
	"testing"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/source"
)

// TestCorpusFixTune applies every fix, tuner sizing included, to every
// corpus file for several targets, as `fix --write --tune` would: the
// result always parses, and fixing it again changes nothing.
func TestCorpusFixTune(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus-wide fix in -short mode")
	}
	dir := corpus.Dir(t)
	files, err := lint.Collect([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	targets := []lint.Options{
		{GPU: "H100-80GB", GPUs: 8, Model: "meta-llama/Llama-3.1-8B"},
		{GPU: "T4", GPUs: 1},
		{GPU: "A100-40GB", GPUs: 4, Model: "Qwen/Qwen2.5-7B-Instruct"},
	}
	ctx := context.Background()
	for _, opts := range targets {
		l := newLinter(t, opts)
		res, err := l.Run(ctx, files)
		if err != nil {
			t.Fatal(err)
		}
		changed := 0
		for _, fr := range res.Files {
			out, err := l.Fix(ctx, fr, true)
			if err != nil {
				t.Errorf("%s %s: %v", opts.GPU, fr.Path, err)
				continue
			}
			if !out.Changed() {
				continue
			}
			changed++
			if _, perr := source.Parse(fr.Path, fr.Data, source.DefaultLimits()); perr == nil {
				if _, err := source.Parse(fr.Path, out.New, source.DefaultLimits()); err != nil {
					t.Errorf("%s %s: the fixed file does not parse: %v", opts.GPU, fr.Path, err)
					continue
				}
			}
			again, err := l.LintBytes(ctx, fr.Path, out.New)
			if err != nil {
				t.Fatal(err)
			}
			out2, err := l.Fix(ctx, again, true)
			if err != nil {
				t.Fatal(err)
			}
			if out2.Changed() {
				t.Errorf("%s %s: a second fix changed the file again", opts.GPU, fr.Path)
			}
		}
		t.Logf("%s: %d of %d corpus files changed by fix --tune", opts.GPU, changed, len(res.Files))
	}
}
