package lint

import (
	"fmt"
	"io/fs"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/rules"
)

// BundleFile names the precompiled policy bundle in a policy tree.
const BundleFile = "bundle.bin"

// BuildDeps compiles the policies, prepares the schema validator and loads
// the catalogs. custom lists extra policy directories (a team's own
// rules); they run in the same sandbox.
func BuildDeps(policies fs.FS, custom ...fs.FS) (Deps, error) {
	return BuildDepsWith(DepsOptions{}, policies, custom...)
}

// DepsOptions are the settings BuildDepsWith passes to the policy engine
// and the target resolver.
type DepsOptions struct {
	// PolicyMemory bounds the Go heap while custom policies evaluate
	// (bytes; 0: check.DefaultPolicyMemory).
	PolicyMemory uint64
	// HFCache is the Hugging Face hub cache directory (the cli reads
	// HF_HUB_CACHE, HF_HOME and the home directory): a model id found
	// there is read from its snapshot before the catalog. Empty: none.
	HFCache string
}

// BuildDepsWith is BuildDeps with settings for the policy engine.
func BuildDepsWith(o DepsOptions, policies fs.FS, custom ...fs.FS) (Deps, error) {
	// The GPU and model catalogs load beside the policies (each about a
	// millisecond or two of a one-file run).
	type resolved struct {
		r   *TargetResolver
		err error
	}
	targets := make(chan resolved, 1) // buffered: an early return leaves no goroutine blocked
	go func() {
		r, err := NewTargetResolver()
		if r != nil {
			r.hfCache = o.HFCache
		}
		targets <- resolved{r, err}
	}()
	// The built-in policies precompiled (see check.BuildBundle), with their
	// metadata already read; absent or stale, they are read from source.
	bundle, _ := fs.ReadFile(policies, BundleFile)
	mods, err := rules.ParseModulesCached(policies, false, check.BundleMetadata(bundle))
	if err != nil {
		return Deps{}, fmt.Errorf("load policies: %w", err)
	}
	for _, c := range custom {
		cm, err := rules.ParseModules(c, true)
		if err != nil {
			return Deps{}, fmt.Errorf("load custom policies: %w", err)
		}
		mods = append(mods, cm...)
	}
	cat, err := rules.Load(mods)
	if err != nil {
		return Deps{}, err
	}
	opts := []check.Option{check.WithPolicyMemory(o.PolicyMemory)}
	if bundle != nil {
		opts = append(opts, check.WithBundle(bundle))
	}
	eng, err := check.New(mods, cat, opts...)
	if err != nil {
		return Deps{}, err
	}
	d := Deps{Catalog: cat, Engine: eng, Validator: normalize.NewValidator()}
	tr := <-targets
	if tr.err != nil {
		return Deps{}, tr.err
	}
	d.Targets = tr.r
	return d, nil
}
