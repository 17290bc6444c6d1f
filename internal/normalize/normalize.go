// Package normalize turns a parsed document of any kind into the one
// workload model described by schemas/workload.cue, recording where each
// field came from so findings about the model point at the user's key.
package normalize

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// Workload is the canonical model as a plain map (the shape of
// schemas/workload.cue) plus its provenance: for each dotted field the
// document path it was read from. A field filled by a default maps to the
// nearest user-written parent, or to the document root.
type Workload struct {
	Model map[string]any
	Paths map[string][]any
}

func newWorkload(kind, framework, role string) *Workload {
	return &Workload{
		Model: map[string]any{"kind": kind, "framework": framework, "role": role},
		Paths: map[string][]any{},
	}
}

// set stores v at a dotted field and records the path it came from.
func (w *Workload) set(field string, v any, from []any) {
	m := w.Model
	parts := strings.Split(field, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	if from != nil {
		w.Paths[field] = from
	}
}

// get returns the value at a dotted field.
func (w *Workload) get(field string) (any, bool) {
	var cur any = w.Model
	for _, p := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Get returns the value at a dotted field of the model.
func (w *Workload) Get(field string) (any, bool) { return w.get(field) }

// PathsAsAny returns the provenance map in the plain-value form OPA reads.
func (w *Workload) PathsAsAny() map[string]any {
	out := make(map[string]any, len(w.Paths))
	for k, v := range w.Paths {
		out[k] = v
	}
	return out
}

// p builds a document path.
func p(elems ...any) []any { return elems }

// lookup follows a path of string keys through nested maps.
func lookup(doc any, keys ...string) (any, bool) {
	cur := doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// asBool reads a boolean, accepting the strings frameworks accept.
func asBool(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	}
	return false, false
}

// isAuto reports the HF integrations' "auto" placeholder.
func isAuto(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(strings.TrimSpace(s), "auto")
}

// intOrAuto normalizes a batch-like value to an int64 or "auto".
func intOrAuto(v any) (any, bool) {
	if isAuto(v) {
		return "auto", true
	}
	if n, ok := value.Int(v); ok {
		return n, true
	}
	return nil, false
}

// Normalize maps a document of the given kind to the workload model.
// Kubernetes manifests are normalized per pod by the lint package, which
// also derives vLLM workloads from container command lines.
func Normalize(kind string, doc any) *Workload {
	switch kind {
	case "deepspeed":
		return DeepSpeed(doc)
	case "accelerate":
		return Accelerate(doc)
	case "vllm":
		return VLLM(doc)
	case "finetune":
		return Finetune(doc)
	case "mig":
		return newWorkload("mig", "unknown", "unknown")
	default:
		return newWorkload(kind, "unknown", "unknown")
	}
}
