package lint

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"slices"

	"github.com/gpulint/gpulint/internal/cmdline"
)

// A manifest whose container launches a recipe the repository holds
// (axolotl, LLaMA-Factory, torchtune, trl, a Trainer recipe) gets the
// recipe's memory verdict in its files[].sizing: the estimate the recipe
// gets when the launch graph sizes it with this manifest's GPU. The
// recipe, the launch command and, where the container reads the recipe
// from a ConfigMap, the statement that packs it there are the sizing's
// related locations.

// recipeOpts are the launch options that name a recipe.
var recipeOpts = []string{cmdline.OptRecipe, cmdline.OptScriptConfig}

// launchedTarget is a recipe of the repository that a manifest's
// container launches.
type launchedTarget struct {
	target string // the recipe (absolute)
	opt    string // the launch option that names it
	line   int    // the launch's line in the manifest
	// packed is the statement that packs the recipe into the ConfigMap
	// the container reads it from; nil when the launch names its path.
	packed *configMapSource
}

// launchedTargets lists the recipes the manifest at abs launches, in the
// order of its launches.
func (l *Linter) launchedTargets(abs string) []launchedTarget {
	ts, _ := l.launchedRecipes(abs)
	return ts
}

// launchedRecipes is launchedTargets, and whether the manifest's own
// commands name a recipe at all: only then can the answer change while
// the manifest does not (the recipe or the ConfigMap that packs it
// appears or goes away).
func (l *Linter) launchedRecipes(abs string) ([]launchedTarget, bool) {
	root := l.rootFor(abs)
	var cms []configMapSource
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		cms = append(cms, l.configMapSources(d)...)
		if d == root || !within(d, root) || d == filepath.Dir(d) {
			break
		}
	}
	var out []launchedTarget
	seen := map[string]bool{}
	named := false
	for _, e := range l.launchEdges(filepath.Dir(abs)) {
		if e.src.path != abs {
			continue
		}
		for _, opt := range recipeOpts {
			o, ok := e.launch.Opts[opt]
			if !ok || !o.Known {
				continue
			}
			named = true
			var target string
			var packed *configMapSource
			if ref, ok := e.mounted[opt]; ok {
				target, packed = ref.packed(cms, root)
			} else {
				target = existing(o.Value, abs, root)
			}
			if target == "" || seen[target] {
				continue
			}
			seen[target] = true
			out = append(out, launchedTarget{target: target, opt: opt, line: e.src.file.PosAt(o.Span.Start).Line, packed: packed})
		}
	}
	return out, named
}

// launchedSizing returns the tightest sizing of the recipes the manifest
// at path launches, and what it rests on: which recipes those are
// (launchedProbe) and what each recipe's result rests on, sized or not;
// nil sizing when it launches none that the repository holds and the
// launch graph sizes with this manifest.
func (l *Linter) launchedSizing(ctx context.Context, path string) (*Sizing, []relatedFile) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil
	}
	ts, named := l.launchedRecipes(abs)
	var rel []relatedFile
	if named {
		rel = append(rel, relatedFile{Probe: probeLaunched, Path: abs, Sum: launchedSum(ts)})
	}
	var best *Sizing
	for _, t := range ts {
		z, deps := l.recipeSizing(ctx, t.target, abs)
		rel = append(rel, deps...)
		if z == nil {
			continue
		}
		z.Related = append(z.Related,
			SizingSource{Role: "recipe", File: displayPath(path, abs, t.target), Line: 1},
			SizingSource{Role: "launch", File: path, Line: t.line})
		if t.packed != nil {
			z.Related = append(z.Related, SizingSource{Role: "configmap", File: displayPath(path, abs, t.packed.src.path), Line: t.packed.at.Start.Line})
		}
		best = tighter(best, z)
	}
	return best, rel
}

// recipeSizing lints the recipe at target and returns its sizing when
// the launch graph sized it with the manifest at manifest, and, sized or
// not, what that result rests on: the recipe and its own context.
func (l *Linter) recipeSizing(ctx context.Context, target, manifest string) (*Sizing, []relatedFile) {
	lim, _ := l.limits(l.project(target))
	data, err := readLimited(target, lim.MaxBytes)
	if err != nil {
		return nil, []relatedFile{fileProbe(target)}
	}
	fr, err := l.LintBytes(ctx, target, data)
	deps := []relatedFile{{Path: target, Sum: sha256.Sum256(data)}}
	if err != nil {
		return nil, deps
	}
	deps = append(deps, fr.related...)
	if fr.Sizing == nil || !slices.ContainsFunc(fr.related, func(r relatedFile) bool { return r.Path == manifest && r.Probe == "" }) {
		return nil, deps
	}
	z := *fr.Sizing
	z.Related = slices.Clone(z.Related)
	return &z, deps
}
