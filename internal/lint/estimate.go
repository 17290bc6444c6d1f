package lint

import "github.com/gpulint/gpulint/internal/normalize"

// estimate runs the memory model for a subject's workload on its target
// and renders it for the rules; nil when the target or model is unknown.
func (t Target) estimate(w *normalize.Workload) map[string]any {
	return nil
}
