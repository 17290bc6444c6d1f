package cli

import (
	"github.com/gpulint/gpulint/internal/lint"
)

// Deps compiles the embedded assets once per run. A failure here is
// gpulint's own bug (the embedded bundle is tested), so it is an internal
// error.
func (f *Factory) Deps() (*lint.Deps, error) {
	f.once.Do(func() {
		d, err := lint.BuildDeps(f.Assets.Policies, f.Assets.Schemas)
		if err != nil {
			f.err = err
			return
		}
		f.deps = &d
	})
	return f.deps, f.err
}
