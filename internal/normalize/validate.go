package normalize

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/normalize/internal/plan"
)

// Violation is one place where a document breaks its schema.
type Violation struct {
	// Path leads from the document root to the offending key or value:
	// string keys and int list indices. For a missing key it is the path of
	// the mapping that lacks it.
	Path []any
	// Message names the actual value and what is allowed; lower-case, no
	// trailing period.
	Message string
	// Severity is "error" (the framework rejects the document at start-up),
	// "warning" (it silently ignores or misreads it) or "info".
	Severity string
	// Removed marks the note on a key the framework no longer accepts
	// (@gpulint(removed=...)): whether that holds depends on the release
	// the file runs, which the pipeline judges.
	Removed bool
}

// Severities of a Violation.
const (
	SeverityError   = plan.SeverityError
	SeverityWarning = plan.SeverityWarning
	SeverityInfo    = plan.SeverityInfo
)

// schemaNames lists the schemas Validate accepts, in a fixed order.
func schemaNames() []string {
	return []string{"deepspeed", "accelerate", "vllm", "kubernetes", "mig-parted",
		"device-plugin", "workload", "gpulint-config", "gpu-catalog"}
}

// Validator checks plain Go documents (as decoded from YAML or JSON)
// against gpulint's CUE schemas, through the checks derived from them
// (plans_gen.go). Each schema's checks are built at most once, on first
// use; a Validator is safe for concurrent use.
type Validator struct {
	mu    sync.Mutex // guards plans (the map, not its contents)
	plans map[string]*lazyPlan
}

// lazyPlan is a schema's checks, built once.
type lazyPlan struct {
	once sync.Once
	p    *schemaPlan
}

// NewValidator returns a Validator for the schemas in schemas/*.cue.
func NewValidator() *Validator {
	return &Validator{plans: map[string]*lazyPlan{}}
}

// Schemas lists the schema names Validate accepts.
func (v *Validator) Schemas() []string { return schemaNames() }

// Compile builds a schema's checks now instead of on first use. The only
// error is an unknown schema name.
func (v *Validator) Compile(schema string) error {
	_, err := v.plan(schema)
	return err
}

// Validate checks doc against the named schema ("deepspeed", "accelerate",
// "vllm", "kubernetes", "mig-parted", "device-plugin", "workload",
// "gpulint-config", "gpu-catalog"). doc is a plain value: map[string]any,
// []any, string, int/int64/float64, bool or nil. Violations come sorted by
// path, then message. The error is non-nil only for an unknown schema
// name.
func (v *Validator) Validate(schema string, doc any) ([]Violation, error) {
	p, err := v.plan(schema)
	if err != nil {
		return nil, err
	}
	return p.validate(doc), nil
}

func (p *schemaPlan) validate(doc any) []Violation {
	var w walker
	w.value(p.root, fieldCtx{}, doc)
	return sortViolations(w.out)
}

func (v *Validator) plan(schema string) (*schemaPlan, error) {
	build := generatedPlan(schema)
	if build == nil {
		return nil, fmt.Errorf("validate: unknown schema %q (known: %s)", schema, strings.Join(schemaNames(), ", "))
	}
	v.mu.Lock()
	lp := v.plans[schema]
	if lp == nil {
		lp = &lazyPlan{}
		v.plans[schema] = lp
	}
	v.mu.Unlock()
	lp.once.Do(func() { lp.p = &schemaPlan{root: build()} })
	return lp.p, nil
}

// sortViolations orders violations by path, then message, and drops exact
// duplicates.
func sortViolations(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		if c := plan.ComparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Message, b.Message); c != 0 {
			return c
		}
		return strings.Compare(a.Severity, b.Severity)
	})
	return slices.CompactFunc(vs, func(a, b Violation) bool {
		return plan.ComparePaths(a.Path, b.Path) == 0 && a.Message == b.Message && a.Severity == b.Severity
	})
}

// A schemaPlan is a schema turned into a tree of Go checks, so that a
// document is validated by walking it, without CUE at run time. The trees
// are derived from the compiled CUE (schemas/*.cue) by internal/planbuild
// and committed as Go in plans_gen.go; TestGeneratedPlans fails when that
// file is stale (`go generate ./...` rewrites it, through
// internal/genplans), and the equivalence tests hold the checks' verdicts
// to CUE's own unification.
type schemaPlan struct {
	root *plan.SchemaNode
}
