package lint_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/policies"
)

// BenchmarkRun lints the whole corpus in-process with one and two workers,
// building the dependencies afresh each time as a run does (process start
// and report excluded): the worker speed-up without process start-up.
func BenchmarkRun(b *testing.B) {
	files, err := lint.Collect([]string{corpus.Dir(b)})
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for b.Loop() {
				d, err := lint.BuildDeps(policies.FS)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := lint.New(d, lint.Options{Workers: w}).Run(context.Background(), files); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
