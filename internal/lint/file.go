package lint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kustomize"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/recipe"
	"github.com/gpulint/gpulint/internal/source"
)

// LintBytes lints one file's content. path is used for positions, kind
// detection needs no file name, and the project file is looked up from
// path's directory.
func (l *Linter) LintBytes(ctx context.Context, path string, data []byte) (FileResult, error) {
	return l.lintBytes(ctx, path, data, true)
}

// lintBytes lints one file; compose adds what composing the file's
// kustomization reports on it (kustomize.go), which reads the other
// files of the kustomization alone, without composing.
func (l *Linter) lintBytes(ctx context.Context, path string, data []byte, compose bool) (FileResult, error) {
	fr := FileResult{Path: path, Kind: source.KindUnknown, Data: data}
	if isShellScript(path) {
		// A launch script is context for the configs it names
		// (related_launch.go), not a config: it is never parsed as one.
		return fr, nil
	}
	proj := l.project(path)
	lim, timeout := l.limits(proj)
	// The timeout bounds all of the file's work - parsing, schema checks,
	// evaluation, fixes - checked between stages; each stage is linear or
	// capped, so none runs long past it.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	f, err := source.Parse(path, data, lim)
	var perr *source.Error
	if err != nil {
		if !errors.As(err, &perr) {
			return fr, err
		}
		fr.Findings = append(fr.Findings, l.parseFinding(perr))
	}
	if f == nil || len(f.Docs) == 0 {
		if perr != nil {
			fr.Kind = source.DetectText(data)
		}
		// A parse error is silenced by the project file like any rule.
		fr.Findings, fr.ignored = proj.Filter(path, fr.Findings)
		return fr, nil
	}
	fr.Kind = source.Detect(f)
	// log collects the context lookups the result consults, for the
	// result cache.
	log := &lookupLog{}
	if fr.Kind == source.KindUnknown && perr != nil {
		fr.Kind = source.DetectText(data)
	}
	if fr.Kind == source.KindUnknown && perr == nil && compose && kustomize.IsKustomization(filepath.Base(path)) {
		// A kustomization that leaves out apiVersion and kind, as
		// kustomize allows: what it composes is a Kubernetes workload.
		if err := l.addComposed(ctx, &fr, path, proj, log); err != nil {
			return fr, err
		}
		if len(fr.Findings) > 0 || fr.Sizing != nil {
			fr.Kind = source.KindKubernetes
		}
	}
	if fr.Kind == source.KindUnknown {
		// A file that did not parse whole and could not be classified
		// still reports its syntax error; a valid unknown file is skipped.
		fr.Findings, fr.ignored = proj.Filter(path, fr.Findings)
		fr.related = append(fr.related, log.probes...)
		return fr, nil
	}
	// The kind's rules get ready while the documents are normalized and
	// checked against their schema.
	l.deps.Engine.Warm(string(fr.Kind))
	subjects, fs := l.subjects(f, fr.Kind, proj, log)
	fr.Findings = append(fr.Findings, fs...)
	found, z, rel, incomplete, err := l.evaluateSubjects(ctx, subjects, proj)
	if err != nil {
		return fr, err
	}
	fr.Findings = append(fr.Findings, found...)
	fr.Sizing, fr.related = z, append(fr.related, rel...)
	fr.incomplete = fr.incomplete || incomplete
	if fr.Kind == source.KindKubernetes {
		// A container that launches a recipe of the repository: the
		// recipe's verdict is the manifest's too.
		z, rel := l.launchedSizing(ctx, path)
		fr.Sizing = tighter(fr.Sizing, z)
		fr.related = append(fr.related, rel...)
		// An overlay's patch that states the hardware: the workload
		// kustomize composes from it and its bases.
		if compose {
			if err := l.addComposed(ctx, &fr, path, proj, log); err != nil {
				return fr, err
			}
		}
	}
	fr.related = append(fr.related, log.probes...)
	fr.Findings, fr.ignored = proj.Filter(path, finding.Sort(fr.Findings))
	fr.Findings = l.applySuppressions(f, fr.Findings)
	finding.SplitLong(fr.Findings)
	relativePaths(&fr)
	return fr, nil
}

// ruleParams returns the project's rule parameters keyed by rule slug,
// the key rules read them under, whether the project file named the rule
// by id or by slug.
func (l *Linter) ruleParams(proj *config.Project) map[string]any {
	out := map[string]any{}
	for k, v := range proj.Params() {
		if r, ok := l.deps.Catalog.Lookup(k); ok {
			k = r.Slug
		}
		out[k] = v
	}
	return out
}

// subjects builds the evaluation units of a file, and the schema findings
// of each document.
func (l *Linter) subjects(f *source.File, kind source.Kind, proj *config.Project, log *lookupLog) ([]*subject, []finding.Finding) {
	var out []*subject
	var fs []finding.Finding
	for i, d := range f.Docs {
		if d.Root == nil {
			continue
		}
		lim, _ := l.limits(proj)
		value, err := d.Root.ToValue(lim.MaxNodes)
		if err != nil {
			var perr *source.Error
			switch {
			case errors.As(err, &perr):
				fs = append(fs, l.parseFinding(perr))
			case errors.Is(err, source.ErrTooManyNodes):
				fs = append(fs, l.parseFinding(&source.Error{File: f.Path, Pos: d.Root.Start, Msg: err.Error(), Limit: true}))
			default:
				return nil, append(fs, l.parseFinding(&source.Error{File: f.Path, Pos: d.Root.Start, Msg: err.Error()}))
			}
			continue
		}
		s := &subject{kind: string(kind), file: f, doc: i, root: d.Root, value: value, lookups: log}
		if kind == source.KindHelm {
			// A chart's values are no config of their own: the rules read
			// the vLLM server each model spec deploys.
			hs, hfs := l.helmSubjects(s, proj)
			out = append(out, hs...)
			fs = append(fs, hfs...)
			continue
		}
		schema := ""
		if ss := schemasFor(kind); len(ss) > 0 {
			schema = ss[0]
		}
		switch kind {
		case source.KindVLLM:
			s.value, s.keyMap, s.snake, s.dropped = canonicalVLLM(d.Root, value)
		case source.KindMIG:
			schema = "device-plugin"
			if m, ok := value.(map[string]any); ok && m["mig-configs"] != nil {
				schema = "mig-parted"
			}
		case source.KindKubernetes:
			if m, ok := value.(map[string]any); !ok || m["apiVersion"] == nil || m["kind"] == nil {
				continue // a non-manifest document among manifests
			}
		}
		s.work = normalize.Normalize(string(kind), s.value)
		var hints targetHints
		if kind == source.KindDeepSpeed {
			if la := l.launcherFor(f.Path); la != nil && la.processes > 0 {
				hints.GPUs, hints.GPUsFrom = int(la.processes), "accelerate"
				hints.GPUsAt = &relatedPath{ref: "launcher", path: la.procAt,
					message: fmt.Sprintf("num_processes %d in the Accelerate config that launches this file", la.processes)}
				s.launcher = la
			}
		}
		if kind == source.KindFinetune || kind == source.KindAccelerate {
			l.recipeDeepSpeed(s)
		}
		if kind == source.KindDeepSpeed || kind == source.KindAccelerate || kind == source.KindFinetune {
			l.linkLaunch(s, &hints)
		}
		if kind == source.KindFinetune {
			hints.Comment = l.commentHardware(f)
		}
		s.tgt = l.resolveTarget(f.Path, proj, s.work, hints)
		fs = append(fs, l.schemaFindings(s, schema)...)
		out = append(out, s)
		if kind == source.KindMIG {
			s.extra = map[string]any{"mig": migInput(l.deps.Targets.Catalog(), s.value, s.tgt)}
		}
		if kind == source.KindKubernetes {
			ks, kfs := l.kubernetesSubjects(s, proj)
			out = append(out, ks...)
			fs = append(fs, kfs...)
		}
	}
	return out, fs
}

// schemaFindings validates a subject's canonical value with the checks
// derived from its CUE schema.
func (l *Linter) schemaFindings(s *subject, schema string) []finding.Finding {
	if l.deps.Validator == nil || schema == "" {
		return nil
	}
	vs, err := l.deps.Validator.Validate(schema, s.value)
	if err != nil {
		return nil
	}
	if schema == "vllm" {
		vs = append(judgeAmbiguous(s, judgeRemovals(s, vs)), droppedFalseKeys(s)...)
	}
	r, _ := l.deps.Catalog.Lookup("schema")
	out := make([]finding.Finding, 0, len(vs))
	for _, v := range vs {
		f := l.stamp(r, finding.Finding{
			Message: v.Message,
			Range:   s.locate(v.Path),
			Path:    s.docPath(v.Path),
		}, v.Severity)
		showsAbbreviation(&f, s, v.Path)
		out = append(out, f)
	}
	return out
}

// canonicalVLLM rewrites a vLLM config's top-level keys to kebab-case
// option names and remembers how each was written. vLLM hands each key to
// argparse as "--" + key, so a key that abbreviates one option is that
// option (cmdline.ExpandLong); but a boolean key set to false becomes
// "--no-" + key only when that is an option string as written, else vLLM
// drops it (load_config_file, vllm/utils/argparse_utils.py @ 00da11e), so
// such a key is not expanded and stays unknown.
//
// It also returns the keys vLLM drops although written false
// (droppedFalse), by canonical name.
func canonicalVLLM(root *source.Node, value any) (any, map[string]string, bool, []string) {
	m, ok := value.(map[string]any)
	if !ok {
		return value, nil, false, nil
	}
	var dropped []string
	out := make(map[string]any, len(m))
	keyMap := map[string]string{}
	var snake, kebab int
	for _, e := range root.Entries {
		k := e.Key.Text
		ck := vllmConfigKey(k, m[k])
		keyMap[ck] = k
		switch {
		case strings.Contains(k, "_"):
			snake++
		case strings.Contains(k, "-"):
			kebab++
		}
	}
	for k, v := range m {
		if droppedFalse(k, v) {
			// vLLM never sees the key: the option keeps its default.
			dropped = append(dropped, source.KebabKey(k))
			continue
		}
		out[vllmConfigKey(k, v)] = v
	}
	slices.Sort(dropped)
	return out, keyMap, snake > kebab, dropped
}

// droppedFalse reports whether vLLM drops a `vllm serve --config` key
// that names a boolean option in another spelling than its own and is set
// to false. load_config_file (vllm/utils/argparse_utils.py @ 00da11e)
// writes a false key as "--no-" + key only when that exact string is an
// option (before FlexibleArgumentParser turns underscores into dashes), so
// enable_prefix_caching: false becomes nothing and prefix caching keeps
// its default. Older releases dropped a false key more often: vllm/utils.py
// @ 509c60e (v0.6 era) passes "--key false" only for StoreBoolean options
// and drops every other false key whatever its spelling; that loses nothing
// there, where such options were store_true and off by default, and the
// underscore spelling is dropped in both. This reads the newest parser. An
// abbreviated key is judgeAmbiguous's.
func droppedFalse(k string, v any) bool {
	if b, ok := v.(bool); !ok || b {
		return false
	}
	ck := source.KebabKey(k)
	o, ok := cmdline.LookupOption(ck)
	if !ok || o.Type != cmdline.TypeBool || o.Name != ck {
		return false
	}
	return k != o.Name || !o.Negatable
}

// vllmConfigKey is the canonical name of a `vllm serve --config` key.
func vllmConfigKey(k string, v any) string {
	ck := source.KebabKey(k)
	if b, isBool := v.(bool); isBool && !b {
		return ck
	}
	if full, _ := cmdline.ExpandLong(ck); full != "" {
		return full
	}
	return ck
}

// commentHardware reads the hardware statement of a recipe's leading
// comment (recipe.StatedHardware knows the phrasing, the catalog the GPU
// names, or the variants a name without its memory may mean:
// tuner.Catalog.MemoryVariants); nil when there is none.
func (l *Linter) commentHardware(f *source.File) *commentTarget {
	resolve := func(name string) []string {
		pl, ok := l.deps.Targets.gpu(name)
		if ok && pl.MIG == nil {
			return []string{pl.GPU.Name}
		}
		if ok {
			return nil
		}
		var out []string
		for _, g := range l.deps.Targets.cat.MemoryVariants(name) {
			out = append(out, g.Name)
		}
		return out
	}
	hw, ok := recipe.StatedHardware(f.Data, resolve)
	if !ok {
		return nil
	}
	return &commentTarget{hw: hw, at: finding.Range{File: f.Path, Start: f.PosAt(hw.Start), End: f.PosAt(hw.End)}}
}

// evaluateSubjects runs the rules and the tuner on a file's subjects: the
// findings, the tightest sizing, the other files the result rests on,
// and whether the evaluation timeout cut it short.
func (l *Linter) evaluateSubjects(ctx context.Context, subjects []*subject, proj *config.Project) ([]finding.Finding, *Sizing, []relatedFile, bool, error) {
	var out []finding.Finding
	var sizing *Sizing
	var related []relatedFile
	incomplete := false
	_, timeout := l.limits(proj)
	params := l.ruleParams(proj)
	headroom := headroomParam(params)
	for _, s := range subjects {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			out = append(out, l.timeoutFinding(s, "checking this file", timeout))
			incomplete = true
			break
		}
		s.tgt.Headroom = headroom
		s.tgt = s.withRelease(s.tgt)
		if s.launcher != nil && s.tgt.GPUsAt != nil {
			related = append(related, s.launcher.digest())
		}
		if s.deepspeed != nil {
			related = append(related, s.deepspeed.digest())
		}
		for _, r := range s.linked {
			related = append(related, r.digest())
		}
		if id := s.tgt.ModelID; id != "" && s.tgt.ModelFrom != "flag" && l.deps.Targets != nil {
			if _, known := l.deps.Targets.cat.Model(id); !known {
				// A model id the catalog does not know is tried as a local
				// model directory (TargetResolver.model), which may appear,
				// change or go away; as the run does, from the working
				// directory.
				related = append(related, relatedFile{Probe: probeModelDir, Path: id, Sum: modelDirSum(id)})
			}
		}
		out = append(out, l.overrideFindings(s)...)
		found, cut, err := l.evaluate(ctx, s, params)
		if err != nil {
			return nil, nil, nil, false, err
		}
		incomplete = incomplete || cut
		sizing = tighter(sizing, s.sizing)
		tuned := l.tuneFindings(s)
		attachPlanFix(found, tuned)
		out = append(out, found...)
		out = append(out, tuned...)
	}
	return out, sizing, related, incomplete, nil
}
