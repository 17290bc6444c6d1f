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

// launchedSizing returns the tightest sizing of the recipes the manifest
// at path launches, and the files it rests on; nil when it launches none
// that the repository holds and the launch graph sizes with this
// manifest.
func (l *Linter) launchedSizing(ctx context.Context, path string) (*Sizing, []relatedFile) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil
	}
	root := l.rootFor(abs)
	var cms []configMapSource
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		cms = append(cms, l.configMapSources(d)...)
		if d == root || !within(d, root) || d == filepath.Dir(d) {
			break
		}
	}
	var best *Sizing
	var rel []relatedFile
	seen := map[string]bool{}
	for _, e := range l.launchEdges(filepath.Dir(abs)) {
		if e.src.path != abs {
			continue
		}
		for _, opt := range recipeOpts {
			o, ok := e.launch.Opts[opt]
			if !ok || !o.Known {
				continue
			}
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
			z, deps := l.recipeSizing(ctx, target, abs)
			if z == nil {
				continue
			}
			z.Related = append(z.Related,
				SizingSource{Role: "recipe", File: displayPath(path, abs, target), Line: 1},
				SizingSource{Role: "launch", File: path, Line: e.src.file.PosAt(o.Span.Start).Line})
			rel = append(rel, deps...)
			if packed != nil {
				z.Related = append(z.Related, SizingSource{Role: "configmap", File: displayPath(path, abs, packed.src.path), Line: packed.at.Start.Line})
				rel = append(rel, packed.src.digest())
			}
			best = tighter(best, z)
		}
	}
	return best, rel
}

// recipeSizing lints the recipe at target and returns its sizing when
// the launch graph sized it with the manifest at manifest, with the files
// that result rests on.
func (l *Linter) recipeSizing(ctx context.Context, target, manifest string) (*Sizing, []relatedFile) {
	lim, _ := l.limits(l.project(target))
	data, err := readLimited(target, lim.MaxBytes)
	if err != nil {
		return nil, nil
	}
	fr, err := l.LintBytes(ctx, target, data)
	if err != nil || fr.Sizing == nil || !slices.ContainsFunc(fr.related, func(r relatedFile) bool { return r.Path == manifest }) {
		return nil, nil
	}
	z := *fr.Sizing
	z.Related = slices.Clone(z.Related)
	return &z, append(slices.Clone(fr.related), relatedFile{Path: target, Sum: sha256.Sum256(data)})
}
