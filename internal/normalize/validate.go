package normalize

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	_ "cuelang.org/go/pkg/strings" // the one builtin package the schemas import (mig.cue)
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
}

// Severities of a Violation.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// schemaSpec names the file and definition that hold a schema.
type schemaSpec struct {
	file, def string
}

// schemaNames lists the schemas Validate accepts, in a fixed order.
func schemaNames() []string {
	return []string{"deepspeed", "accelerate", "vllm", "kubernetes", "mig-parted",
		"device-plugin", "workload", "gpulint-config", "gpu-catalog"}
}

// lookupSchema maps a schema name to its file and root definition.
func lookupSchema(name string) (schemaSpec, bool) {
	switch name {
	case "deepspeed":
		return schemaSpec{"deepspeed.cue", "#DeepSpeed"}, true
	case "accelerate":
		return schemaSpec{"accelerate.cue", "#Accelerate"}, true
	case "vllm":
		return schemaSpec{"vllm.cue", "#VLLM"}, true
	case "kubernetes":
		return schemaSpec{"kubernetes.cue", "#Manifest"}, true
	case "mig-parted":
		return schemaSpec{"mig.cue", "#MigParted"}, true
	case "device-plugin":
		return schemaSpec{"mig.cue", "#DevicePlugin"}, true
	case "workload":
		return schemaSpec{"workload.cue", "#Workload"}, true
	case "gpulint-config":
		return schemaSpec{"config.cue", "#Config"}, true
	case "gpu-catalog":
		return schemaSpec{"gpu.cue", "#Catalog"}, true
	}
	return schemaSpec{}, false
}

// Validator checks plain Go documents (as decoded from YAML or JSON)
// against gpulint's CUE schemas. Each schema file is compiled at most once,
// on first use; a Validator is safe for concurrent use.
type Validator struct {
	fsys  fs.FS
	mu    sync.Mutex // guards files and plans (the maps, not their contents)
	files map[string]*compiledFile
	plans map[string]*lazyPlan
}

// compiledFile is one schema file compiled in its own CUE context. All CUE
// evaluation on its values after compilation happens under mu.
type compiledFile struct {
	once sync.Once
	mu   sync.Mutex
	ctx  *cue.Context
	val  cue.Value
	err  error
}

// lazyPlan is a schema's derived checks, built once.
type lazyPlan struct {
	once sync.Once
	p    *schemaPlan
	err  error
}

// NewValidator returns a Validator reading *.cue files from the root of
// fsys (schemas.FS in production).
func NewValidator(fsys fs.FS) *Validator {
	return &Validator{fsys: fsys, files: map[string]*compiledFile{}, plans: map[string]*lazyPlan{}}
}

// Schemas lists the schema names Validate accepts.
func (v *Validator) Schemas() []string { return schemaNames() }

// Compile compiles a schema now instead of on first use. It returns the
// error Validate would return for a broken schema.
func (v *Validator) Compile(schema string) error {
	_, err := v.plan(schema)
	return err
}

// Validate checks doc against the named schema ("deepspeed", "accelerate",
// "vllm", "kubernetes", "mig-parted", "device-plugin", "workload",
// "gpulint-config", "gpu-catalog"). doc is a plain value: map[string]any,
// []any, string, int/int64/float64, bool or nil. Violations come sorted by
// path, then message. The error is non-nil only when gpulint itself is
// broken: an unknown schema name or a schema that does not compile.
func (v *Validator) Validate(schema string, doc any) ([]Violation, error) {
	p, err := v.plan(schema)
	if err != nil {
		return nil, err
	}
	w := walker{p: p}
	w.value(p.root, fieldCtx{}, doc)
	if w.err != nil {
		return nil, w.err
	}
	return sortViolations(w.out), nil
}

func (v *Validator) plan(schema string) (*schemaPlan, error) {
	spec, ok := lookupSchema(schema)
	if !ok {
		return nil, fmt.Errorf("validate: unknown schema %q (known: %s)", schema, strings.Join(schemaNames(), ", "))
	}
	v.mu.Lock()
	lp := v.plans[schema]
	if lp == nil {
		lp = &lazyPlan{}
		v.plans[schema] = lp
	}
	v.mu.Unlock()
	lp.once.Do(func() {
		f := v.file(spec.file)
		if f.err != nil {
			lp.err = f.err
			return
		}
		lp.p, lp.err = buildPlan(schema, f, spec.def)
	})
	return lp.p, lp.err
}

func (v *Validator) file(name string) *compiledFile {
	v.mu.Lock()
	f := v.files[name]
	if f == nil {
		f = &compiledFile{}
		v.files[name] = f
	}
	v.mu.Unlock()
	f.once.Do(func() {
		src, err := fs.ReadFile(v.fsys, name)
		if err != nil {
			f.err = fmt.Errorf("read schema %s: %w", name, err)
			return
		}
		f.ctx = newCUEContext()
		f.val = f.ctx.CompileBytes(src, cue.Filename(name))
		if err := f.val.Err(); err != nil {
			f.err = fmt.Errorf("compile schema %s: %w", name, err)
		}
	})
	return f
}

// sortViolations orders violations by path, then message, and drops exact
// duplicates.
func sortViolations(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		if c := comparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Message, b.Message); c != 0 {
			return c
		}
		return strings.Compare(a.Severity, b.Severity)
	})
	return slices.CompactFunc(vs, func(a, b Violation) bool {
		return comparePaths(a.Path, b.Path) == 0 && a.Message == b.Message && a.Severity == b.Severity
	})
}

// comparePaths orders paths element by element: indices before keys,
// indices numerically, keys lexically, a prefix before its extensions.
func comparePaths(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aInt := a[i].(int)
		bi, bInt := b[i].(int)
		switch {
		case aInt && bInt:
			if ai != bi {
				return cmpInt(ai, bi)
			}
		case aInt:
			return -1
		case bInt:
			return 1
		default:
			if c := strings.Compare(fmt.Sprint(a[i]), fmt.Sprint(b[i])); c != 0 {
				return c
			}
		}
	}
	return cmpInt(len(a), len(b))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// newCUEContext returns a CUE context with only the builtin packages this
// binary links (see the blank imports above).
//
// cuecontext.New would be the usual way, but it links every CUE builtin
// package (crypto, net, tool/exec, text/template, ...) and, for @embed
// attributes the schemas do not use, CUE's encodings down to protobuf.
// Linking them cost every run about 1.2 ms before it read a file
// (`gpulint version` 7.6 -> 6.4 ms, perf stat -r 30) and 1.5 MiB of heap
// held by protobuf's descriptors (heap profile of a 1000-file run). A cue.Runtime initialised through its own API and converted is the
// same runtime without those links; TestCUEContextBuiltins holds the
// schemas' imports to what is linked.
func newCUEContext() *cue.Context {
	rt := new(cue.Runtime)
	rt.Compile("", "") //nolint:staticcheck // initialises the runtime; see above
	return (*cue.Context)(rt)
}
