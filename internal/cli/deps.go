package cli

import (
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
)

// Deps compiles the embedded assets once per run. A failure here is
// gpulint's own bug (the embedded bundle is tested), so it is an internal
// error.
func (f *Factory) Deps() (*lint.Deps, error) {
	f.once.Do(func() {
		d, err := lint.BuildDepsWith(lint.DepsOptions{HFCache: hfHubCache(f.Env)}, f.Assets.Policies)
		if err != nil {
			f.err = err
			return
		}
		d.Validator = f.Validator()
		f.deps = &d
	})
	return f.deps, f.err
}

// Validator returns the run's schema validator. It exists before the
// other dependencies, so that a short run can start building the
// schemas it will need while they are built (see prepareRun).
func (f *Factory) Validator() *normalize.Validator {
	f.validatorOnce.Do(func() { f.validator = normalize.NewValidator() })
	return f.validator
}
