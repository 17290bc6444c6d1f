package check_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/policies"
)

// BenchmarkPrepareKind measures what one run pays before evaluating its
// first document of a kind: the policies for that kind made ready, from
// the precompiled bundle and from source, and the first evaluation.
func BenchmarkPrepareKind(b *testing.B) {
	mods, cat := builtinModules(b)
	bundle, err := fs.ReadFile(policies.FS, policies.BundleFile)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"deepspeed", "kubernetes", "vllm"} {
		for _, mode := range []string{"bundle", "source"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				var opts []check.Option
				if mode == "bundle" {
					opts = append(opts, check.WithBundle(bundle))
				}
				b.ReportAllocs()
				for b.Loop() {
					e, err := check.New(mods, cat, opts...)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.Eval(context.Background(), kind, map[string]any{"kind": kind}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
