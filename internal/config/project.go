// Package config reads the project file, .gpulint.yaml: targets, rule
// settings, ignores, custom policies and limits, and finds the one that
// applies to each linted file.
package config

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/internal/value"
)

// FileNames are the names of the project file, looked for in each
// file's directory and its parents.
var FileNames = []string{".gpulint.yaml", ".gpulint.yml"}

// Project is a parsed .gpulint.yaml.
type Project struct {
	// Path is the project file; Root its directory, against which globs
	// are matched.
	Path, Root string
	Targets    []TargetRule
	// Rules maps a rule id or slug to its setting.
	Rules  map[string]RuleSetting
	Ignore []IgnoreEntry
	FailOn string
	// Policies are custom policy directories, relative to Root.
	Policies []string
	// Limits override the default safety limits for files under Root.
	Limits Limits
	// Exclude are globs, relative to Root, of files the run skips.
	Exclude []string

	// digest is the SHA-256 of the file as loaded: cache keys name the
	// project by the content its settings came from.
	digest [sha256.Size]byte
}

// Digest is the SHA-256 of the project file as loaded: cache keys name
// the project by the content its settings came from.
func (p *Project) Digest() [sha256.Size]byte { return p.digest }

// Limits are the limits a project file may set; zero means unset.
type Limits struct {
	MaxBytes, MaxDepth, MaxNodes int
	Timeout, RunTimeout          time.Duration
	// PolicyMemory bounds the Go heap while custom policies evaluate
	// (bytes; 0: the default).
	PolicyMemory int64
}

// PolicyDirs returns the project's custom policy directories as paths.
func (p *Project) PolicyDirs() []string {
	var out []string
	for _, d := range p.Policies {
		if !filepath.IsAbs(d) {
			d = filepath.Join(p.Root, d)
		}
		out = append(out, d)
	}
	return out
}

// TargetRule sets the target for files matching any of Paths.
type TargetRule struct {
	Paths []string
	GPU   string
	GPUs  int
	Nodes int
	Model string
	// Inputs a file may leave to its training script, stated here so the
	// verdicts that rest on them need not assume them: the sequence
	// length, the micro batch per GPU, the training method (full, lora or
	// qlora) and the dtype the script loads the model in.
	SeqLen     int
	MicroBatch int
	Method     string
	// TargetLen is an encoder-decoder's decoder length (target_len).
	TargetLen  int
	ModelDtype string
	// The other inputs of the memory model, each also a `gpulint estimate`
	// flag: the attention kernel (eager, sdpa, flash), the CUDA context per
	// process in MiB, the optimizer (an estimate --optimizer name), whether
	// it steps inside backward, the loss implementation (hf-default,
	// chunked, fused), LoRA rank and target modules, whether the script
	// offloads activations to the host, the FSDP sharding strategy, vLLM's
	// max_num_batched_tokens and enforce_eager, the vLLM release where the
	// file states none (vllm_version), whether a QLoRA base keeps
	// its unquantized parameters in fp32 (kbit_fp32), the memory of a GPU the
	// catalog lacks (as 24GiB) and a parameter count when no model is named
	// (as 7.5B). Zero values are unset; the pointers tell an explicit
	// false from an absent key.
	Attention            string
	CUDAContextMiB       int
	Optimizer            string
	OptimizerInBackward  *bool
	Loss                 string
	LoRARank             int
	LoRATargets          []string
	ActivationOffloading *bool
	FSDP                 string
	MaxNumBatchedTokens  int
	EnforceEager         *bool
	VLLMVersion          string
	KbitFP32             *bool
	GPUMemory            string
	Params               string
	// GPUAt and ModelAt are where the file sets GPU and Model.
	GPUAt, ModelAt finding.Pos
	// File is the project file; At maps each key the target sets to where
	// its value is, so a verdict can cite file:line for a stated input.
	File string
	At   map[string]finding.Pos
}

// Where returns "file:line" of the target's key, or "" when it is unset.
func (t *TargetRule) Where(key string) string {
	if t == nil {
		return ""
	}
	pos, ok := t.At[key]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d", t.File, pos.Line)
}

// RuleSetting turns a rule off or changes its severity and parameters.
type RuleSetting struct {
	Off      bool
	Severity string
	Params   map[string]any
	// At is where the file names the rule.
	At finding.Pos
}

// IgnoreEntry silences a rule for files matching a glob, with a reason.
type IgnoreEntry struct {
	Path, Rule, Reason string
	// At is the entry's place in the file; RuleAt its rule's.
	At, RuleAt finding.Pos
}

// Load reads and validates a project file. Problems are reported
// with the file's positions.
func Load(path string, v *normalize.Validator) (*Project, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f, err := source.Parse(path, data, source.DefaultLimits())
	if err != nil {
		return nil, err
	}
	p := &Project{Path: path, Root: filepath.Dir(path), Rules: map[string]RuleSetting{}, digest: sha256.Sum256(data)}
	if len(f.Docs) == 0 || f.Docs[0].Root == nil {
		return p, nil
	}
	root := f.Docs[0].Root
	doc, err := root.ToValue(100_000)
	if err != nil {
		return nil, err
	}
	keepVersionText(root, doc)
	if v != nil {
		vs, err := v.Validate("gpulint-config", doc)
		if err != nil {
			return nil, err
		}
		var msgs []string
		for _, viol := range vs {
			if viol.Severity != "error" {
				continue
			}
			n, _, _ := root.Lookup(viol.Path)
			pos := root.Start
			if n != nil {
				pos = n.Start
			}
			msgs = append(msgs, (&source.Error{File: path, Pos: pos, Msg: viol.Message}).Error())
		}
		if len(msgs) > 0 {
			return nil, fmt.Errorf("invalid project file:\n  %s", strings.Join(msgs, "\n  "))
		}
	}
	m, _ := doc.(map[string]any)
	at := func(path ...any) finding.Pos {
		n, _, _ := root.Lookup(path)
		return n.Start
	}
	for i, t := range value.List(m["targets"]) {
		tm, _ := t.(map[string]any)
		tr := TargetRule{GPU: value.String(tm["gpu"]), Model: value.String(tm["model"]),
			GPUAt: at("targets", i, "gpu"), ModelAt: at("targets", i, "model")}
		for _, g := range value.List(tm["paths"]) {
			tr.Paths = append(tr.Paths, value.String(g))
		}
		if n, ok := tm["gpus"].(int64); ok {
			tr.GPUs = int(n)
		}
		if n, ok := tm["nodes"].(int64); ok {
			tr.Nodes = int(n)
		}
		if n, ok := tm["seq_len"].(int64); ok {
			tr.SeqLen = int(n)
		}
		if n, ok := tm["micro_batch"].(int64); ok {
			tr.MicroBatch = int(n)
		}
		tr.Method = value.String(tm["method"])
		tr.ModelDtype = value.String(tm["model_dtype"])
		readTargetInputs(&tr, tm)
		tr.File, tr.At = path, map[string]finding.Pos{}
		for k := range tm {
			if k != "paths" {
				tr.At[k] = at("targets", i, k)
			}
		}
		p.Targets = append(p.Targets, tr)
	}
	if rm, ok := m["rules"].(map[string]any); ok {
		rulesNode := root.Get("rules")
		for k, v := range rm {
			var rs RuleSetting
			switch t := v.(type) {
			case string:
				if t == "off" {
					rs = RuleSetting{Off: true}
				} else {
					rs = RuleSetting{Severity: t}
				}
			case bool:
				rs = RuleSetting{Off: !t}
			case map[string]any:
				rs = RuleSetting{Severity: value.String(t["severity"])}
				rs.Off = rs.Severity == "off"
				rs.Params, _ = t["params"].(map[string]any)
			default:
				continue
			}
			if e, ok := rulesNode.GetEntry(k); ok {
				rs.At = e.Key.Start
			}
			p.Rules[k] = rs
		}
	}
	for i, ig := range value.List(m["ignore"]) {
		im, _ := ig.(map[string]any)
		p.Ignore = append(p.Ignore, IgnoreEntry{Path: value.String(im["path"]), Rule: value.String(im["rule"]), Reason: value.String(im["reason"]),
			At: at("ignore", i), RuleAt: at("ignore", i, "rule")})
	}
	for _, g := range value.List(m["exclude"]) {
		p.Exclude = append(p.Exclude, value.String(g))
	}
	p.FailOn = value.String(m["fail-on"])
	for _, d := range value.List(m["policies"]) {
		p.Policies = append(p.Policies, value.String(d))
	}
	if lm, ok := m["limits"].(map[string]any); ok {
		num := func(k string) int {
			n, _ := lm[k].(int64)
			return int(n)
		}
		dur := func(k string) time.Duration {
			d, _ := time.ParseDuration(value.String(lm[k]))
			return d
		}
		p.Limits = Limits{
			MaxBytes: num("max-file-bytes"), MaxDepth: num("max-depth"), MaxNodes: num("max-nodes"),
			Timeout: dur("timeout"), RunTimeout: dur("run-timeout"),
			PolicyMemory: int64(num("policy-memory")),
		}
	}
	return p, nil
}

// Rel returns path relative to the project root, slash-separated.
func (p *Project) Rel(path string) string {
	if p == nil {
		return filepath.ToSlash(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	root, err := filepath.Abs(p.Root)
	if err != nil {
		return filepath.ToSlash(path)
	}
	r, err := filepath.Rel(root, abs)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// Target returns the first target rule whose glob matches path.
func (p *Project) Target(path string) *TargetRule {
	if p == nil {
		return nil
	}
	rel := p.Rel(path)
	for i := range p.Targets {
		for _, g := range p.Targets[i].Paths {
			if matchGlob(g, rel) {
				return &p.Targets[i]
			}
		}
	}
	return nil
}

// Params returns rule parameters keyed as the project file names the rule
// (id or slug; the linter keys them by slug).
func (p *Project) Params() map[string]any {
	out := map[string]any{}
	if p == nil {
		return out
	}
	for k, rs := range p.Rules {
		if rs.Params != nil {
			out[k] = rs.Params
		}
	}
	return out
}

// Apply drops findings of rules turned off or ignored for this path and
// applies severity overrides.
func (p *Project) Apply(path string, fs []finding.Finding) []finding.Finding {
	out, _ := p.Filter(path, fs)
	return out
}

// Filter is Apply that also returns the indexes of the ignore entries that
// silenced a finding, so that a run can report the entries that silence
// nothing.
func (p *Project) Filter(path string, fs []finding.Finding) ([]finding.Finding, []int) {
	if p == nil {
		return fs, nil
	}
	rel := p.Rel(path)
	out := fs[:0]
	var used []int
	for _, f := range fs {
		setting, ok := p.Rules[f.Rule]
		if !ok {
			setting, ok = p.Rules[f.Slug]
		}
		if ok && setting.Off {
			continue
		}
		if ok && setting.Severity != "" {
			if s, err := finding.ParseSeverity(setting.Severity); err == nil && s != finding.SeverityNone {
				f.Severity = s
			}
		}
		ignored := false
		for i, ig := range p.Ignore {
			if (ig.Rule == f.Rule || ig.Rule == f.Slug) && matchGlob(ig.Path, rel) {
				ignored = true
				if !slices.Contains(used, i) {
					used = append(used, i)
				}
				break
			}
		}
		if !ignored {
			out = append(out, f)
		}
	}
	return out, used
}

// IgnoreCovers reports whether ignore entry i's path glob matches path.
func (p *Project) IgnoreCovers(i int, path string) bool {
	return p != nil && i >= 0 && i < len(p.Ignore) && matchGlob(p.Ignore[i].Path, p.Rel(path))
}

// Excluded returns the exclude glob of the project that matches path, or
// "" when none does. A glob without a slash also matches any file or
// directory of that name, as in .gitignore.
func (p *Project) Excluded(path string) string {
	if p == nil {
		return ""
	}
	return MatchExclude(p.Exclude, p.Rel(path))
}

// MatchExclude returns the first glob that matches rel (slash-separated),
// or "". A glob without a slash matches any path element; one with a
// slash matches the whole path or a directory above it.
func MatchExclude(globs []string, rel string) string {
	rel = strings.TrimPrefix(rel, "./")
	parts := strings.Split(rel, "/")
	for _, g := range globs {
		g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
		if g == "" {
			continue
		}
		if !strings.Contains(g, "/") {
			for _, el := range parts {
				if ok, _ := filepath.Match(g, el); ok {
					return g
				}
			}
			continue
		}
		for i := len(parts); i > 0; i-- {
			if matchGlob(g, strings.Join(parts[:i], "/")) {
				return g
			}
		}
	}
	return ""
}

// matchGlob matches slash-separated paths against a glob where ** spans
// directories.
func matchGlob(glob, path string) bool {
	return matchParts(strings.Split(glob, "/"), strings.Split(path, "/"))
}

func matchParts(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchParts(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := filepath.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

// Set holds the project files that apply to a run's files, keyed by
// directory. Each file is governed by the nearest project file above it
// (README "The target"), wherever the file is: a file the run does not
// lint but reads as context (the recipe a manifest launches, the
// DeepSpeed file a recipe names) is sized under its own project file,
// found by Find on first use. A Set is safe for concurrent use.
type Set struct {
	v      *normalize.Validator
	mu     sync.Mutex
	byDir  map[string]*Project
	loaded map[string]*Project
}

// LoadSet finds and loads the project file above each file. An
// invalid project file is an error: the run cannot know its settings.
func LoadSet(files []string, v *normalize.Validator) (*Set, error) {
	ps := &Set{v: v, byDir: map[string]*Project{}, loaded: map[string]*Project{}}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", f, err)
		}
		if _, err := ps.find(filepath.Dir(abs)); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// find returns the nearest project file above dir, loading it once and
// remembering the answer for every directory on the way; ps.mu is held.
func (ps *Set) find(dir string) (*Project, error) {
	var chain []string
	var found *Project
	for d := dir; ; d = filepath.Dir(d) {
		if p, ok := ps.byDir[d]; ok {
			found = p
			break
		}
		chain = append(chain, d)
		var pf string
		for _, name := range FileNames {
			if st, err := os.Stat(filepath.Join(d, name)); err == nil && st.Mode().IsRegular() {
				pf = filepath.Join(d, name)
				break
			}
		}
		if pf != "" {
			p, ok := ps.loaded[pf]
			if !ok {
				var err error
				p, err = Load(pf, ps.v)
				if err != nil {
					// Remembered as none, so a later lookup neither
					// reads it again nor answers otherwise.
					ps.loaded[pf] = nil
					for _, d := range chain {
						ps.byDir[d] = nil
					}
					return nil, err
				}
				ps.loaded[pf] = p
			}
			found = p
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, d := range chain {
		ps.byDir[d] = found
	}
	return found, nil
}

// PolicyDirs returns the custom policy directories of every project file.
func (ps *Set) PolicyDirs() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	seen := map[*Project]bool{}
	var out []string
	for _, d := range value.SortedKeys(ps.byDir) {
		p := ps.byDir[d]
		if p == nil || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p.PolicyDirs()...)
	}
	return out
}

// RunTimeout is the first run-timeout any project file sets (0: none).
func (ps *Set) RunTimeout() time.Duration {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, d := range value.SortedKeys(ps.byDir) {
		if p := ps.byDir[d]; p != nil && p.Limits.RunTimeout > 0 {
			return p.Limits.RunTimeout
		}
	}
	return 0
}

// PolicyMemory is the smallest policy-memory any project file sets (0:
// none). The limit bounds the whole process, so the strictest project
// file holds for the run.
func (ps *Set) PolicyMemory() int64 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out int64
	for _, p := range ps.byDir {
		if p != nil && p.Limits.PolicyMemory > 0 && (out == 0 || p.Limits.PolicyMemory < out) {
			out = p.Limits.PolicyMemory
		}
	}
	return out
}

// Find returns the project for a file path (nil when none): the one
// LoadSet found for a run's file, else the nearest project file above
// path, loaded now. A project file found this way that does not load
// governs only files the run reads as context, never lints, so there is
// no file to report its error on: such a file is read with no project
// file, as if it had none.
func (ps *Set) Find(path string) *Project {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, err := ps.find(filepath.Dir(abs))
	if err != nil {
		return nil
	}
	return p
}

// Projects returns the distinct project files of the set, in the order of
// their directories.
func (ps *Set) Projects() []*Project {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	seen := map[*Project]bool{}
	var out []*Project
	for _, d := range value.SortedKeys(ps.byDir) {
		if p := ps.byDir[d]; p != nil && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// versionKeys are the target keys that name a release. YAML reads an
// unquoted 0.10 as the number 0.1, another release; the project file is
// gpulint's own, so these keys are read as the text the user wrote.
var versionKeys = []string{"vllm_version"}

// keepVersionText replaces a version key's number in doc with the scalar's
// text (0.10 stays "0.10", 1 stays "1"), before the schema checks it, so a
// release written without quotes means what it says and a bad one is
// reported as written.
func keepVersionText(root *source.Node, doc any) {
	m, _ := doc.(map[string]any)
	for i, t := range value.List(m["targets"]) {
		tm, _ := t.(map[string]any)
		for _, k := range versionKeys {
			n, _, matched := root.Lookup([]any{"targets", i, k})
			if n == nil || matched != 3 || n.Kind != source.ScalarNode || n.Style != source.Plain {
				continue
			}
			if n.Tag == "float" || n.Tag == "int" {
				tm[k] = n.Text
			}
		}
	}
}

// readTargetInputs reads the memory model's inputs a target may state
// beside seq_len, micro_batch, method and model_dtype (the schema has
// checked their types and values).
func readTargetInputs(tr *TargetRule, tm map[string]any) {
	num := func(k string) int {
		n, _ := tm[k].(int64)
		return int(n)
	}
	flag := func(k string) *bool {
		if b, ok := tm[k].(bool); ok {
			return &b
		}
		return nil
	}
	tr.Attention = value.String(tm["attention"])
	tr.TargetLen = num("target_len")
	tr.CUDAContextMiB = num("cuda_context")
	tr.Optimizer = value.String(tm["optimizer"])
	tr.OptimizerInBackward = flag("optimizer_in_backward")
	tr.Loss = value.String(tm["loss"])
	tr.LoRARank = num("lora_rank")
	for _, x := range value.List(tm["lora_targets"]) {
		tr.LoRATargets = append(tr.LoRATargets, value.String(x))
	}
	tr.ActivationOffloading = flag("activation_offloading")
	tr.FSDP = value.String(tm["fsdp"])
	tr.MaxNumBatchedTokens = num("max_num_batched_tokens")
	tr.EnforceEager = flag("enforce_eager")
	tr.VLLMVersion = value.String(tm["vllm_version"])
	tr.KbitFP32 = flag("kbit_fp32")
	tr.GPUMemory = value.String(tm["gpu_memory"])
	switch v := tm["params"].(type) {
	case int64:
		tr.Params = fmt.Sprint(v)
	default:
		tr.Params = value.String(v)
	}
}
