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
// Expansion here reads the env values the manifest states (ContainerEnv
// resolves $(NAME) references between them): a variable set from
// valueFrom, by the image or by the script itself is unknown, as is any
// other expansion (command substitution, ${NAME:-default}, $$ in a
// script); the value that holds it is then unknown, never a literal to
// check. In command and args a $(NAME) the env does not define is unknown
// too, though Kubernetes passes it as written: the image or a shell may
// still define it.

// kubeRef matches a Kubernetes $(NAME) reference, or the $$ escape.
var kubeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\$|\$\([A-Za-z_][A-Za-z0-9_.-]*\)`) })

// kubeRefs returns the ranges of the $(NAME) references and $$ escapes in
// an argv element, left to right as Kubernetes reads them: "$$(NAME)" is
// an escape followed by the literal text "(NAME)", so the process gets
// "$(NAME)".
func kubeRefs(s string) [][2]int {
	var out [][2]int
	for _, m := range kubeRef().FindAllStringIndex(s, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

// Kubernetes' own expansion of an env value, command or args element
// (kubernetes/kubernetes third_party/forked/golang/expansion/expand.go,
// read at commit 02604f7d): "$$" yields "$"; "$(" up to the next ")"
// names a variable, replaced by its value when the mapping defines it and
// left as written ("$(NAME)") when it does not; an unclosed "$(" and a "$"
// before any other character stay as written. An env value is expanded
// against the variables declared before it in the container's env (and
// the service-link variables); command and args against the whole env
// (pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables and
// kubecontainer.ExpandContainerCommandAndArgs).

// refState says what a container knows of a variable a $(NAME) names.
type refState uint8

const (
	refUndefined refState = iota // not defined: the reference stays as written
	refKnown                     // defined with a literal value
	refUnknown                   // defined, but its value is set at run time
)

// kubeExpand expands s as Kubernetes does, looking names up with lookup;
// ok is false when s names a variable whose value is unknown.
func kubeExpand(s string, lookup func(name string) (string, refState)) (string, bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			j := strings.IndexByte(s[i+2:], ')')
			if j < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+j]
			switch v, st := lookup(name); st {
			case refUnknown:
				return "", false
			case refKnown:
				b.WriteString(v)
			default:
				b.WriteString("$(" + name + ")")
			}
			i += 2 + j
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), true
}

// EnvVar is one entry of a container's env list as written.
type EnvVar struct {
	Name  string
	Value string
	// FromSource marks a value set from valueFrom (a Secret, a ConfigMap,
	// the downward API), unknown to a linter.
	FromSource bool
}

// ContainerEnv returns the variables of a container's env whose values
// are known, each expanded as Kubernetes expands it: a $(NAME) in a value
// is replaced by the value of a variable declared earlier in the list; a
// reference to a later or undeclared one stays as written, unless envFrom
// (hasEnvFrom) or a Service link could define it (a NAME ending in
// _SERVICE_HOST or holding _PORT), which makes it unknown. A variable whose value is unknown - from valueFrom, or naming
// an unknown one - is left out; a later entry of the same name wins.
func ContainerEnv(vars []EnvVar, hasEnvFrom bool) map[string]string {
	env := map[string]string{}
	unknown := map[string]bool{}
	lookup := func(name string) (string, refState) {
		if v, ok := env[name]; ok {
			return v, refKnown
		}
		if unknown[name] || hasEnvFrom || strings.HasSuffix(name, "_SERVICE_HOST") || strings.Contains(name, "_PORT") {
			return "", refUnknown
		}
		return "", refUndefined
	}
	for _, v := range vars {
		val, ok := v.Value, !v.FromSource
		if ok {
			val, ok = kubeExpand(v.Value, lookup)
		}
		if !ok {
			delete(env, v.Name)
			unknown[v.Name] = true
			continue
		}
		env[v.Name] = val
		delete(unknown, v.Name)
	}
	return env
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
		ref := it.text[e[0]:e[1]]
		v, ok := expandRef(ref, c.env)
		if ref == "$$" && it.tok < 0 {
			v, ok = "$", true // Kubernetes' escape; to a shell, $$ is its PID
		}
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

// behindBucket reads a model given as an object-store URL whose bucket
// alone is unknown (gs://$(MODEL_BUCKET_NAME)/qwen/qwen3-32b): the bucket
// says where the weights are kept, not which they are, so the model is
// the URL with the bucket left as written and the object path expanded.
// unknown is true (and the text empty) when anything past the bucket is
// unknown, or the value is no such URL.
func (c *Command) behindBucket(it item, from int) (text string, unknown bool) {
	v := it.text[from:]
	scheme := strings.Index(v, "://")
	if scheme <= 0 || strings.ContainsAny(v[:scheme], "$`\"'") {
		return "", true
	}
	slash := strings.IndexByte(v[scheme+3:], '/')
	if slash <= 0 {
		return "", true
	}
	objStart := from + scheme + 3 + slash
	rest, ok := c.expand(it, objStart)
	if !ok || strings.Trim(rest, "/") == "" {
		return "", true
	}
	return it.text[from:objStart] + rest, false
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
