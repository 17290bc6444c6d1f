package cmdline

import (
	"regexp"
	"strings"
	"sync"
)

// A container's command and args reach the process in two steps, both of
// which expand variables from the container's environment:
//
//  1. Kubernetes replaces $(NAME) in command and args with the value of
//     env NAME; $$ escapes a $, and a reference to an undefined variable
//     is left as written (k8s.io/api core/v1 Container.Command and
//     Container.Args docs; kubernetes-gpu.md).
//  2. A shell run with -c expands $NAME and ${NAME} (POSIX Shell Command
//     Language, 2.6.2 Parameter Expansion) from its environment, which the
//     container's env populates.
//
// Expansion here reads the literal env values only: a variable set from
// valueFrom, by the image or by the script itself is unknown, as is any
// other expansion (command substitution, ${NAME:-default}); the value that
// holds it is then unknown, never a literal to check.

// kubeRef matches a Kubernetes $(NAME) reference, or the $$ escape.
var kubeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\$|\$\([A-Za-z_][A-Za-z0-9_.-]*\)`) })

// kubeRefs returns the ranges of the $(NAME) references in an argv element.
func kubeRefs(s string) [][2]int {
	var out [][2]int
	for _, m := range kubeRef().FindAllStringIndex(s, -1) {
		if s[m[0]:m[1]] != "$$" {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

// shellVar matches $NAME and ${NAME}.
var shellVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})$`)
})

// expandRef returns the value of one expansion as written ($NAME, ${NAME},
// $(NAME)) from env; ok is false when it cannot be known.
func expandRef(ref string, env map[string]string) (string, bool) {
	var name string
	switch {
	case shellVar().MatchString(ref):
		name = strings.Trim(ref[1:], "{}")
	case strings.HasPrefix(ref, "$(") && strings.HasSuffix(ref, ")") && kubeRef().MatchString(ref) && len(kubeRef().FindString(ref)) == len(ref):
		name = ref[2 : len(ref)-1]
	default:
		return "", false
	}
	v, ok := env[name]
	return v, ok
}

// expand returns it.text[from:] with every expansion replaced by its value
// from the container's env; ok is false when any of them is unknown.
func (c *Command) expand(it item, from int) (string, bool) {
	var b strings.Builder
	at := from
	for _, e := range it.exps {
		if e[1] <= from {
			continue
		}
		if e[0] < from {
			return "", false
		}
		v, ok := expandRef(it.text[e[0]:e[1]], c.env)
		if !ok {
			return "", false
		}
		b.WriteString(it.text[at:e[0]])
		b.WriteString(v)
		at = e[1]
	}
	b.WriteString(it.text[at:])
	return b.String(), true
}

// expandValue expands it.text[from:]; unknown is true (and the text empty)
// when it cannot be known.
func (c *Command) expandValue(it item, from int) (text string, unknown bool) {
	v, ok := c.expand(it, from)
	if !ok {
		return "", true
	}
	return v, false
}

// Unknown lists the options whose value is set at run time from something
// the manifest does not state (see Flag.Unknown), "model" included when the
// model is; Config leaves them out.
func (c *Command) Unknown() []string {
	var out []string
	if c.modelUnknown {
		out = append(out, "model")
	}
	for _, f := range c.Flags {
		if f.Unknown && f.Name != "model" {
			out = append(out, f.Name)
		}
	}
	return out
}
