package lint

import (
	"path/filepath"

	"github.com/gpulint/gpulint/internal/finding"
)

// The launch graph, the Accelerate launchers and the ConfigMap sources
// are read by absolute path, so the locations they give a verdict are
// absolute. A reader sees every location the way the run's own paths were
// given: relativePaths rewrites them once, where a file's result is
// complete, so no renderer (text, JSON, SARIF, the PR comment) has to.

// relativePaths writes every absolute location of fr - its findings'
// ranges, related locations and evidence, and its sizing's related files
// - relative the way fr.Path is written. A run given absolute paths keeps
// absolute ones.
func relativePaths(fr *FileResult) {
	if filepath.IsAbs(fr.Path) {
		return
	}
	abs, err := filepath.Abs(fr.Path)
	if err != nil {
		return
	}
	show := func(file string) string { return displayPath(fr.Path, abs, file) }
	for i := range fr.Findings {
		f := &fr.Findings[i]
		f.Range.File = show(f.Range.File)
		if len(f.Related) > 0 {
			rel := make([]finding.Related, len(f.Related))
			for j, r := range f.Related {
				r.Range.File = show(r.Range.File)
				rel[j] = r
			}
			f.Related = rel
		}
		if len(f.Evidence) > 0 {
			ev := make([]finding.Input, len(f.Evidence))
			for j, e := range f.Evidence {
				if e.Range != nil && filepath.IsAbs(e.Range.File) {
					r := *e.Range // the range may be shared with other findings
					r.File = show(r.File)
					e.Range = &r
				}
				ev[j] = e
			}
			f.Evidence = ev
		}
	}
	if fr.Sizing != nil && len(fr.Sizing.Related) > 0 {
		z := *fr.Sizing
		z.Related = make([]SizingSource, len(fr.Sizing.Related))
		for j, r := range fr.Sizing.Related {
			r.File = show(r.File)
			z.Related[j] = r
		}
		fr.Sizing = &z
	}
}

// displayPath renders target as the user would see it beside the linted
// file written as path (absolute abs): relative when path was. A target
// already relative is left as it is.
func displayPath(path, abs, target string) string {
	if filepath.IsAbs(path) || !filepath.IsAbs(target) {
		return target
	}
	rel, err := filepath.Rel(filepath.Dir(abs), target)
	if err != nil {
		return target
	}
	return filepath.Join(filepath.Dir(path), rel)
}
