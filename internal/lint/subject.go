package lint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// subject is one unit the rules evaluate: a document (or part of one, such
// as a vLLM command line inside a container) with its canonical value,
// workload model and target, and the means to map paths back to bytes.
type subject struct {
	kind string
	file *source.File
	doc  int
	// root is the node the canonical paths are relative to, and prefix
	// its path from the document root.
	root   *source.Node
	prefix []any
	value  any
	// keyMap maps canonical top-level keys to the keys as written (vLLM
	// configs accept kebab-case, snake_case and camelCase spellings).
	keyMap map[string]string
	// snake is true when new top-level keys should be written snake_case.
	snake bool
	// dropped lists the canonical names of a vLLM config file's keys that
	// vLLM drops although they are written false (droppedFalse).
	dropped []string
	work    *normalize.Workload
	extra   map[string]any
	tgt     Target
	// sizing is the memory verdict input() estimated, nil when the GPU,
	// the model or the workload was not known well enough.
	sizing *Sizing
	// argv, when set, is the vLLM command line this subject came from;
	// paths then name options and are resolved through it.
	argv *argvSubject
	// optAt, when set, locates each top-level key of a subject read from
	// options stated in several places (a TGI container's flags and env);
	// whole is the range of what states them, for the rest.
	optAt map[string]finding.Range
	whole *finding.Range
	// embed, when set, maps paths into the YAML string this subject was
	// read from (a RayService's Serve config).
	embed *embedded
	// assumed names the target inputs the file implies rather than states
	// (a model named by an env var or by the directory of its weights),
	// each with why: they are assumed inputs of every verdict.
	assumed map[string]string
	// assumedOpts are the options whose value the file implies rather than
	// states (a vLLM option a Ray application's code reads from an env var
	// with a default, and the env_vars leave unset), by the key a rule's
	// path starts with: a finding on such an option rests on the guess.
	assumedOpts map[string]finding.Input
	// defaults are inputs the file leaves to its server's default and the
	// estimate assumes outright (a TGI container's token budget), each
	// with its value, why and what settles it.
	defaults []finding.Input
	// launcher is the Accelerate config that launches this DeepSpeed
	// file, when there is one.
	launcher *launcher
	// deepspeed is the DeepSpeed config a fine-tuning recipe names, when
	// it was found.
	deepspeed *relatedDoc
	// launchPrecision locates, in the Accelerate config a recipe's launch
	// passes, the mixed precision the recipe took from it (its own flags
	// enable none); zero when it took none.
	launchPrecision finding.Range
	// lookups collects the context lookups the file's result consulted
	// (probe.go), shared by every subject of the file.
	lookups *lookupLog
	// linked are the launch scripts and manifests the launch graph read
	// for this subject (related_launch.go), for the result cache.
	linked []relatedSource
	// sizedFrom are other files the sizing is read from (the Chart.yaml
	// that names a values file's chart), for files[].sizing.related.
	sizedFrom []SizingSource
	// viaConfigMap says, for the evidence, through which ConfigMap the
	// launching pod reads this file and where the repository packs it
	// there; empty when the launch names the file by its path.
	viaConfigMap string
	// evidence caches inputs(): the target inputs by name with their
	// sources.
	evidence map[string]finding.Input
	// memory is the per-GPU estimate input() gave the rules, for the
	// findings of the rules that rest on it.
	memory *finding.Memory
	// open, when set, is the profile a NIM leaves open and the sizing
	// under each of its precisions (subject_nim.go).
	open *nimOpen
}

// locateRelated maps a related path with a ref to another file.
func (s *subject) locateRelated(rel check.RelatedPath) finding.Range {
	if rel.Ref == "launcher" && s.launcher != nil {
		return s.launcher.locate(rel.Path)
	}
	if rel.Ref == refDeepSpeed && s.deepspeed != nil {
		return s.deepspeed.locate(rel.Path)
	}
	if rel.Ref == refDeepSpeedLenient && s.deepspeed != nil {
		return s.deepspeed.locateLenient(rel.Path)
	}
	return s.locate(rel.Path)
}

// docPath translates a canonical path into a path from the document root.
func (s *subject) docPath(path []any) []any {
	out := make([]any, 0, len(s.prefix)+len(path))
	out = append(out, s.prefix...)
	for i, p := range path {
		if i == 0 && s.keyMap != nil {
			if k, ok := p.(string); ok {
				if w, ok := s.keyMap[k]; ok {
					p = w
				} else if s.snake {
					p = strings.ReplaceAll(k, "-", "_")
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// locate maps a canonical path to the range of the user's key. A path
// that does not exist points at its nearest written parent; the document
// root points at the document's first line.
func (s *subject) locate(path []any) finding.Range {
	if s.argv != nil {
		if r, ok := s.argv.locate(path); ok {
			return r
		}
		return s.argv.whole
	}
	if s.optAt != nil {
		if len(path) > 0 {
			if k, ok := path[0].(string); ok {
				if r, ok := s.optAt[k]; ok {
					return r
				}
			}
		}
		return *s.whole
	}
	if s.embed != nil {
		return s.embed.locate(path)
	}
	root := s.file.Docs[s.doc].Root
	full := s.docPath(path)
	node, entry, matched := root.Lookup(full)
	if node == nil {
		return s.docStart()
	}
	if matched == 0 || node == root {
		if len(s.prefix) == 0 {
			return s.docStart()
		}
	}
	if entry.Key != nil {
		return finding.Range{File: s.file.Path, Start: entry.Key.Start, End: node.End}
	}
	return node.Range(s.file.Path)
}

// docStart is the range of the document's first line.
func (s *subject) docStart() finding.Range {
	d := s.file.Docs[s.doc]
	start := d.Start
	if d.Root != nil {
		start = d.Root.Start
	}
	end := start
	data := s.file.Data
	for end.Offset < len(data) && data[end.Offset] != '\n' && data[end.Offset] != '\r' {
		end.Offset++
		end.Col++
	}
	return finding.Range{File: s.file.Path, Start: start, End: end}
}

// edits turns a rule's patch into byte edits on the file.
func (s *subject) edits(ops []check.Op) ([]finding.Edit, error) {
	if s.argv != nil {
		return s.argv.edits(ops)
	}
	if s.embed != nil {
		return nil, errEmbeddedEdit
	}
	if s.optAt != nil && s.kind == string(source.KindFinetune) {
		return nil, errOptionEdit
	}
	sops := make([]source.Op, 0, len(ops))
	for _, o := range ops {
		op := source.Op{Kind: source.Set, Path: s.docPath(o.Path), Value: o.Value}
		if o.Op == "remove" {
			op.Kind = source.Remove
		}
		sops = append(sops, op)
	}
	return s.file.Edits(s.doc, sops)
}

// input builds the document the rules read (see docs/policy-input.md).
func (s *subject) input(params map[string]any) map[string]any {
	in := map[string]any{
		"kind":     s.kind,
		"doc":      s.value,
		"workload": s.work.Model,
		"paths":    s.work.PathsAsAny(),
		"target":   s.tgt.Input(),
		"params":   params,
	}
	in["target"].(map[string]any)["inputs"] = inputsInput(s.inputs())
	if s.argv != nil {
		in["vllm"] = vllmInput(s.argv.cmd)
		if d := droppedInput(s.argv.cmd, s.tgt.Model); d != nil {
			in["vllm"].(map[string]any)["dropped"] = d
		}
	}
	if est, mem := s.tgt.estimate(s.work); est != nil {
		in["estimate"] = est
		s.sizing = s.tgt.sizing(est)
		if s.sizing != nil && s.sizing.Note == "" && len(s.defaults) > 0 {
			s.sizing.Note = AssumedNote(s.defaults)
		}
		if s.sizing != nil {
			s.sizing.Related = append(s.sizing.Related, s.sizedFrom...)
		}
		s.open.apply(s.sizing)
		s.memory = mem
	}
	for k, v := range s.extra {
		in[k] = v
	}
	return in
}

// evaluate runs the rules over one subject and resolves their results
// into findings.
func (l *Linter) evaluate(ctx context.Context, s *subject, params map[string]any) ([]finding.Finding, bool, error) {
	_, timeout := l.limits(l.project(s.file.Path))
	results, err := l.deps.Engine.Eval(ctx, s.kind, s.input(params))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return []finding.Finding{l.timeoutFinding(s, "policy evaluation", timeout)}, true, nil
		}
		var merr *check.MemoryError
		if errors.As(err, &merr) {
			r, _ := l.deps.Catalog.Lookup("limit-exceeded")
			return []finding.Finding{l.stamp(r, finding.Finding{
				Message: fmt.Sprintf("%v and was stopped; results for this document are incomplete", merr),
				Range:   s.docStart(),
			}, "")}, true, nil
		}
		return nil, false, fmt.Errorf("%s: %w", s.file.Path, err)
	}
	free, err := l.modelFree(ctx, s, params)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", s.file.Path, err)
	}
	out := make([]finding.Finding, 0, len(results))
	cut := false
	for _, r := range results {
		// Placing a fix re-reads the edited file; past the deadline the
		// remaining findings are reported without one.
		if !cut && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cut = true
			out = append(out, l.timeoutFinding(s, "placing fixes", timeout))
		}
		if r.Invalid != "" {
			f := l.stamp(r.Rule, finding.Finding{
				Message: fmt.Sprintf("policy %s returned a finding gpulint cannot read: %s", r.Rule.File, r.Invalid),
				Range:   s.docStart(),
			}, "")
			f.Severity = finding.SeverityError
			out = append(out, f)
			continue
		}
		f := l.stamp(r.Rule, finding.Finding{
			Message: r.Message,
			Range:   s.locate(r.Path),
			Path:    s.docPath(r.Path),
		}, r.Level)
		s.sizing.notStartable(r.Rule.ID, r.Message)
		attachEvidence(&f, r.Rule, r.Inputs, s.inputs())
		restsOnAssumedOption(&f, s.assumedOpts, r.Path)
		showsAbbreviation(&f, s, r.Path)
		if free != nil && !free[resultKey(r)] {
			restsOnAssumedModel(&f, s.inputs()["model"])
		}
		f.Memory = memoryFor(r.Rule, s.memory)
		for _, rel := range r.Related {
			f.Related = append(f.Related, finding.Related{Range: s.locateRelated(rel), Message: rel.Message})
		}
		if len(r.Patch) > 0 && !cut {
			msg := r.FixMessage
			if msg == "" {
				msg = "apply the suggested change"
			}
			if edits, err := s.edits(r.Patch); err == nil && len(edits) > 0 {
				f.Fixes = append(f.Fixes, finding.Fix{Message: msg, Edits: edits, Tune: r.Rule.ID[:min(4, len(r.Rule.ID))] == "TUNE"})
			}
		}
		withholdFix(&f, r.Rule, s.inputs())
		if free != nil && !free[resultKey(r)] && len(f.Fixes) > 0 {
			// Sized on a model guessed from a name.
			f.Fixes = nil
			f.Message += "; no fix until the model is known: " + s.inputs()["model"].Settle
		}
		out = append(out, f)
	}
	return out, cut, nil
}

// modelFree evaluates the rules once more as if the model a name
// suggested were unknown, when the target rests on one
// (Target.ModelByName), and returns the results that pass holds: those do
// not rest on the guess. It returns nil when the model was not guessed.
func (l *Linter) modelFree(ctx context.Context, s *subject, params map[string]any) (map[string]bool, error) {
	if !s.tgt.ModelByName {
		return nil, nil
	}
	c := *s
	c.tgt.Model, c.tgt.ModelSource, c.tgt.ModelByName = nil, "", false
	c.evidence, c.sizing, c.memory = nil, nil, nil
	if _, ok := s.extra["mig"]; ok {
		c.extra = map[string]any{"mig": migInput(l.deps.Targets.Catalog(), c.value, c.tgt)}
	}
	results, err := l.deps.Engine.Eval(ctx, c.kind, c.input(params))
	if err != nil {
		return nil, err
	}
	free := make(map[string]bool, len(results))
	for _, r := range results {
		free[resultKey(r)] = true
	}
	return free, nil
}

// resultKey identifies a rule's result by rule, path and message.
func resultKey(r check.Result) string {
	id := ""
	if r.Rule != nil {
		id = r.Rule.ID
	}
	return fmt.Sprintf("%s\x00%s\x00%v\x00%s", id, r.Level, r.Path, r.Message)
}

// restsOnAssumedOption marks a finding on an option whose value the
// file implies (subject.assumedOpts): at most info, the option in its
// evidence and its message.
func restsOnAssumedOption(f *finding.Finding, opts map[string]finding.Input, path []any) {
	if len(path) == 0 || len(opts) == 0 {
		return
	}
	k, _ := path[0].(string)
	in, ok := opts[k]
	if !ok || slices.ContainsFunc(f.Evidence, func(e finding.Input) bool { return e.Name == in.Name }) {
		return
	}
	f.Evidence = append(f.Evidence, in)
	f.Severity = min(f.Severity, finding.SeverityInfo)
	f.Message += "; " + AssumedNote([]finding.Input{in})
}

// restsOnAssumedModel marks a finding that appears only because of a
// model guessed from its name: at most info, the guess in its evidence
// and its message. A finding whose evidence already holds the model was
// marked by attachEvidence.
func restsOnAssumedModel(f *finding.Finding, model finding.Input) {
	if slices.ContainsFunc(f.Evidence, func(e finding.Input) bool { return e.Name == "model" }) {
		return
	}
	f.Evidence = append(f.Evidence, model)
	f.Severity = min(f.Severity, finding.SeverityInfo)
	f.Message += "; " + AssumedNote([]finding.Input{model})
}

// timeoutFinding reports a document whose checks ran past the file's
// timeout.
func (l *Linter) timeoutFinding(s *subject, stage string, timeout time.Duration) finding.Finding {
	r, _ := l.deps.Catalog.Lookup("limit-exceeded")
	return l.stamp(r, finding.Finding{
		Message: fmt.Sprintf("%s took longer than %s and was stopped; results for this document are incomplete", stage, timeout),
		Range:   s.docStart(),
	}, "")
}
