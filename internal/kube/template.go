package kube

import (
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/value"
)

// Manifests in the wild are often templates: the repository renders them
// with envsubst or sed before `kubectl apply` (for example
// `envsubst < job.yaml | kubectl apply -f -`). Kubernetes itself expands
// only $(NAME) references, and only in a container's command, args and env
// values (k8s.io/api core/v1 Container.Command, EnvVar.Value;
// kubernetes-gpu.md). A $NAME or ${NAME} anywhere else would reach the API
// server as literal text - so where one sits in a place Kubernetes needs a
// real value (a GPU quantity, replicas, an image), the file is a template
// and the variable an unknown value, not an invalid one.

// placeholder matches a value that is only a shell-style variable.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\s*$`)
})

// mustache matches a value that is only a {{ NAME }} placeholder, which
// sed or a template tool replaces before apply (source reads a file holding
// one unquoted as a template; internal/source/mustache.go).
var mustache = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\{\{[^{}\n]*\}\}\s*$`)
})

// embeddedVar matches a ${NAME} or $NAME inside a longer value.
var embeddedVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)
})

// wordPlaceholder matches the stand-ins sed-style templates use for a
// value: an upper-case snake-case word (PLACEHOLDER_NUM_GPU_PER_NODE,
// GPU_COUNT) or <angle brackets>. No Kubernetes quantity or count is
// written so; an attempt at one (0.5, "500m", "all") is not matched.
var wordPlaceholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Z][A-Z0-9]*(_[A-Z0-9]+)+|<[^<>]+>)\s*$`)
})

// IsPlaceholder reports whether v, where a quantity or count belongs, is
// only a template variable: $NAME, ${NAME} or {{NAME}}, or a sed stand-in
// such as NUM_GPUS or <gpus> (surrounding blanks aside).
func IsPlaceholder(v any) bool {
	s, ok := v.(string)
	return ok && (isVariable(s) || wordPlaceholder().MatchString(s))
}

// isVariable reports whether s is only a $NAME, ${NAME} or {{NAME}}
// template variable.
func isVariable(s string) bool {
	return placeholder().MatchString(s) || mustache().MatchString(s)
}

// countKeys hold a count Kubernetes needs as a number.
var countKeys = map[string]bool{"replicas": true, "parallelism": true, "completions": true, "minReplicas": true, "maxReplicas": true}

// quantityAt reports whether path ends at a resource quantity or a count.
func quantityAt(path []any) bool {
	n := len(path)
	if n == 0 {
		return false
	}
	if k, _ := path[n-1].(string); countKeys[k] {
		return true
	}
	if n >= 2 {
		k, _ := path[n-2].(string)
		return k == "limits" || k == "requests"
	}
	return false
}

// TemplateEvidence is where a manifest shows that it is rendered before
// it is applied.
type TemplateEvidence struct {
	Value string // the value as written, e.g. "$GPU_PER_NODE"
	Path  []any  // where it sits in the document
}

// runtimeKeys hold text that a process reads at run time and may expand
// itself (a shell, Ray, an entrypoint): a variable there is no evidence of
// a template. Kubernetes expands $(NAME) in command, args and env; a shell
// in the container expands $NAME in them.
var runtimeKeys = map[string]bool{
	"command": true, "args": true, "env": true, "envFrom": true,
	"entrypoint": true, "data": true, "binaryData": true, "stringData": true,
	"runtimeEnvYAML": true, "serveConfigV2": true, "annotations": true,
}

// Template returns the first place, in document order of sorted keys,
// where a manifest holds a template variable where Kubernetes needs a real
// value: a value that is only a variable, or an image naming one, outside
// the fields a process expands at run time (runtimeKeys) and outside
// multi-line text (an embedded script or config), or a quantity or count
// that is a sed stand-in (IsPlaceholder). ok is false for a
// manifest Kubernetes could apply as written.
func Template(doc any) (TemplateEvidence, bool) {
	var found TemplateEvidence
	var ok bool
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if ok {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for _, k := range value.SortedKeys(t) {
				if runtimeKeys[k] {
					continue
				}
				walk(t[k], append(path, k))
			}
		case []any:
			for i, x := range t {
				walk(x, append(path, i))
			}
		case string:
			if strings.Contains(t, "\n") {
				return
			}
			key := ""
			if len(path) > 0 {
				key, _ = path[len(path)-1].(string)
			}
			if isVariable(t) || (key == "image" && embeddedVar().MatchString(t)) ||
				(quantityAt(path) && IsPlaceholder(t)) {
				found, ok = TemplateEvidence{Value: strings.TrimSpace(t), Path: clone(path)}, true
			}
		}
	}
	walk(doc, nil)
	return found, ok
}
