package normalize

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
)

// The builder derives Go checks from the compiled CUE. These tests hold
// the derivation to the CUE semantics: every leaf check must agree with CUE
// on a set of probe values, and every test and corpus document must be
// valid for the shipped checks (plans_gen.go) exactly when CUE accepts it.

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// probeValues are scalars worth trying against any constraint.
func probeValues(c *plan.ValueCheck) []any {
	probes := []any{nil, true, false, int64(-1), int64(0), int64(1), int64(2), int64(3), int64(4),
		int64(7), int64(8), int64(16), int64(65535), int64(65536), int64(1e9), 0.5, 1.5, -0.5, 1e-5,
		"", "auto", "none", "cpu", "nvme", "0", "0.8", "1", "1.0", "1.2", "+2", "32k", "8K", "-1", "v1",
		"NO", "no", "yes", "all", "bf16", "fp16", "fp8", "30s", "1h30m", "1g.10gb", "1g.5gb+me",
		"nvidia.com/gpu", "nvidia.com/" + strings.Repeat("x", 60), "amd.com/gpu", "x", "gfx942",
		"h100-sxm", "AdamW", "adamw", "SGD"}
	lits := c.StringLiterals(nil)
	if len(lits) > 20 {
		lits = lits[:20]
	}
	for _, l := range lits {
		probes = append(probes, l, strings.ToUpper(l))
	}
	return probes
}

func TestChecksMatchCUE(t *testing.T) {
	for _, s := range schemaNames() {
		t.Run(s, func(t *testing.T) {
			b := builtSchemas(t)[s]
			leaves := 0
			for _, n := range allNodes(b.Root) {
				var c *plan.ValueCheck
				switch {
				case n.Kind == plan.NodeLeaf:
					c = n.Check
				case n.Kind == plan.NodeUnion && n.LeafAlt != nil:
					c = n.LeafAlt.Check
				default:
					continue
				}
				val := b.Value(n)
				leaves++
				for _, probe := range probeValues(c) {
					got := c.Ok(probe)
					want := b.CUEValid(val, probe) == nil
					if got != want {
						t.Errorf("%s: Go check says %v for %s, CUE says %v (constraint %v)", s, got, plan.RenderValue(probe), want, val)
					}
				}
			}
			if leaves == 0 {
				t.Errorf("%s: no leaf checks found", s)
			}
		})
	}
}

// noteMessage matches the violations that report a key's presence
// (deprecated or removed) rather than a schema error: CUE accepts those.
var noteMessage = regexp.MustCompile(`^\S+ (is deprecated: |was removed in )`)

func TestDocumentsMatchCUE(t *testing.T) {
	v := newTestValidator(t)
	type doc struct {
		name, schema string
		value        any
	}
	var docs []doc
	for _, group := range [][]schemaCase{deepSpeedCases(), accelerateCases(), vllmCases(), kubernetesCases(), migCases(), projectCases()} {
		for _, tc := range group {
			docs = append(docs, doc{tc.name, tc.schema, parseYAML(t, tc.doc)})
		}
	}
	for _, s := range benchSchemas() {
		docs = append(docs, doc{"bench " + s, s, benchDoc(t, s)})
	}
	corpusDir := corpus.Dir(t)
	for _, kind := range []string{"deepspeed", "accelerate", "mig", "vllm"} {
		entries, err := os.ReadDir(filepath.Join(corpusDir, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(corpusDir, kind, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range corpusDocs(kind, e.Name(), data) {
				docs = append(docs, doc{e.Name() + d.where, d.schema, d.doc})
			}
		}
	}
	for _, d := range docs {
		vs, err := v.Validate(d.schema, d.value)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		goValid := true
		for _, x := range vs {
			if !noteMessage.MatchString(x.Message) {
				goValid = false
			}
		}
		b := builtSchemas(t)[d.schema]
		cerr := b.CUEValid(b.Def, d.value)
		if goValid != (cerr == nil) {
			t.Errorf("%s (%s): Go walk valid=%v %q, CUE valid=%v: %v", d.name, d.schema, goValid, renderViolations(vs), cerr == nil, cerr)
		}
	}
}
