package normalize

import (
	"fmt"
	"slices"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
)

// fieldCtx is what the walker knows about the position of a value: the
// declared field that holds it (for its @gpulint attributes) and the
// struct around it.
type fieldCtx struct {
	f      *plan.SchemaField
	parent *plan.SchemaNode
}

// walker validates one document against a plan, collecting violations.
type walker struct {
	out  []Violation
	path []any
}

func (w *walker) emit(sev, msg string) {
	w.out = append(w.out, Violation{Path: slices.Clone(w.path), Message: msg, Severity: sev})
}

func (w *walker) push(e any) { w.path = append(w.path, e) }
func (w *walker) pop()       { w.path = w.path[:len(w.path)-1] }

func (w *walker) value(n *plan.SchemaNode, fc fieldCtx, doc any) {
	switch n.Kind {
	case plan.NodeAny:
	case plan.NodeNever:
		msg := fmt.Sprintf("%s is not allowed here", pathName(w.path))
		if fc.f != nil && fc.f.Msg != "" {
			msg = fmt.Sprintf("%s: %s", pathName(w.path), fc.f.Msg)
		}
		w.emit(fc.severity(), msg)
	case plan.NodeLeaf:
		if isComposite(doc) {
			w.mismatch(n.Desc, fc, doc)
			return
		}
		v := plan.ScalarOf(doc)
		if !n.Check.Ok(v) {
			w.badScalar(n.Desc, n.Check, fc, v)
		}
	case plan.NodeStruct:
		m, ok := asMapping(doc)
		if !ok {
			w.mismatch(n.Desc, fc, doc)
			return
		}
		w.mapping(n, m)
	case plan.NodeList:
		l, ok := doc.([]any)
		if !ok {
			w.mismatch(n.Desc, fc, doc)
			return
		}
		w.list(n, l)
	case plan.NodeUnion:
		w.union(n, fc, doc)
	}
}

func (fc fieldCtx) severity() string {
	if fc.f != nil && fc.f.Severity != "" {
		return fc.f.Severity
	}
	return SeverityError
}

func isComposite(doc any) bool {
	switch doc.(type) {
	case map[string]any, map[any]any, []any:
		return true
	}
	return false
}

// asMapping returns doc as a string-keyed map.
func asMapping(doc any) (map[string]any, bool) {
	switch m := doc.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[fmt.Sprint(k)] = v
		}
		return out, true
	}
	return nil, false
}

func (w *walker) mapping(n *plan.SchemaNode, m map[string]any) {
	start := len(w.out)
	for k, v := range m {
		w.push(k)
		switch f := n.Fields[k]; {
		case f != nil:
			w.fieldNotes(f, v)
			w.value(f.Node, fieldCtx{f: f, parent: n}, v)
		default:
			pats := n.PatternsFor(k)
			for _, pf := range pats {
				w.value(pf.Node, fieldCtx{f: pf, parent: n}, v)
			}
			if len(pats) == 0 && !n.Open {
				w.unknownKey(n, k)
			}
		}
		w.pop()
	}
	for _, r := range n.Required {
		if _, ok := m[r]; !ok {
			w.missing(n, r, m)
		}
	}
	if x := n.Exclusive; x != nil && len(w.out) == start {
		set := 0
		for _, k := range x.Keys {
			if _, ok := m[k]; ok {
				set++
			}
		}
		if set > 1 {
			w.push(x.At)
			w.emit(SeverityError, x.Msg)
			w.pop()
		}
	}
}

// fieldNotes reports a deprecated or removed key that is present.
func (w *walker) fieldNotes(f *plan.SchemaField, v any) {
	if f.When != "" && f.When != shapeOf(v) {
		return
	}
	if f.Deprecated != "" {
		w.emit(SeverityInfo, fmt.Sprintf("%s is deprecated: %s", f.Name, f.Deprecated))
	}
	if f.Removed != "" {
		w.emit(SeverityWarning, fmt.Sprintf("%s %s", f.Name, f.Removed))
		w.out[len(w.out)-1].Removed = true
	}
}

// shapeOf names a value's kind as the "when" attribute spells it.
func shapeOf(v any) string {
	switch plan.ScalarOf(v).(type) {
	case map[string]any, map[any]any:
		return "struct"
	case []any:
		return "list"
	case bool:
		return "bool"
	case string:
		return "string"
	case int64, float64:
		return "number"
	case nil:
		return "null"
	}
	return "other"
}

func (w *walker) unknownKey(n *plan.SchemaNode, k string) {
	var msg string
	if len(w.path) == 1 {
		msg = fmt.Sprintf("unknown top-level key %q", k)
	} else {
		msg = fmt.Sprintf("unknown key %q in %s", k, pathName(w.path[:len(w.path)-1]))
	}
	if s := didYouMean(k, n.Names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if n.Note != "" {
		msg += "; " + n.Note
	}
	w.emit(n.Unknown, msg)
}

func (w *walker) missing(n *plan.SchemaNode, r string, m map[string]any) {
	f := n.Fields[r]
	msg := fmt.Sprintf("missing required key %q", r)
	if len(w.path) > 0 {
		msg += " in " + pathName(w.path)
	}
	for _, lf := range n.Literals {
		if v, ok := m[lf.Name]; ok && lf.Name != r {
			msg += fmt.Sprintf(" (required when %s is %s)", lf.Name, plan.RenderValue(v))
			break
		}
	}
	if f.Msg != "" {
		msg += "; " + f.Msg
	}
	w.emit(SeverityError, msg)
}

func (w *walker) list(n *plan.SchemaNode, l []any) {
	if len(l) < len(n.Prefix) {
		w.emit(SeverityError, fmt.Sprintf("%s has %d entries; at least %d required", pathName(w.path), len(l), len(n.Prefix)))
	}
	for i, e := range l {
		en := n.Elem
		if i < len(n.Prefix) {
			en = n.Prefix[i]
		}
		w.push(i)
		if en == nil {
			w.emit(SeverityError, fmt.Sprintf("%s is not allowed: the list takes at most %d entries", pathName(w.path), len(n.Prefix)))
		} else {
			w.value(en, fieldCtx{}, e)
		}
		w.pop()
	}
}

func (w *walker) union(n *plan.SchemaNode, fc fieldCtx, doc any) {
	if m, ok := asMapping(doc); ok {
		if len(n.StructAlts) == 0 {
			w.mismatch(n.Desc, fc, doc)
			return
		}
		w.structUnion(n, fc, m)
		return
	}
	if l, ok := doc.([]any); ok {
		if len(n.ListAlts) == 0 {
			w.mismatch(n.Desc, fc, doc)
			return
		}
		w.list(n.ListAlts[0], l)
		return
	}
	v := plan.ScalarOf(doc)
	if n.LeafAlt == nil {
		w.mismatch(n.Desc, fc, v)
		return
	}
	if !n.LeafAlt.Check.Ok(v) {
		w.badScalar(n.Desc, n.LeafAlt.Check, fc, v)
	}
}

// structUnion picks among struct alternatives: first by the literal-valued
// fields (discriminators such as compute_environment or mig-enabled), then
// by trying each and keeping the one with the fewest violations.
func (w *walker) structUnion(n *plan.SchemaNode, fc fieldCtx, m map[string]any) {
	alts := n.StructAlts
	if len(alts) == 1 {
		w.mapping(alts[0], m)
		return
	}
	var eligible []*plan.SchemaNode
	for _, a := range alts {
		if w.discriminates(a, m) {
			eligible = append(eligible, a)
		}
	}
	if len(eligible) == 0 {
		if name, c := commonDiscriminator(alts); name != "" {
			if v, ok := m[name]; ok {
				w.push(name)
				w.badScalar(c.Describe(), c, fieldCtx{parent: alts[0]}, plan.ScalarOf(v))
				w.pop()
				return
			}
		}
		eligible = alts
	}
	if len(eligible) == 1 {
		w.mapping(eligible[0], m)
		return
	}
	var best []Violation
	bestScore := -1
	for _, a := range eligible {
		sub := walker{path: slices.Clone(w.path)}
		sub.mapping(a, m)
		score := 0
		for _, v := range sub.out {
			score++
			if v.Severity == SeverityError {
				score += 1000
			}
		}
		if score == 0 {
			return
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = sub.out, score
		}
	}
	if fc.f != nil && fc.f.Msg != "" {
		w.emit(fc.severity(), fmt.Sprintf("%s: %s", pathName(w.path), fc.f.Msg))
		return
	}
	w.out = append(w.out, best...)
}

// discriminates reports whether m agrees with every literal-valued field
// of alternative a.
func (w *walker) discriminates(a *plan.SchemaNode, m map[string]any) bool {
	for _, lf := range a.Literals {
		v, ok := m[lf.Name]
		if !ok {
			if lf.Required {
				return false
			}
			continue
		}
		if isComposite(v) || !lf.Lit.Ok(plan.ScalarOf(v)) {
			return false
		}
	}
	return true
}

// commonDiscriminator finds a literal-valued field present in every
// alternative and returns it with the check "any of its literals".
func commonDiscriminator(alts []*plan.SchemaNode) (string, *plan.ValueCheck) {
	for _, lf := range alts[0].Literals {
		c := &plan.ValueCheck{Op: plan.CheckOr}
		for _, a := range alts {
			f := a.Fields[lf.Name]
			if f == nil || f.Lit == nil {
				c = nil
				break
			}
			c.Args = append(c.Args, f.Lit)
		}
		if c != nil {
			return lf.Name, c
		}
	}
	return "", nil
}

// mismatch reports a value of the wrong shape (a mapping where a number
// belongs, and so on).
func (w *walker) mismatch(desc string, fc fieldCtx, doc any) {
	if fc.f != nil && fc.f.Want != "" {
		desc = fc.f.Want
	}
	msg := fmt.Sprintf("%s is %s; allowed %s", pathName(w.path), plan.RenderValue(doc), desc)
	if fc.f != nil && fc.f.Msg != "" {
		msg = fmt.Sprintf("%s is %s; %s", pathName(w.path), plan.RenderValue(doc), fc.f.Msg)
	}
	w.emit(fc.severity(), msg)
}
