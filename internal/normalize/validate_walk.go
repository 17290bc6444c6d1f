package normalize

import (
	"fmt"
	"slices"
)

// fieldCtx is what the walker knows about the position of a value: the
// declared field that holds it (for its @gpulint attributes) and the
// struct around it.
type fieldCtx struct {
	f      *schemaField
	parent *schemaNode
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

func (w *walker) value(n *schemaNode, fc fieldCtx, doc any) {
	switch n.kind {
	case nodeAny:
	case nodeNever:
		msg := fmt.Sprintf("%s is not allowed here", pathName(w.path))
		if fc.f != nil && fc.f.msg != "" {
			msg = fmt.Sprintf("%s: %s", pathName(w.path), fc.f.msg)
		}
		w.emit(fc.severity(), msg)
	case nodeLeaf:
		if isComposite(doc) {
			w.mismatch(n.desc, fc, doc)
			return
		}
		v := scalarOf(doc)
		if !n.check.ok(v) {
			w.badScalar(n.desc, n.check, fc, v)
		}
	case nodeStruct:
		m, ok := asMapping(doc)
		if !ok {
			w.mismatch(n.desc, fc, doc)
			return
		}
		w.mapping(n, m)
	case nodeList:
		l, ok := doc.([]any)
		if !ok {
			w.mismatch(n.desc, fc, doc)
			return
		}
		w.list(n, l)
	case nodeUnion:
		w.union(n, fc, doc)
	}
}

func (fc fieldCtx) severity() string {
	if fc.f != nil && fc.f.severity != "" {
		return fc.f.severity
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

func (w *walker) mapping(n *schemaNode, m map[string]any) {
	start := len(w.out)
	for k, v := range m {
		w.push(k)
		switch f := n.fields[k]; {
		case f != nil:
			w.fieldNotes(f, v)
			w.value(f.node, fieldCtx{f: f, parent: n}, v)
		default:
			pats := n.patternsFor(k)
			for _, pf := range pats {
				w.value(pf.node, fieldCtx{f: pf, parent: n}, v)
			}
			if len(pats) == 0 && !n.open {
				w.unknownKey(n, k)
			}
		}
		w.pop()
	}
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			w.missing(n, r, m)
		}
	}
	if x := n.exclusive; x != nil && len(w.out) == start {
		set := 0
		for _, k := range x.keys {
			if _, ok := m[k]; ok {
				set++
			}
		}
		if set > 1 {
			w.push(x.at)
			w.emit(SeverityError, x.msg)
			w.pop()
		}
	}
}

// fieldNotes reports a deprecated or removed key that is present.
func (w *walker) fieldNotes(f *schemaField, v any) {
	if f.when != "" && f.when != shapeOf(v) {
		return
	}
	if f.deprecated != "" {
		w.emit(SeverityInfo, fmt.Sprintf("%s is deprecated: %s", f.name, f.deprecated))
	}
	if f.removed != "" {
		w.emit(SeverityWarning, fmt.Sprintf("%s %s", f.name, f.removed))
	}
}

// shapeOf names a value's kind as the "when" attribute spells it.
func shapeOf(v any) string {
	switch scalarOf(v).(type) {
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

func (w *walker) unknownKey(n *schemaNode, k string) {
	var msg string
	if len(w.path) == 1 {
		msg = fmt.Sprintf("unknown top-level key %q", k)
	} else {
		msg = fmt.Sprintf("unknown key %q in %s", k, pathName(w.path[:len(w.path)-1]))
	}
	if s := didYouMean(k, n.names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if n.note != "" {
		msg += "; " + n.note
	}
	w.emit(n.unknown, msg)
}

func (w *walker) missing(n *schemaNode, r string, m map[string]any) {
	f := n.fields[r]
	msg := fmt.Sprintf("missing required key %q", r)
	if len(w.path) > 0 {
		msg += " in " + pathName(w.path)
	}
	for _, lf := range n.literals {
		if v, ok := m[lf.name]; ok && lf.name != r {
			msg += fmt.Sprintf(" (required when %s is %s)", lf.name, renderValue(v))
			break
		}
	}
	if f.msg != "" {
		msg += "; " + f.msg
	}
	w.emit(SeverityError, msg)
}

func (w *walker) list(n *schemaNode, l []any) {
	if len(l) < len(n.prefix) {
		w.emit(SeverityError, fmt.Sprintf("%s has %d entries; at least %d required", pathName(w.path), len(l), len(n.prefix)))
	}
	for i, e := range l {
		en := n.elem
		if i < len(n.prefix) {
			en = n.prefix[i]
		}
		w.push(i)
		if en == nil {
			w.emit(SeverityError, fmt.Sprintf("%s is not allowed: the list takes at most %d entries", pathName(w.path), len(n.prefix)))
		} else {
			w.value(en, fieldCtx{}, e)
		}
		w.pop()
	}
}

func (w *walker) union(n *schemaNode, fc fieldCtx, doc any) {
	if m, ok := asMapping(doc); ok {
		if len(n.structAlts) == 0 {
			w.mismatch(n.desc, fc, doc)
			return
		}
		w.structUnion(n, fc, m)
		return
	}
	if l, ok := doc.([]any); ok {
		if len(n.listAlts) == 0 {
			w.mismatch(n.desc, fc, doc)
			return
		}
		w.list(n.listAlts[0], l)
		return
	}
	v := scalarOf(doc)
	if n.leafAlt == nil {
		w.mismatch(n.desc, fc, v)
		return
	}
	if !n.leafAlt.check.ok(v) {
		w.badScalar(n.desc, n.leafAlt.check, fc, v)
	}
}

// structUnion picks among struct alternatives: first by the literal-valued
// fields (discriminators such as compute_environment or mig-enabled), then
// by trying each and keeping the one with the fewest violations.
func (w *walker) structUnion(n *schemaNode, fc fieldCtx, m map[string]any) {
	alts := n.structAlts
	if len(alts) == 1 {
		w.mapping(alts[0], m)
		return
	}
	var eligible []*schemaNode
	for _, a := range alts {
		if w.discriminates(a, m) {
			eligible = append(eligible, a)
		}
	}
	if len(eligible) == 0 {
		if name, c := commonDiscriminator(alts); name != "" {
			if v, ok := m[name]; ok {
				w.push(name)
				w.badScalar(c.describe(), c, fieldCtx{parent: alts[0]}, scalarOf(v))
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
	if fc.f != nil && fc.f.msg != "" {
		w.emit(fc.severity(), fmt.Sprintf("%s: %s", pathName(w.path), fc.f.msg))
		return
	}
	w.out = append(w.out, best...)
}

// discriminates reports whether m agrees with every literal-valued field
// of alternative a.
func (w *walker) discriminates(a *schemaNode, m map[string]any) bool {
	for _, lf := range a.literals {
		v, ok := m[lf.name]
		if !ok {
			if lf.required {
				return false
			}
			continue
		}
		if isComposite(v) || !lf.lit.ok(scalarOf(v)) {
			return false
		}
	}
	return true
}

// commonDiscriminator finds a literal-valued field present in every
// alternative and returns it with the check "any of its literals".
func commonDiscriminator(alts []*schemaNode) (string, *valueCheck) {
	for _, lf := range alts[0].literals {
		c := &valueCheck{op: checkOr}
		for _, a := range alts {
			f := a.fields[lf.name]
			if f == nil || f.lit == nil {
				c = nil
				break
			}
			c.args = append(c.args, f.lit)
		}
		if c != nil {
			return lf.name, c
		}
	}
	return "", nil
}

// mismatch reports a value of the wrong shape (a mapping where a number
// belongs, and so on).
func (w *walker) mismatch(desc string, fc fieldCtx, doc any) {
	if fc.f != nil && fc.f.want != "" {
		desc = fc.f.want
	}
	msg := fmt.Sprintf("%s is %s; allowed %s", pathName(w.path), renderValue(doc), desc)
	if fc.f != nil && fc.f.msg != "" {
		msg = fmt.Sprintf("%s is %s; %s", pathName(w.path), renderValue(doc), fc.f.msg)
	}
	w.emit(fc.severity(), msg)
}
