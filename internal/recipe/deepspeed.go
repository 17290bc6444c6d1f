package recipe

import (
	"path/filepath"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/value"
)

// deepspeedField is the workload field a recipe's deepspeed key is
// normalized to.
const deepspeedField = "deepspeed_config_file"

// DeepSpeedPath is the DeepSpeed config a recipe names, as written; ""
// when it names none.
func DeepSpeedPath(w *normalize.Workload) string {
	v, _ := w.Get(deepspeedField)
	return value.String(v)
}

// DeepSpeedCandidates lists where a recipe's relative deepspeed path may
// lie: beside the recipe, in the recipe's parent directories (tools such
// as LLaMA-Factory resolve it against the repository root they run from),
// and in the working directory. Paths keep the recipe path's form
// (relative stays relative), so findings name them as the user does.
func DeepSpeedCandidates(recipe, written string) []string {
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

// MergeDeepSpeed records the ZeRO stage, offload and ZeRO-3 gathering
// settings of the DeepSpeed
// config a recipe names in the recipe's workload, at the recipe's
// deepspeed key, so the memory model sizes the run as it will be
// launched.
func MergeDeepSpeed(w, ds *normalize.Workload) {
	at := w.Paths[deepspeedField]
	for _, field := range []string{"zero.stage", "zero.offload_optimizer", "zero.offload_param",
		"zero.max_live_parameters", "zero.prefetch_bucket_size", "zero.max_reuse_distance"} {
		if x, ok := ds.Get(field); ok {
			w.Model["zero"] = setIn(w.Model["zero"], field[len("zero."):], x)
			w.Paths[field] = at
		}
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
