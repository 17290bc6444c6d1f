package lint

import (
	"os"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/source"
)

// refDeepSpeed is the name rules give the DeepSpeed config a fine-tuning
// recipe or an Accelerate config names, in a finding's related list.
const refDeepSpeed = "deepspeed"

// refDeepSpeedLenient names, in a finding's related list, the places where
// that DeepSpeed config relies on hjson syntax: path [i] is the i-th entry
// of input.related.deepspeed.lenient.
const refDeepSpeedLenient = "deepspeed.lenient"

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
		"lenient":  r.lenient(),
	}
}

// lenient lists where the config uses syntax only DeepSpeed's hjson
// reader accepts (comments, trailing commas), in file order.
func (r *relatedDoc) lenient() []any {
	out := make([]any, 0, len(r.file.Lenient))
	for _, n := range r.file.Lenient {
		out = append(out, map[string]any{"what": n.What, "line": int64(n.Pos.Line), "col": int64(n.Pos.Col)})
	}
	return out
}

// locateLenient returns the range of the i-th lenient-syntax place: the
// comment's or trailing comma's first character.
func (r *relatedDoc) locateLenient(path []any) finding.Range {
	if len(path) == 1 {
		if i, ok := path[0].(int); ok && i >= 0 && i < len(r.file.Lenient) {
			p := r.file.Lenient[i].Pos
			end := p
			end.Col++
			end.Offset++
			return finding.Range{File: r.path, Start: p, End: end}
		}
	}
	return r.file.Docs[0].Root.Range(r.path)
}

// recipeDeepSpeed reads the DeepSpeed config a fine-tuning recipe or an
// Accelerate config names, if it exists and is one, from where the tool
// would look (recipe.DeepSpeedCandidates); the whole config goes to the
// rules as input.related.deepspeed. A recipe's workload also takes its
// ZeRO stage and offload (recipe.MergeDeepSpeed); an Accelerate config's
// does not, as Accelerate's own keys are what its rules read.
func (l *Linter) recipeDeepSpeed(s *subject) {
	written := recipe.DeepSpeedPath(s.work)
	if written == "" {
		return
	}
	lim, _ := l.limits(l.project(s.file.Path))
	for _, p := range recipe.DeepSpeedCandidates(s.file.Path, written) {
		// The first candidate that is a file is the one read: each tried
		// until then may appear, and it may change or go away.
		s.lookups.add(fileProbe(p))
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
		if s.kind == string(source.KindFinetune) {
			recipe.MergeDeepSpeed(s.work, r.work)
		}
		if s.extra == nil {
			s.extra = map[string]any{}
		}
		s.extra["related"] = map[string]any{refDeepSpeed: r.input(written)}
		return
	}
}
