// Package check evaluates the Rego rules over canonical documents. Policies
// are compiled once per run in a sandbox (no network, no environment, no
// nondeterministic built-ins), or loaded precompiled from the bundle the
// built-in policies ship in (bundle.go); one prepared query per document
// kind is shared by all workers and evaluated with OPA's topdown
// evaluator.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/gpulint/gpulint/internal/rules"
)

// refusedBuiltins are removed from the capabilities: they reach the
// network, the environment or the host. Every built-in OPA marks
// nondeterministic is removed too.
var refusedBuiltins = map[string]bool{
	"http.send": true, "opa.runtime": true, "net.lookup_ip_addr": true,
}

// Capabilities returns OPA's capabilities for this version without the
// built-ins a policy must not reach.
func Capabilities() *ast.Capabilities {
	return sandboxCapabilities()
}

// capabilities is Capabilities computed once; compilers only read it.
var capabilities = sync.OnceValue(sandboxCapabilities)

func sandboxCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if refusedBuiltins[b.Name] || b.Nondeterministic {
			continue
		}
		kept = append(kept, b)
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps
}

// Engine holds the policies and compiles them lazily, once per document
// kind: a run over DeepSpeed files never compiles the Kubernetes rules. It
// is safe for concurrent use.
type Engine struct {
	mods    []rules.Module
	catalog *rules.Catalog
	// parts, when set, are engines evaluated side by side whose findings
	// are merged: the precompiled built-in rules and custom policies
	// compiled from source.
	parts []*Engine
	// bundle holds the built-in policies precompiled, when one matching
	// them was given (with custom policies, the built-in part holds it).
	bundle *bundle
	// heap bounds the Go heap while custom rules evaluate.
	heap *heapGuard

	mu      sync.Mutex
	queries map[string]*preparedKind

	// all, when set up by CompileAll, is one compiler over every module
	// shared by all kinds: cheaper than one compile per kind when a run
	// meets several kinds.
	allOnce sync.Once
	all     *ast.Compiler
	allErr  error
	wantAll bool
}

// CompileAll makes the engine compile every policy once, on first use,
// instead of once per document kind. Worth it for runs over many files.
func (e *Engine) CompileAll() {
	for _, p := range e.parts {
		p.CompileAll()
	}
	e.mu.Lock()
	e.wantAll = true
	e.mu.Unlock()
}

func (e *Engine) compileAll() (*ast.Compiler, error) {
	e.allOnce.Do(func() { e.all, e.allErr = e.compile(e.mods) })
	return e.all, e.allErr
}

// compile builds a compiler over mods: from the bundle when there is one,
// else from source.
func (e *Engine) compile(mods []rules.Module) (*ast.Compiler, error) {
	if e.bundle != nil {
		return e.bundle.load(mods)
	}
	return compile(mods)
}

// Option configures an Engine.
type Option func(*engineOptions)

type engineOptions struct {
	bundle       []byte
	policyMemory uint64
}

// WithBundle gives the engine the built-in policies precompiled by
// BuildBundle. It is used only when it was built from exactly the
// built-in modules the engine is given, and beside custom policies only
// when they keep apart from the built-in packages (see separable);
// otherwise the engine compiles from source.
func WithBundle(data []byte) Option {
	return func(o *engineOptions) { o.bundle = data }
}

// Precompiled reports whether the engine evaluates the built-in policies
// precompiled.
func (e *Engine) Precompiled() bool {
	if len(e.parts) > 0 {
		return e.parts[0].Precompiled()
	}
	return e.bundle != nil
}

type preparedKind struct {
	started atomic.Bool // Warm has begun preparing
	once    sync.Once
	rules   []*rules.Rule
	query   *preparedQuery
	err     error
}

// preparedQuery is one compiled query over a compiler's rules. Evaluation
// goes through OPA's topdown evaluator directly: the rego package on top
// of it brings bundles, loaders, Wasm and protobuf into the binary, whose
// package initialisation every run paid for.
type preparedQuery struct {
	compiler *ast.Compiler
	body     ast.Body
	store    storage.Store // empty: the rules read only input
	// heap, when set, stops the evaluation once the Go heap grows past
	// its limit (see watchHeap).
	heap *heapGuard
}

// resultVar holds the query's value.
const resultVar = ast.Var("__gpulint_findings__")

// eval evaluates the query over input; ctx cancels it.
func (q *preparedQuery) eval(ctx context.Context, input ast.Value) (any, error) {
	txn, err := q.store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer q.store.Abort(ctx, txn)
	cancel := topdown.NewCancel()
	stop := context.AfterFunc(ctx, cancel.Cancel)
	defer stop()
	var overHeap atomic.Bool
	if q.heap != nil {
		done := make(chan struct{})
		defer close(done)
		go watchHeap(q.heap, cancel, done, &overHeap)
	}
	qrs, err := topdown.NewQuery(q.body).
		WithCompiler(q.compiler).
		WithStore(q.store).
		WithTransaction(txn).
		WithInput(ast.NewTerm(input)).
		WithCancel(cancel).
		WithStrictBuiltinErrors(false).
		Run(ctx)
	if err != nil {
		if overHeap.Load() {
			return nil, fmt.Errorf("%w of %s", ErrMemoryLimit, formatBytes(q.heap.limit))
		}
		return nil, err
	}
	if len(qrs) == 0 {
		return nil, nil
	}
	t, ok := qrs[0][resultVar]
	if !ok {
		return nil, nil
	}
	return ast.JSON(t.Value)
}

// New returns an engine over the modules (built-in and custom). Custom
// policies are compiled at once against the sandboxed capabilities, so a
// policy that calls a refused built-in fails here with OPA's message
// naming the built-in and the file:line. Built-in rules come from the
// bundle when one matching them is given, even beside custom policies:
// these then compile from source with the built-in libraries only, in an
// engine of their own, unless they reach into built-in packages (see
// separable).
func New(mods []rules.Module, catalog *rules.Catalog, opts ...Option) (*Engine, error) {
	var o engineOptions
	for _, opt := range opts {
		opt(&o)
	}
	var builtin, custom []rules.Module
	for _, m := range mods {
		if m.Custom {
			custom = append(custom, m)
		} else {
			builtin = append(builtin, m)
		}
	}
	heap := &heapGuard{limit: DefaultPolicyMemory}
	if o.policyMemory > 0 {
		heap.limit = o.policyMemory
	}
	var b *bundle
	if o.bundle != nil {
		// A bundle that does not match (a policy edited since it was
		// built) is ignored: compiling from source is slower, not wrong.
		if bb, err := openBundle(o.bundle, builtin); err == nil {
			b = bb
		}
	}
	if len(custom) == 0 {
		return &Engine{mods: mods, catalog: catalog, bundle: b, queries: map[string]*preparedKind{}}, nil
	}
	if b == nil || !separable(builtin, custom, catalog) {
		return newFromSource(mods, catalog, heap)
	}
	var libs []rules.Module
	for _, m := range builtin {
		if _, isRule := catalog.ByPackage(m.Package); !isRule {
			libs = append(libs, m)
		}
	}
	ce, err := newFromSource(append(libs, custom...), catalog, heap)
	if err != nil {
		return nil, err
	}
	be := &Engine{mods: builtin, catalog: catalog, bundle: b, queries: map[string]*preparedKind{}}
	return &Engine{mods: mods, catalog: catalog, parts: []*Engine{be, ce}}, nil
}

// newFromSource compiles every module now and keeps the result for every
// kind.
func newFromSource(mods []rules.Module, catalog *rules.Catalog, heap *heapGuard) (*Engine, error) {
	e := &Engine{mods: mods, catalog: catalog, heap: heap, queries: map[string]*preparedKind{}}
	c, err := compile(mods)
	if err != nil {
		return nil, err
	}
	e.allOnce.Do(func() { e.all = c })
	e.wantAll = true
	return e, nil
}

// separable reports whether custom policies can be evaluated apart from
// the built-in rules: none declares a package of the built-in policies
// (which would merge into a library or rule the bundle holds compiled)
// and none names a built-in rule's package (whose rules it would read).
func separable(builtin, custom []rules.Module, catalog *rules.Catalog) bool {
	pkgs := map[string]bool{}
	var rulePkgs []string
	for _, m := range builtin {
		pkgs[m.Package] = true
		if _, isRule := catalog.ByPackage(m.Package); isRule {
			rulePkgs = append(rulePkgs, m.Package)
		}
	}
	for _, m := range custom {
		for p := range pkgs {
			if m.Package == p || strings.HasPrefix(m.Package, p+".") {
				return false
			}
		}
		for _, p := range rulePkgs {
			if strings.Contains(m.Source, p) {
				return false
			}
		}
	}
	return true
}

// compile parses and compiles modules with the sandboxed capabilities.
func compile(mods []rules.Module) (*ast.Compiler, error) {
	modules := make(map[string]*ast.Module, len(mods))
	for _, m := range mods {
		pm, err := m.Parse()
		if err != nil {
			return nil, err
		}
		modules[m.File] = pm
	}
	c := ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithEnablePrintStatements(false)
	c.Compile(modules)
	if c.Failed() {
		return nil, fmt.Errorf("compile policies: %w", c.Errors)
	}
	return c, nil
}

// Result is one raw finding from a rule, before positions are resolved.
type Result struct {
	Rule    *rules.Rule
	Path    []any
	Message string
	// Level, when set, is the severity the rule chose among its
	// metadata's allowed levels.
	Level string
	// Inputs, when set, are the inputs this finding's verdict rests on
	// (a subset of the rule's metadata inputs); unset means all of them.
	Inputs  []string
	Patch   []Op
	Related []RelatedPath
	// FixMessage describes the patch ("set dtype to bfloat16").
	FixMessage string
	// Invalid, when set, says why the rule's finding could not be read
	// (a field of the wrong type); the other fields are then empty.
	Invalid string
}

// Op is one structural change on a document path.
type Op struct {
	Op    string `json:"op"` // "set" or "remove"
	Path  []any  `json:"path"`
	Value any    `json:"value,omitempty"`
}

// RelatedPath is a secondary location, possibly in another document.
type RelatedPath struct {
	Path    []any
	Message string
	// Ref names another document the rule was given (see lint), empty for
	// the document under check.
	Ref string
}

// Warm starts making the rules for kind ready in the background, so that
// work overlaps with the caller's parsing and schema checks; Eval waits
// for it. Only the first call for a kind starts anything.
func (e *Engine) Warm(kind string) {
	for _, p := range e.parts {
		p.Warm(kind)
	}
	if len(e.parts) > 0 {
		return
	}
	pk := e.prepared(kind)
	if pk.started.CompareAndSwap(false, true) {
		go pk.ready(e, kind)
	}
}

// ready prepares the kind's query once; later callers wait for the first.
func (pk *preparedKind) ready(e *Engine, kind string) {
	pk.once.Do(func() { pk.rules, pk.query, pk.err = e.prepare(kind) })
}

// Eval runs the rules that apply to kind over input. Rule ids come from
// the package that produced each finding, never from the rule body.
func (e *Engine) Eval(ctx context.Context, kind string, input map[string]any) ([]Result, error) {
	in, err := inputValue(input)
	if err != nil {
		return nil, fmt.Errorf("evaluate policies: input: %w", err)
	}
	if len(e.parts) == 0 {
		return e.eval(ctx, kind, in)
	}
	var out []Result
	for _, p := range e.parts {
		rs, err := p.eval(ctx, kind, in)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rule.ID < out[j].Rule.ID })
	return out, nil
}

// eval runs one engine's rules for kind over input already converted.
func (e *Engine) eval(ctx context.Context, kind string, in ast.Value) ([]Result, error) {
	pk := e.prepared(kind)
	pk.ready(e, kind)
	if pk.err != nil {
		return nil, pk.err
	}
	if len(pk.rules) == 0 {
		return nil, nil
	}
	v, err := pk.query.eval(ctx, in)
	if err != nil {
		if errors.Is(err, ErrMemoryLimit) {
			return nil, &MemoryError{Policies: e.customFiles(pk.rules), err: err}
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, fmt.Errorf("policy evaluation cut off: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("evaluate policies: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	return decode(pk.rules, v)
}

// MemoryError is an evaluation stopped by the policy memory limit
// (WithPolicyMemory); Policies names
// the custom policy files that were evaluating.
type MemoryError struct {
	Policies []string
	err      error
}

func (m *MemoryError) Error() string {
	return fmt.Sprintf("%v while evaluating %s", m.err, strings.Join(m.Policies, ", "))
}

func (m *MemoryError) Unwrap() error { return m.err }

// customFiles names the custom policy files among rs.
func (e *Engine) customFiles(rs []*rules.Rule) []string {
	var out []string
	for _, r := range rs {
		if r.Custom {
			out = append(out, r.File)
		}
	}
	return out
}

func (e *Engine) prepared(kind string) *preparedKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	pk, ok := e.queries[kind]
	if !ok {
		pk = &preparedKind{}
		e.queries[kind] = pk
	}
	return pk
}

// prepare compiles the library modules and the rules for one kind, and
// prepares one query over their findings.
func (e *Engine) prepare(kind string) ([]*rules.Rule, *preparedQuery, error) {
	var mods []rules.Module
	var candidates []*rules.Rule
	for _, m := range e.mods {
		r, isRule := e.catalog.ByPackage(m.Package)
		switch {
		case !isRule:
			mods = append(mods, m) // libraries: always
		case r.AppliesTo(kind):
			mods = append(mods, m)
			candidates = append(candidates, r)
		}
	}
	e.mu.Lock()
	all := e.wantAll
	e.mu.Unlock()
	var c *ast.Compiler
	var err error
	if all {
		c, err = e.compileAll()
	} else {
		c, err = e.compile(mods)
	}
	if err != nil {
		return nil, nil, err
	}
	var rs []*rules.Rule
	for _, r := range candidates {
		if len(c.GetRulesExact(findingsRef(r.Package))) > 0 {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	if len(rs) == 0 {
		return nil, nil, nil
	}
	// __gpulint_findings__ = [data.<rule>.findings, ...]
	terms := make([]*ast.Term, len(rs))
	for i, r := range rs {
		terms[i] = ast.RefTerm(findingsRef(r.Package)...)
	}
	query := ast.NewBody(ast.Equality.Expr(ast.VarTerm(string(resultVar)), ast.ArrayTerm(terms...)))
	body, err := c.QueryCompiler().Compile(query)
	if err != nil {
		return nil, nil, fmt.Errorf("compile query: %w", err)
	}
	q := &preparedQuery{compiler: c, body: body, store: inmem.New()}
	for _, r := range rs {
		if r.Custom {
			// Only custom policies are watched: the built-in ones are
			// tested and run without the watchdog's cost.
			q.heap = e.heap
		}
	}
	return rs, q, nil
}

// inputValue converts a document for evaluation directly, instead of the
// JSON round trip rego.EvalInput makes (a tenth of a 1000-file run's CPU).
// Numbers read as JSON would write them, so messages that print them do
// not change.
func inputValue(x any) (ast.Value, error) {
	switch v := x.(type) {
	case nil:
		return ast.Null{}, nil
	case bool:
		return ast.Boolean(v), nil
	case string:
		return ast.String(v), nil
	case int:
		return ast.Number(strconv.Itoa(v)), nil
	case int64:
		return ast.Number(strconv.FormatInt(v, 10)), nil
	case float64:
		b, err := json.Marshal(v)
		if err != nil {
			// An infinity or NaN (a huge literal in a config): JSON has
			// no spelling for it; OPA's own conversion does.
			return ast.InterfaceToValue(v)
		}
		return ast.Number(b), nil
	case json.Number:
		return ast.Number(v), nil
	case []any:
		ts := make([]*ast.Term, len(v))
		for i, e := range v {
			ev, err := inputValue(e)
			if err != nil {
				return nil, err
			}
			ts[i] = ast.NewTerm(ev)
		}
		return ast.NewArray(ts...), nil
	case map[string]any:
		kvs := make([][2]*ast.Term, 0, len(v))
		for k, e := range v {
			ev, err := inputValue(e)
			if err != nil {
				return nil, err
			}
			kvs = append(kvs, [2]*ast.Term{ast.StringTerm(k), ast.NewTerm(ev)})
		}
		return ast.NewObject(kvs...), nil
	}
	// Anything else the way OPA converts it.
	return ast.InterfaceToValue(x)
}

// findingsRef is data.<package>.findings, built without the parser.
func findingsRef(pkg string) ast.Ref {
	ref := ast.Ref{ast.DefaultRootDocument}
	for _, p := range strings.Split(pkg, ".") {
		ref = append(ref, ast.StringTerm(p))
	}
	return append(ref, ast.StringTerm("findings"))
}

// decode turns the query's value into results. A finding of the wrong
// shape (a message that is not a string, a path that is not a list, a
// malformed patch) becomes a result with Invalid set, naming the rule:
// one bad policy result costs that rule's finding, not the run.
func decode(rs []*rules.Rule, v any) ([]Result, error) {
	sets, ok := v.([]any)
	if !ok || len(sets) != len(rs) {
		return nil, fmt.Errorf("evaluate policies: unexpected result shape %T", v)
	}
	var out []Result
	for i, set := range sets {
		items, ok := set.([]any)
		if !ok {
			out = append(out, Result{Rule: rs[i], Invalid: fmt.Sprintf("findings must be a set of objects, got %s", typeName(set))})
			continue
		}
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				out = append(out, Result{Rule: rs[i], Invalid: fmt.Sprintf("a finding must be an object, got %s", typeName(it))})
				continue
			}
			r, err := decodeOne(rs[i], m)
			if err != nil {
				r = Result{Rule: rs[i], Invalid: err.Error()}
			}
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rule.ID < out[j].Rule.ID })
	return out, nil
}

// typeName names a decoded JSON value's type the way policy authors know
// it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeOne decodes one finding; its error says what is wrong with it.
func decodeOne(rule *rules.Rule, m map[string]any) (Result, error) {
	r := Result{Rule: rule}
	msg, ok := m["message"].(string)
	switch {
	case !ok && m["message"] != nil:
		return r, fmt.Errorf("message must be a string, got %s", typeName(m["message"]))
	case msg == "":
		return r, errors.New("finding without a message")
	}
	r.Message = msg
	var err error
	if r.Path, err = decodePath("path", m["path"]); err != nil {
		return r, err
	}
	for _, k := range []string{"level", "fix"} {
		if x, ok := m[k]; ok {
			if _, isStr := x.(string); !isStr {
				return r, fmt.Errorf("%s must be a string, got %s", k, typeName(x))
			}
		}
	}
	r.Level, _ = m["level"].(string)
	if xs, ok := m["inputs"].([]any); ok {
		r.Inputs = []string{}
		for _, x := range xs {
			if s, ok := x.(string); ok {
				r.Inputs = append(r.Inputs, s)
			}
		}
	}
	r.FixMessage, _ = m["fix"].(string)
	if x, ok := m["patch"]; ok && x != nil {
		ps, ok := x.([]any)
		if !ok {
			return r, fmt.Errorf("patch must be a list of operations, got %s", typeName(x))
		}
		for _, p := range ps {
			pm, ok := p.(map[string]any)
			if !ok {
				return r, fmt.Errorf("patch entries must be objects, got %s", typeName(p))
			}
			op, _ := pm["op"].(string)
			if op != "set" && op != "remove" {
				return r, fmt.Errorf("patch op %v (want \"set\" or \"remove\")", pm["op"])
			}
			path, err := decodePath("patch path", pm["path"])
			if err != nil {
				return r, err
			}
			r.Patch = append(r.Patch, Op{Op: op, Path: path, Value: normValue(pm["value"])})
		}
	}
	if x, ok := m["related"]; ok && x != nil {
		rel, ok := x.([]any)
		if !ok {
			return r, fmt.Errorf("related must be a list, got %s", typeName(x))
		}
		for _, x := range rel {
			switch rv := x.(type) {
			case []any:
				path, err := decodePath("related path", rv)
				if err != nil {
					return r, err
				}
				r.Related = append(r.Related, RelatedPath{Path: path})
			case map[string]any:
				path, err := decodePath("related path", rv["path"])
				if err != nil {
					return r, err
				}
				msg, _ := rv["message"].(string)
				ref, _ := rv["ref"].(string)
				r.Related = append(r.Related, RelatedPath{Path: path, Message: msg, Ref: ref})
			default:
				return r, fmt.Errorf("related entries must be paths or objects, got %s", typeName(x))
			}
		}
	}
	return r, nil
}

// decodePath checks that a path is a list of keys and indices (absent
// means the document root) and normalises it.
func decodePath(what string, v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	xs, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list of keys and indices, got %s", what, typeName(v))
	}
	for _, x := range xs {
		switch x.(type) {
		case string, json.Number:
		default:
			return nil, fmt.Errorf("%s elements must be strings or numbers, got %s", what, typeName(x))
		}
	}
	return normPath(xs), nil
}

// normPath turns OPA's JSON numbers in a path into ints.
func normPath(v any) []any {
	xs, _ := v.([]any)
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		switch t := x.(type) {
		case json.Number:
			if n, err := t.Int64(); err == nil {
				out = append(out, int(n))
				continue
			}
			out = append(out, t.String())
		default:
			out = append(out, t)
		}
	}
	return out
}

// normValue turns OPA's JSON numbers into int64 or float64.
func normValue(v any) any {
	switch t := v.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normValue(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normValue(x)
		}
		return out
	}
	return v
}
