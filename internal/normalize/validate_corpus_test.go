package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/golden"

	"gopkg.in/yaml.v3"
)

// TestCorpus validates every parseable file of the corpus in
// testdata/corpus with its schema and compares the violations with
// testdata/corpus_<kind>.golden.
func TestCorpus(t *testing.T) {
	corpusDir := corpus.Dir(t)
	v := newTestValidator(t)
	for _, kind := range []string{"deepspeed", "accelerate", "mig", "vllm", "kubernetes"} {
		t.Run(kind, func(t *testing.T) {
			var files []string
			dirs := []string{kind}
			if kind == "kubernetes" { // manifests also make up most of the vllm directory
				dirs = append(dirs, "vllm")
			}
			for _, d := range dirs {
				entries, err := os.ReadDir(filepath.Join(corpusDir, d))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					files = append(files, filepath.Join(d, e.Name()))
				}
			}
			var b strings.Builder
			for _, name := range files {
				data, err := os.ReadFile(filepath.Join(corpusDir, name))
				if err != nil {
					t.Fatal(err)
				}
				docs := corpusDocs(kind, filepath.Base(name), data)
				for _, d := range docs {
					vs, err := v.Validate(d.schema, d.doc)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					fmt.Fprintf(&b, "== %s%s (%s): %d\n", name, d.where, d.schema, len(vs))
					for _, x := range vs {
						fmt.Fprintf(&b, "%s [%s] %s\n", renderPath(x.Path), x.Severity, x.Message)
					}
				}
			}
			golden.Check(t, filepath.Join("testdata", "corpus_"+kind+".golden"), []byte(b.String()))
		})
	}
}

type corpusDoc struct {
	schema string
	where  string // which embedded document, if not the file itself
	doc    any
}

// corpusDocs parses a corpus file into the documents to validate. Files
// that do not parse are skipped (they are the parser's business).
func corpusDocs(kind, name string, data []byte) []corpusDoc {
	switch kind {
	case "deepspeed":
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil
		}
		return []corpusDoc{{schema: "deepspeed", doc: doc}}
	case "accelerate":
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil
		}
		return []corpusDoc{{schema: "accelerate", doc: doc}}
	case "vllm":
		// Only plain `vllm serve --config` files: a flat mapping of
		// options (no Kubernetes manifests, no Helm values).
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil || doc == nil {
			return nil
		}
		out := map[string]any{}
		for k, val := range doc {
			if _, nested := val.(map[string]any); nested {
				return nil
			}
			out[kebabKey(k)] = val
		}
		return []corpusDoc{{schema: "vllm", doc: out}}
	case "kubernetes":
		var out []corpusDoc
		for i, doc := range yamlDocs(data) {
			if m, ok := doc.(map[string]any); ok && m["apiVersion"] != nil && m["kind"] != nil {
				out = append(out, corpusDoc{schema: "kubernetes", where: fmt.Sprintf(" doc %d", i), doc: doc})
			}
		}
		return out
	case "mig":
		var out []corpusDoc
		for i, doc := range yamlDocs(data) {
			out = append(out, migDocs(doc, fmt.Sprintf(" doc %d", i))...)
		}
		return out
	}
	return nil
}

// yamlDocs decodes every document of a multi-document YAML stream.
func yamlDocs(data []byte) []any {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []any
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			return out
		}
		out = append(out, doc)
	}
}

// migDocs finds mig-parted and device-plugin configs in a document: the
// document itself, or YAML held in strings (ConfigMap data, Helm values).
func migDocs(doc any, where string) []corpusDoc {
	if m, ok := doc.(map[string]any); ok && m["version"] != nil {
		if m["mig-configs"] != nil {
			return []corpusDoc{{schema: "mig-parted", where: where, doc: doc}}
		}
		return []corpusDoc{{schema: "device-plugin", where: where, doc: doc}}
	}
	var out []corpusDoc
	switch x := doc.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, migDocs(x[k], where+"."+k)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, migDocs(e, fmt.Sprintf("%s[%d]", where, i))...)
		}
	case string:
		if strings.Contains(x, "version:") {
			var inner any
			if yaml.Unmarshal([]byte(x), &inner) == nil {
				if _, ok := inner.(map[string]any); ok {
					return migDocs(inner, where)
				}
			}
		}
	}
	return out
}

var camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// kebabKey rewrites snake_case and camelCase option names to kebab-case,
// as gpulint's caller does before validating a vLLM config.
func kebabKey(k string) string {
	k = camelBoundary.ReplaceAllString(k, "$1-$2")
	return strings.ToLower(strings.ReplaceAll(k, "_", "-"))
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// renderPath prints a violation path as a.b[0]."key.with.dots".
func renderPath(path []any) string {
	var b strings.Builder
	for i, e := range path {
		switch x := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		default:
			s := fmt.Sprint(x)
			if i > 0 {
				b.WriteByte('.')
			}
			if !plainKey.MatchString(s) {
				s = fmt.Sprintf("%q", s)
			}
			b.WriteString(s)
		}
	}
	if b.Len() == 0 {
		return "(root)"
	}
	return b.String()
}

func newTestValidator(t testing.TB) *Validator {
	t.Helper()
	return NewValidator()
}
