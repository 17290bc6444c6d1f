package normalize

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
)

// cueAccepts asks CUE whether the scalar v satisfies a constraint the plan
// could not translate. Answers are memoised per check and value.
func (p *schemaPlan) cueAccepts(c *valueCheck, v any) bool {
	key := memoKey{c, v}
	p.memoMu.Lock()
	r, ok := p.memo[key]
	p.memoMu.Unlock()
	if ok {
		return r
	}
	p.file.mu.Lock()
	r = c.cue.Unify(p.file.ctx.Encode(v)).Validate(cue.Concrete(true)) == nil
	p.file.mu.Unlock()
	p.memoMu.Lock()
	if len(p.memo) < memoLimit {
		p.memo[key] = r
	}
	p.memoMu.Unlock()
	return r
}

// delegate unifies a sub-document with a struct marked @gpulint(check=cue)
// and turns CUE's errors into violations under path. Verdicts are
// memoised per node and canonical document.
func (p *schemaPlan) delegate(n *schemaNode, m map[string]any, path []any) []Violation {
	doc := canonicalDoc(m)
	b, jerr := json.Marshal(doc)
	key := delegateKey{n, string(b)}
	if jerr == nil {
		p.delMu.Lock()
		rel, ok := p.delegated[key]
		p.delMu.Unlock()
		if ok {
			return rebase(rel, path)
		}
	}
	p.file.mu.Lock()
	err := n.val.Unify(p.file.ctx.Encode(doc)).Validate(cue.Concrete(true))
	var rel []Violation
	for _, e := range errors.Errors(err) {
		rel = append(rel, cueViolation(e, doc))
	}
	rel = deepestViolations(rel)
	p.file.mu.Unlock()
	if jerr == nil {
		p.delMu.Lock()
		if len(p.delegated) < memoLimit {
			p.delegated[key] = rel
		}
		p.delMu.Unlock()
	}
	return rebase(rel, path)
}

// deepestViolations drops CUE's echoes of an error further up the tree: a
// failing field inside a disjunction ("T | null") also fails each
// alternative, reported at the parent as "empty disjunction" and
// "conflicting values". Only violations with no deeper one below them are
// kept.
func deepestViolations(vs []Violation) []Violation {
	var out []Violation
	for i, v := range vs {
		deeper := false
		for j, w := range vs {
			if i != j && len(w.Path) > len(v.Path) && comparePaths(w.Path[:len(v.Path)], v.Path) == 0 {
				deeper = true
				break
			}
		}
		if !deeper {
			out = append(out, v)
		}
	}
	return out
}

func rebase(rel []Violation, path []any) []Violation {
	out := make([]Violation, len(rel))
	for i, v := range rel {
		out[i] = Violation{Path: append(slices.Clone(path), v.Path...), Message: v.Message, Severity: v.Severity}
	}
	return out
}

// cueViolation converts a CUE error on a delegated sub-document into a
// violation with a path relative to that sub-document. CUE reports paths
// from the definition that declared the failing field, so the document
// path is the longest suffix of the error path that resolves in doc (the
// last element may be a missing key).
func cueViolation(e errors.Error, doc any) Violation {
	segs := e.Path()
	var path []any
	for i := 0; i <= len(segs); i++ {
		if p, ok := resolvePath(doc, segs[i:]); ok {
			path = p
			break
		}
	}
	format, args := e.Msg()
	msg := fmt.Sprintf(format, args...)
	if msg == "field is required but not present" && len(path) > 0 {
		msg = fmt.Sprintf("missing required key %q", fmt.Sprint(path[len(path)-1]))
		path = path[:len(path)-1]
	}
	return Violation{Path: path, Message: msg, Severity: SeverityError}
}

// resolvePath follows CUE path segments through doc; every segment but the
// last must exist.
func resolvePath(doc any, segs []string) ([]any, bool) {
	path := make([]any, 0, len(segs))
	cur := doc
	for i, s := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case []any:
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n >= len(c) {
				return nil, false
			}
			path = append(path, n)
			cur = c[n]
		case map[string]any:
			if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
				s = u
			}
			v, ok := c[s]
			if !ok && !last {
				return nil, false
			}
			path = append(path, s)
			cur = v
		default:
			return nil, false
		}
	}
	return path, true
}

// canonicalDoc copies a document into the types CUE's encoder and
// encoding/json handle, with numbers normalised as the Go checks see them.
func canonicalDoc(doc any) any {
	switch x := doc.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = canonicalDoc(v)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[fmt.Sprint(k)] = canonicalDoc(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = canonicalDoc(v)
		}
		return out
	}
	return scalarOf(doc)
}
