package cli

import (
	"fmt"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/rules"
)

// Deps are the compiled policies, schemas and catalogs of one run.
type Deps struct {
	Modules   []rules.Module
	Catalog   *rules.Catalog
	Engine    *check.Engine
	Validator *normalize.Validator
	Targets   *lint.TargetResolver
}

// Deps compiles the embedded assets once. A failure here is gpulint's own
// bug (the embedded bundle is tested), so it is an internal error.
func (f *Factory) Deps() (*Deps, error) {
	f.once.Do(func() {
		d := &Deps{}
		mods, err := rules.ParseModules(f.Assets.Policies, false)
		if err != nil {
			f.err = fmt.Errorf("load policies: %w", err)
			return
		}
		d.Modules = mods
		if d.Catalog, err = rules.Load(mods); err != nil {
			f.err = err
			return
		}
		if d.Engine, err = check.New(mods, d.Catalog); err != nil {
			f.err = err
			return
		}
		if f.Assets.Schemas != nil {
			d.Validator = normalize.NewValidator(f.Assets.Schemas)
		}
		if d.Targets, err = lint.NewTargetResolver(); err != nil {
			f.err = err
			return
		}
		f.deps = d
	})
	return f.deps, f.err
}

// lintDeps adapts Deps for the lint package.
func (d *Deps) lintDeps() lint.Deps {
	return lint.Deps{Catalog: d.Catalog, Engine: d.Engine, Validator: d.Validator, Targets: d.Targets}
}
