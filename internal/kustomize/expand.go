package kustomize

import (
	"fmt"
	"strings"
)

// expandAll fills, in every container of the build, the env entries a
// ConfigMap of the build sets (env valueFrom.configMapKeyRef, envFrom
// configMapRef) with the ConfigMap's literal values, and expands the
// $(NAME) references of command and args that name a variable whose
// value is then known, as Kubernetes does
// (https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/;
// envFrom: https://kubernetes.io/docs/tasks/configure-pod-container/configure-pod-configmap/#configure-all-key-value-pairs-in-a-configmap-as-container-environment-variables):
// a variable of env wins over one of envFrom; "$$" escapes a "$"; a
// reference to a variable whose value is unknown (a Secret, a ConfigMap
// outside the build, a key an unread env file may hold) stays as written,
// for the command-line reader to judge. A value put in place of a
// reference has its own "$" escaped, so reading the result again expands
// nothing more.
func expandAll(res []*Resource) {
	cms := map[string]*Resource{}
	for _, r := range res {
		if r.Kind == "ConfigMap" {
			cms[r.Name] = r
		}
	}
	for _, r := range res {
		if r.Kind == "ConfigMap" {
			continue
		}
		containers(r.Doc, func(c *Node) { expandContainer(c, cms) })
	}
}

type envValue struct {
	value string
	via   Via
}

func expandContainer(c *Node, cms map[string]*Resource) {
	env := c.Get("env")
	declared := map[string]bool{}
	for _, it := range env.items() {
		declared[it.Get("name").String()] = true
	}
	// from names the ConfigMap each filled variable came from.
	from := map[string]string{}
	var fromEnvFrom []*Node
	if ef := c.Get("envFrom"); ef != nil && ef.Kind == Seq {
		var kept []*Node
		for _, it := range ef.Items {
			cm := cms[it.Get("configMapRef").Get("name").String()]
			if cm == nil || cm.incomplete {
				kept = append(kept, it)
				continue
			}
			prefix := it.Get("prefix").String()
			for _, e := range cm.Doc.Get("data").entries() {
				name := prefix + e.Key
				if declared[name] || e.Value.Kind != Scalar {
					continue
				}
				item := &Node{Kind: Map, At: e.KeyAt}
				item.set("name", e.KeyAt, str(name, e.KeyAt))
				item.set("value", e.Value.At, str(e.Value.Text, e.Value.At))
				fromEnvFrom = append(fromEnvFrom, item)
				from[name] = cm.Name
			}
		}
		if len(kept) == 0 {
			c.remove("envFrom")
		} else {
			ef.Items = kept
		}
	}
	if len(fromEnvFrom) > 0 {
		if env == nil {
			env = &Node{Kind: Seq, At: fromEnvFrom[0].At}
			c.set("env", env.At, env)
		}
		env.Items = append(fromEnvFrom, env.Items...)
	}
	known := map[string]envValue{}
	for _, it := range env.items() {
		name := it.Get("name").String()
		if ref := it.Get("valueFrom").Get("configMapKeyRef"); ref != nil {
			cmName, key := ref.Get("name").String(), ref.Get("key").String()
			if cm := cms[cmName]; cm != nil {
				if v := cm.Doc.Get("data").Get(key); v != nil && v.Kind == Scalar {
					it.remove("valueFrom")
					it.set("value", v.At, str(v.Text, v.At))
					from[name] = cmName
				}
			}
		}
		v := it.Get("value")
		switch {
		case v == nil || v.Kind != Scalar || strings.Contains(v.Text, "$"):
			// Unknown, or itself expanded against earlier variables:
			// left to the command-line reader.
			delete(known, name)
		default:
			what := fmt.Sprintf("%s=%s", name, v.Text)
			if cm := from[name]; cm != "" {
				what += " from ConfigMap " + cm
			}
			known[name] = envValue{value: v.Text, via: Via{What: what, At: v.At}}
		}
	}
	for _, field := range []string{"command", "args"} {
		for _, a := range c.Get(field).items() {
			if a.Kind != Scalar || !strings.Contains(a.Text, "$(") {
				continue
			}
			a.Text, a.Via = expandRefs(a.Text, known)
			a.Value = a.Text
		}
	}
}

// entries returns a map's entries, nil for anything else.
func (n *Node) entries() []Entry {
	if n == nil || n.Kind != Map {
		return nil
	}
	return n.Entries
}

// expandRefs replaces each $(NAME) of s whose value is known, leaving
// "$$" and every other reference as written.
func expandRefs(s string, known map[string]envValue) (string, []Via) {
	var b strings.Builder
	var via []Via
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteString("$$")
			i++
			continue
		case '(':
			j := strings.IndexByte(s[i+2:], ')')
			if j < 0 {
				break
			}
			if v, ok := known[s[i+2:i+2+j]]; ok {
				b.WriteString(strings.ReplaceAll(v.value, "$", "$$"))
				via = append(via, v.via)
				i += 2 + j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), via
}
