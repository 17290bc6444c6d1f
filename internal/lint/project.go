package lint

import "github.com/gpulint/gpulint/internal/config"

// project finds the project file for path: the explicit one if given,
// else the nearest .gpulint.yaml above the file, whether the run lints
// the file or reads it as context (a recipe a manifest launches).
func (l *Linter) project(path string) *config.Project {
	if l.opts.Project != nil {
		return l.opts.Project
	}
	if l.opts.Projects == nil {
		return nil
	}
	return l.opts.Projects.Find(path)
}
