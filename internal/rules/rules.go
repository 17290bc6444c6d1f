// Package rules loads gpulint's rule catalog from the METADATA blocks of the
// Rego policies. The metadata is the single source of truth for ids, slugs,
// titles, severities and docs; a rule with a missing field is refused.
package rules

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"gopkg.in/yaml.v3"

	"github.com/gpulint/gpulint/internal/finding"
)

// DocsBase is where rule documentation lives; each rule's anchor is derived
// from its id, so no URL is typed twice.
const DocsBase = "https://github.com/gpulint/gpulint/blob/main/docs/rules.md"

// PackagePrefix is the Rego package every built-in rule lives under.
const PackagePrefix = "gpulint.rules."

// Rule is one rule's metadata.
type Rule struct {
	ID          string           `json:"id"`
	Slug        string           `json:"slug"`
	Title       string           `json:"title"`
	Severity    finding.Severity `json:"-"`
	Rationale   string           `json:"rationale"`
	Remediation string           `json:"remediation"`
	Kinds       []string         `json:"kinds"`
	Since       string           `json:"since"`
	Fixable     bool             `json:"fixable"`
	Deprecated  bool             `json:"deprecated,omitempty"`
	// Levels lists the severities a finding may pick itself (for rules
	// whose severity depends on the margin, such as vram-overcommit). The
	// default Severity is always allowed.
	Levels []finding.Severity `json:"-"`
	// Inputs names the target inputs the rule's verdicts may rest on
	// (gpu, gpus, model, seq_len, micro_batch, method, model_dtype). Each
	// finding carries them as evidence, and one that rests on an assumed
	// input is at most info, so a rule with inputs must allow info.
	Inputs []string `json:"inputs,omitempty"`
	// FixNeeds names the target inputs the safety of the rule's fix rests
	// on (a bf16 fix on the GPU's compute capability, a memory fix on the
	// sizes). Where one of them is assumed or unknown the pipeline keeps
	// the finding, drops its fix and names what to state to get it.
	FixNeeds []string `json:"fix_needs,omitempty"`
	// Example is a short config snippet that makes the rule fire.
	Example string `json:"example,omitempty"`
	// Package is the Rego package path of the rule, e.g.
	// gpulint.rules.gpu001. Rules produced by Go code (parse errors,
	// schema violations) have a package with no findings rule.
	Package string `json:"-"`
	// File is the policy file the rule was read from.
	File string `json:"-"`
	// Custom marks rules loaded from a team's own policy directory.
	Custom bool `json:"custom,omitempty"`
}

// DocURL returns the link to the rule's documentation.
func (r *Rule) DocURL() string {
	return DocsBase + "#" + strings.ToLower(r.ID)
}

// AppliesTo reports whether the rule reads documents of kind k.
func (r *Rule) AppliesTo(k string) bool {
	return slices.Contains(r.Kinds, k) || slices.Contains(r.Kinds, "*")
}

// InputNames are the target inputs a rule may declare in its metadata's
// inputs: the ones the pipeline records as evidence.
var InputNames = []string{"gpu", "gpus", "model", "seq_len", "micro_batch", "method", "model_dtype",
	// The memory model's other inputs, recorded when the project file
	// states them (or, for optimizer, when the model sizes it as another).
	"optimizer", "optimizer_in_backward", "attention", "loss", "lora_rank", "lora_targets", "fsdp",
	"cuda_context", "gpu_memory", "max_num_batched_tokens", "enforce_eager", "kbit_fp32",
	// Recorded when a recipe or the project file moves activations to host memory.
	"activation_offloading",
	// The vLLM release a serving container states (image tag or pip pin).
	"vllm_version"}

// Catalog is the set of loaded rules, indexed by id and slug.
type Catalog struct {
	rules  []*Rule
	byID   map[string]*Rule
	bySlug map[string]*Rule
	byPkg  map[string]*Rule
}

var (
	idPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(DS|ACC|VLLM|K8S|MIG|GPU|SCHEMA|PARSE|TUNE|SUP|CFG|[A-Z]{2,8})[0-9]{3}$`)
	})
	slugPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
)

// Module is a policy file: its source, package and METADATA, read
// without parsing the Rego. The Rego is parsed on demand (Parse), so a run
// over DeepSpeed files never parses the Kubernetes rules.
type Module struct {
	File    string
	Source  string
	Package string // e.g. gpulint.rules.gpu001
	Custom  bool
	meta    *metadata
}

// metadata is the package-scoped METADATA block of a policy file.
type metadata struct {
	Title  string         `yaml:"title"`
	Scope  string         `yaml:"scope"`
	Custom map[string]any `yaml:"custom"`
}

// Parse parses the module's Rego (v1 syntax, annotations kept).
func (m Module) Parse() (*ast.Module, error) {
	mod, err := ast.ParseModuleWithOpts(m.File, m.Source, ast.ParserOptions{
		ProcessAnnotation: true,
		RegoVersion:       ast.RegoV1,
	})
	if err != nil {
		return nil, fmt.Errorf("parse policy %s: %w", m.File, err)
	}
	return mod, nil
}

// packageName finds the package declaration: a line "package a.b.c",
// optionally followed by a comment. A line scan, not a multi-line regular
// expression, which cost a third of loading the built-in policies.
func packageName(src string) (string, bool) {
	for line := range strings.Lines(src) {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "package")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest = strings.TrimLeft(rest, " \t")
		end := 0
		for end < len(rest) && isNameByte(rest[end], end == 0) {
			end++
		}
		name, tail := rest[:end], strings.TrimLeft(rest[end:], " \t")
		if name == "" || (tail != "" && tail[0] != '#') {
			continue
		}
		return name, true
	}
	return "", false
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return true
	case !first && (c == '.' || (c >= '0' && c <= '9')):
		return true
	}
	return false
}

// ParseModules reads every non-test .rego file under fsys: its package and
// its METADATA block. Custom policies are also parsed at once, so a syntax
// error in a team's policy is reported before any file is read.
func ParseModules(fsys fs.FS, custom bool) ([]Module, error) {
	return ParseModulesCached(fsys, custom, nil)
}

// ParseModulesCached is ParseModules taking each module's metadata from
// cache when it holds it for exactly that module's source.
func ParseModulesCached(fsys fs.FS, custom bool, cache MetadataCache) ([]Module, error) {
	var mods []Module
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".rego" || strings.HasSuffix(p, "_test.rego") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("read policy %s: %w", p, err)
		}
		m := Module{File: p, Source: string(src), Custom: custom}
		pkg, ok := packageName(m.Source)
		if !ok {
			return fmt.Errorf("parse policy %s: no package declaration", p)
		}
		m.Package = pkg
		m.meta, err = cachedMetadata(cache, m)
		if err != nil {
			return fmt.Errorf("parse policy %s: %w", p, err)
		}
		if custom {
			if _, err := m.Parse(); err != nil {
				return err
			}
		}
		mods = append(mods, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].File < mods[j].File })
	return mods, nil
}

// cachedMetadata returns the module's metadata from cache when it is there
// and intact, else reads it from the source.
func cachedMetadata(cache MetadataCache, m Module) (*metadata, error) {
	if cache != nil {
		if data, ok := cache(m.File, SourceSum(m.Source)); ok {
			if meta, err := decodeMetadata(data); err == nil {
				return meta, nil
			}
		}
	}
	return readMetadata(m.Source)
}

// readMetadata reads the "# METADATA" comment block that precedes the
// package line: the comment lines after it, with "# " removed, are YAML
// (OPA's annotation syntax). nil when there is none.
func readMetadata(src string) (*metadata, error) {
	lines := strings.Split(src, "\n")
	start := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "package ") {
			break
		}
		if t == "# METADATA" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, nil
	}
	var b strings.Builder
	for _, l := range lines[start:] {
		t := strings.TrimRight(l, "\r")
		if !strings.HasPrefix(t, "#") {
			break
		}
		t = strings.TrimPrefix(t, "#")
		t = strings.TrimPrefix(t, " ")
		b.WriteString(t)
		b.WriteByte('\n')
	}
	var m metadata
	if err := yaml.Unmarshal([]byte(b.String()), &m); err != nil {
		return nil, fmt.Errorf("METADATA: %w", err)
	}
	if m.Scope != "" && m.Scope != "package" && m.Scope != "subpackages" {
		return nil, nil // a rule-scoped block: not the package's metadata
	}
	return &m, nil
}

// LoadFS reads the policies under fsys (built-in ones: custom is false)
// and builds their catalog.
func LoadFS(fsys fs.FS) ([]Module, *Catalog, error) {
	mods, err := ParseModules(fsys, false)
	if err != nil {
		return nil, nil, err
	}
	cat, err := Load(mods)
	if err != nil {
		return nil, nil, err
	}
	return mods, cat, nil
}

// Load builds the catalog from the modules. A module whose package lies
// under gpulint.rules (or, for custom policies, declares an id) must carry
// complete package-scoped metadata; library packages need none.
func Load(mods []Module) (*Catalog, error) {
	c := &Catalog{byID: map[string]*Rule{}, bySlug: map[string]*Rule{}, byPkg: map[string]*Rule{}}
	var errs []string
	for _, m := range mods {
		pkg := m.Package
		isRule := strings.HasPrefix(pkg, PackagePrefix) || (m.Custom && m.meta != nil && m.meta.Custom["id"] != nil)
		if !isRule {
			continue
		}
		if m.meta == nil {
			errs = append(errs, fmt.Sprintf("%s: rule package %s has no METADATA block", m.File, pkg))
			continue
		}
		r, err := fromMetadata(m.meta)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", m.File, err))
			continue
		}
		r.Package, r.File, r.Custom = pkg, m.File, m.Custom
		if !m.Custom {
			if want := PackagePrefix + strings.ToLower(r.ID); pkg != want {
				errs = append(errs, fmt.Sprintf("%s: rule %s must live in package %s, not %s", m.File, r.ID, want, pkg))
				continue
			}
		}
		if o, dup := c.byID[r.ID]; dup {
			errs = append(errs, fmt.Sprintf("%s: id %s already used by %s", m.File, r.ID, o.File))
			continue
		}
		if o, dup := c.bySlug[r.Slug]; dup {
			errs = append(errs, fmt.Sprintf("%s: slug %s already used by %s", m.File, r.Slug, o.File))
			continue
		}
		c.rules = append(c.rules, r)
		c.byID[r.ID], c.bySlug[r.Slug], c.byPkg[pkg] = r, r, r
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid rule metadata:\n  %s", strings.Join(errs, "\n  "))
	}
	sort.Slice(c.rules, func(i, j int) bool { return c.rules[i].ID < c.rules[j].ID })
	return c, nil
}

func fromMetadata(a *metadata) (*Rule, error) {
	str := func(k string) string {
		s, _ := a.Custom[k].(string)
		return strings.TrimSpace(s)
	}
	r := &Rule{
		ID:          str("id"),
		Slug:        str("slug"),
		Title:       strings.TrimSpace(a.Title),
		Rationale:   str("rationale"),
		Remediation: str("remediation"),
		Since:       str("since"),
		Example:     strings.TrimRight(str("example"), "\n"),
	}
	var missing []string
	for _, f := range []struct{ name, val string }{
		{"id", r.ID}, {"slug", r.Slug}, {"title", r.Title}, {"rationale", r.Rationale},
		{"remediation", r.Remediation}, {"since", r.Since}, {"severity", str("severity")},
	} {
		if f.val == "" {
			missing = append(missing, f.name)
		}
	}
	kinds, _ := a.Custom["kinds"].([]any)
	for _, k := range kinds {
		if s, ok := k.(string); ok {
			r.Kinds = append(r.Kinds, s)
		}
	}
	if len(r.Kinds) == 0 {
		missing = append(missing, "kinds")
	}
	fixable, ok := a.Custom["fixable"].(bool)
	if !ok {
		missing = append(missing, "fixable")
	}
	r.Fixable = fixable
	if len(missing) > 0 {
		return nil, fmt.Errorf("rule %q: missing metadata field(s): %s", r.ID, strings.Join(missing, ", "))
	}
	if !idPattern().MatchString(r.ID) {
		return nil, fmt.Errorf("rule %q: id must be a family prefix and 3 digits (e.g. DS001)", r.ID)
	}
	if !slugPattern().MatchString(r.Slug) {
		return nil, fmt.Errorf("rule %s: slug %q is not kebab-case", r.ID, r.Slug)
	}
	if len(r.Title) > 60 || strings.HasSuffix(r.Title, ".") {
		return nil, fmt.Errorf("rule %s: title must be at most 60 characters with no trailing period", r.ID)
	}
	sev, err := finding.ParseSeverity(str("severity"))
	if err != nil || sev == finding.SeverityNone {
		return nil, fmt.Errorf("rule %s: severity must be error, warning or info", r.ID)
	}
	r.Severity = sev
	levels, _ := a.Custom["levels"].([]any)
	for _, l := range levels {
		s, _ := l.(string)
		lv, err := finding.ParseSeverity(s)
		if err != nil || lv == finding.SeverityNone {
			return nil, fmt.Errorf("rule %s: levels: %q is not a severity", r.ID, s)
		}
		r.Levels = append(r.Levels, lv)
	}
	inputs, _ := a.Custom["inputs"].([]any)
	for _, x := range inputs {
		s, _ := x.(string)
		if !slices.Contains(InputNames, s) {
			return nil, fmt.Errorf("rule %s: inputs: %q is not one of %s", r.ID, s, strings.Join(InputNames, ", "))
		}
		r.Inputs = append(r.Inputs, s)
	}
	needs, _ := a.Custom["fix_needs"].([]any)
	for _, x := range needs {
		s, _ := x.(string)
		if !slices.Contains(InputNames, s) {
			return nil, fmt.Errorf("rule %s: fix_needs: %q is not one of %s", r.ID, s, strings.Join(InputNames, ", "))
		}
		r.FixNeeds = append(r.FixNeeds, s)
	}
	if len(r.Inputs) > 0 && r.Severity != finding.SeverityInfo && !slices.Contains(r.Levels, finding.SeverityInfo) {
		return nil, fmt.Errorf("rule %s: a rule with inputs must list info in levels (a verdict on an assumed input is at most info)", r.ID)
	}
	r.Deprecated, _ = a.Custom["deprecated"].(bool)
	return r, nil
}

// All returns the rules sorted by id.
func (c *Catalog) All() []*Rule { return c.rules }

// Lookup finds a rule by id (any case) or slug.
func (c *Catalog) Lookup(name string) (*Rule, bool) {
	if r, ok := c.byID[strings.ToUpper(name)]; ok {
		return r, true
	}
	r, ok := c.bySlug[strings.ToLower(name)]
	return r, ok
}

// ByPackage finds the rule that lives in a Rego package.
func (c *Catalog) ByPackage(pkg string) (*Rule, bool) {
	r, ok := c.byPkg[pkg]
	return r, ok
}

// ForKind returns the rules that read documents of kind k.
func (c *Catalog) ForKind(k string) []*Rule {
	var out []*Rule
	for _, r := range c.rules {
		if r.AppliesTo(k) {
			out = append(out, r)
		}
	}
	return out
}

// DefinesRule reports whether the module is a gpulint rule: a METADATA
// block with a custom id. A directory of policies written for another
// tool (conftest's `package main` with `deny`) has none.
func (m Module) DefinesRule() bool {
	return m.meta != nil && m.meta.Custom["id"] != nil
}
