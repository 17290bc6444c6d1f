package lint_test

import (
	"context"
	"fmt"
	"path/filepath"
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

// BenchmarkFixCached prices Fix's distrust of the result cache: over a
// warm cache, fix lints every file with findings again instead of
// applying cached edits. Compare fix/warm with lint/warm (what fix cost
// before, less applying the edits) and with fix/cold.
func BenchmarkFixCached(b *testing.B) {
	files, err := lint.Collect([]string{filepath.Join("..", "..", "examples")})
	if err != nil {
		b.Fatal(err)
	}
	d, err := lint.BuildDeps(policies.FS)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	warm := lint.New(d, lint.Options{Workers: 1, Cache: lint.NewCache(b.TempDir(), []byte("bench"))})
	if _, err := warm.Run(ctx, files); err != nil {
		b.Fatal(err)
	}
	cold := lint.New(d, lint.Options{Workers: 1})
	fix := func(b *testing.B, l *lint.Linter) {
		res, err := l.Run(ctx, files)
		if err != nil {
			b.Fatal(err)
		}
		for _, fr := range res.Files {
			if _, err := l.Fix(ctx, fr, false); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("lint/cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := cold.Run(ctx, files); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lint/warm", func(b *testing.B) {
		for b.Loop() {
			if _, err := warm.Run(ctx, files); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fix/cold", func(b *testing.B) {
		for b.Loop() {
			fix(b, cold)
		}
	})
	b.Run("fix/warm", func(b *testing.B) {
		for b.Loop() {
			fix(b, warm)
		}
	})
}

// BenchmarkWarmRun prices a warm run as a new process sees it: the
// result cache filled, but a fresh Linter each time, so every context
// lookup a cached result must re-check (cache.go) is paid again rather
// than remembered from the run before. <set>/cold is the same run
// without the cache.
func BenchmarkWarmRun(b *testing.B) {
	d, err := lint.BuildDeps(policies.FS)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, set := range []struct{ name, dir string }{
		{"examples", filepath.Join("..", "..", "examples")},
		{"realworld", filepath.Join("..", "..", "testdata", "realworld")},
	} {
		files, err := lint.Collect([]string{set.dir})
		if err != nil {
			b.Fatal(err)
		}
		cache := lint.NewCache(b.TempDir(), []byte("bench"))
		if _, err := lint.New(d, lint.Options{Workers: 1, Cache: cache}).Run(ctx, files); err != nil {
			b.Fatal(err)
		}
		b.Run(set.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := lint.New(d, lint.Options{Workers: 1, Cache: cache}).Run(ctx, files); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(set.name+"/cold", func(b *testing.B) {
			for b.Loop() {
				if _, err := lint.New(d, lint.Options{Workers: 1}).Run(ctx, files); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
