package lint

import (
	"os"
	"path/filepath"

	"github.com/gpulint/gpulint/internal/normalize"
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

// recipeCandidates lists where a recipe's relative deepspeed path may
// lie: beside the recipe, in the recipe's parent directories (tools such
// as LLaMA-Factory resolve it against the repository root they run from),
// and in the working directory. Paths keep the recipe path's form
// (relative stays relative), so findings name them as the user does.
func recipeCandidates(recipe, written string) []string {
	if filepath.IsAbs(written) {
		return []string{written}
	}
	var out []string
	dir := filepath.Dir(recipe)
	for i := 0; i < 16; i++ {
		out = append(out, filepath.Join(dir, written))
		parent := filepath.Join(dir, "..")
		if filepath.IsAbs(dir) && filepath.Dir(dir) == dir {
			break // the file system root
		}
		dir = parent
	}
	return append(out, filepath.Clean(written))
}

// recipeDeepSpeed reads the DeepSpeed config a fine-tuning recipe names,
// if it exists and is one. Its ZeRO stage and offload are recorded in
// the recipe's workload (at the recipe's deepspeed key), so the memory
// model sizes the run as it will be launched; the whole config goes to
// the rules as input.related.deepspeed.
func (l *Linter) recipeDeepSpeed(s *subject) {
	v, ok := s.work.Get("deepspeed_config_file")
	written, _ := v.(string)
	if !ok || written == "" {
		return
	}
	lim, _ := l.limits(l.project(s.file.Path))
	for _, p := range recipeCandidates(s.file.Path, written) {
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
		at := s.work.Paths["deepspeed_config_file"]
		for _, field := range []string{"zero.stage", "zero.offload_optimizer", "zero.offload_param"} {
			if x, ok := r.work.Get(field); ok {
				s.work.Model["zero"] = setIn(s.work.Model["zero"], field[len("zero."):], x)
				s.work.Paths[field] = at
			}
		}
		if s.extra == nil {
			s.extra = map[string]any{}
		}
		s.extra["related"] = map[string]any{refDeepSpeed: r.input(written)}
		return
	}
}

// setIn sets key in a map held as any, creating the map.
func setIn(m any, key string, v any) map[string]any {
	out, ok := m.(map[string]any)
	if !ok {
		out = map[string]any{}
	}
	out[key] = v
	return out
}
