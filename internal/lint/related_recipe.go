package lint

import (
	"os"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/source"
)

// refDeepSpeed is the name rules give the DeepSpeed config a fine-tuning
// recipe names, in a finding's related list.
const refDeepSpeed = "deepspeed"

// relatedDoc is another file a subject is checked with: the DeepSpeed
// config a recipe's deepspeed: key names.
type relatedDoc struct {
	relatedSource
	value any
	work  *normalize.Workload
}

// input renders the related config for the rules (input.related.<ref>).
func (r *relatedDoc) input(written string) map[string]any {
	return map[string]any{
		"file":     written,
		"path":     r.path,
		"doc":      r.value,
		"workload": r.work.Model,
		"paths":    r.work.PathsAsAny(),
	}
}

// recipeDeepSpeed reads the DeepSpeed config a fine-tuning recipe names,
// if it exists and is one, from where the recipe's tool would look
// (recipe.DeepSpeedCandidates). Its ZeRO stage and offload join the
// recipe's workload (recipe.MergeDeepSpeed); the whole config goes to the
// rules as input.related.deepspeed.
func (l *Linter) recipeDeepSpeed(s *subject) {
	written := recipe.DeepSpeedPath(s.work)
	if written == "" {
		return
	}
	lim, _ := l.limits(l.project(s.file.Path))
	for _, p := range recipe.DeepSpeedCandidates(s.file.Path, written) {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
		if err != nil {
			return
		}
		f, err := source.Parse(p, data, lim)
		if err != nil || len(f.Docs) == 0 || f.Docs[0].Root == nil || source.Detect(f) != source.KindDeepSpeed {
			return
		}
		value, err := f.Docs[0].Root.ToValue(lim.MaxNodes)
		if err != nil {
			return
		}
		r := &relatedDoc{relatedSource: relatedSource{path: p, file: f}, value: value, work: normalize.DeepSpeed(value)}
		s.deepspeed = r
		recipe.MergeDeepSpeed(s.work, r.work)
		if s.extra == nil {
			s.extra = map[string]any{}
		}
		s.extra["related"] = map[string]any{refDeepSpeed: r.input(written)}
		return
	}
}
