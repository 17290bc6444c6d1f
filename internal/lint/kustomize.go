package lint

import (
	"context"
	"path/filepath"
	"slices"
	"sort"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/kustomize"
	"github.com/gpulint/gpulint/internal/source"
)

// A platform repository keeps a GPU server as a kustomize base and
// overlays: the base Deployment holds the vLLM args with $(VAR)
// references, an overlay patches the node selector and resources and
// generates the ConfigMap the variables come from. No file holds GPU and
// model together, so the overlay is composed as `kustomize build` would
// compose it (internal/kustomize) and the composed pod is sized like any
// manifest. The verdicts are reported on the overlay's file that states
// the hardware (a patch of the kustomization), or on the kustomization
// when the hardware comes from a base, each with the files every value
// came from as related locations. Only what composing adds is reported:
// a rule that fires on one of the files the workload is composed from,
// linted alone, reports there already. The fixes are dropped: they would
// edit the composed text, not the files.

// composed is one resource of a kustomization, rendered as a manifest.
type composed struct {
	build *kustomize.Build
	file  *source.File
	lines []kustomize.Line
}

// kustomizeBuild composes the kustomization at k once per run.
func (l *Linter) kustomizeBuild(k string, lim source.Limits) *kustomize.Build {
	ri := l.related
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if b, ok := ri.builds[k]; ok {
		return b
	}
	b := kustomize.BuildFile(k, kustomize.Options{Root: l.repoRoot(k), Limits: lim})
	ri.builds[k] = b
	return b
}

// composedFindings sizes the workloads of the kustomization in path's
// directory whose hardware path states, or, for the kustomization itself,
// those whose hardware no patch of it states.
// Its result holds while the same kustomization (or none) composes the
// file and every file its build reads is unchanged (kustomizeProbe): one
// may come to compose or patch the manifest. Lookups the composed
// subjects consult go to log.
func (l *Linter) composedFindings(ctx context.Context, path string, proj *config.Project, log *lookupLog) ([]finding.Finding, *Sizing, []relatedFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, nil, nil
	}
	log.add(l.kustomizeProbe(abs))
	k := kustomize.Find(filepath.Dir(abs))
	if k == "" {
		return nil, nil, nil, nil
	}
	lim, _ := l.limits(proj)
	b := l.kustomizeBuild(k, lim)
	if (abs != k && !slices.Contains(b.Patches, abs)) || b.Unsure {
		return nil, nil, nil, nil
	}
	var rel []relatedFile
	var out []finding.Finding
	var best *Sizing
	for _, r := range b.Resources {
		if r.Kind == "ConfigMap" {
			continue
		}
		text, lines := kustomize.Render(r.Doc)
		vf, err := source.Parse(path, text, lim)
		if err != nil || len(vf.Docs) == 0 || vf.Docs[0].Root == nil {
			continue
		}
		c := composed{build: b, file: vf, lines: lines}
		hw, ok := c.hardware(abs, k)
		if !ok || !c.combines() {
			continue
		}
		subjects, _ := l.subjects(vf, source.KindKubernetes, proj, log)
		fs, z, _, _, err := l.evaluateSubjects(ctx, subjects, proj)
		if err != nil {
			return nil, nil, nil, err
		}
		alone, arel := l.aloneRules(ctx, c.files())
		rel = append(rel, arel...)
		for _, f := range fs {
			if alone[f.Rule] {
				continue
			}
			out = append(out, c.remap(f, hw, path, abs))
		}
		if z != nil {
			z.Related = append(z.Related, c.sources(path, abs)...)
			if z.Note == "" && len(b.Notes) > 0 {
				z.Note = "composed without what kustomize build would read: " + b.Notes[0].Message
			}
			best = tighter(best, z)
		}
	}
	return out, best, rel, nil
}

// addComposed adds to a file's result what composing its kustomization
// reports on it.
func (l *Linter) addComposed(ctx context.Context, fr *FileResult, path string, proj *config.Project, log *lookupLog) error {
	kf, kz, krel, err := l.composedFindings(ctx, path, proj, log)
	if err != nil {
		return err
	}
	fr.Findings = append(fr.Findings, kf...)
	fr.Sizing = tighter(fr.Sizing, kz)
	fr.related = append(fr.related, krel...)
	return nil
}

// aloneRules lints each file alone (without composing), once per run,
// and returns the rules that fired on any of them, and the context those
// results rest on (their own lookups; their content is the build's).
func (l *Linter) aloneRules(ctx context.Context, files []string) (map[string]bool, []relatedFile) {
	out := map[string]bool{}
	var rel []relatedFile
	for _, p := range files {
		l.related.mu.Lock()
		a, ok := l.related.alone[p]
		l.related.mu.Unlock()
		if !ok {
			lim, _ := l.limits(l.project(p))
			if data, err := readLimited(p, lim.MaxBytes); err == nil {
				if fr, err := l.lintBytes(ctx, p, data, false); err == nil {
					for _, f := range fr.Findings {
						a.rules = append(a.rules, f.Rule)
					}
					a.related = fr.related
				}
			}
			l.related.mu.Lock()
			l.related.alone[p] = a
			l.related.mu.Unlock()
		}
		for _, r := range a.rules {
			out[r] = true
		}
		rel = append(rel, a.related...)
	}
	return out, rel
}

// aloneResult is what a file of a kustomization gives linted alone.
type aloneResult struct {
	rules   []string
	related []relatedFile
}

// files lists the files the composed resource holds values of.
func (c composed) files() []string {
	seen := map[string]bool{}
	var out []string
	for _, ln := range c.lines {
		if !seen[ln.At.File] {
			seen[ln.At.File] = true
			out = append(out, ln.At.File)
		}
	}
	sort.Strings(out)
	return out
}

// at maps a range of the rendered manifest to where its line's value was
// written; ok is false for a range of another file.
func (c composed) at(r finding.Range) (kustomize.Line, bool) {
	if r.File != c.file.Path || r.Start.Line < 1 || r.Start.Line > len(c.lines) {
		return kustomize.Line{}, false
	}
	return c.lines[r.Start.Line-1], true
}

// hardware finds where the composed pod states its GPU (a node selector
// or affinity the hardware table knows, a GKE ComputeClass it selects,
// else its GPU limit) and reports whether the
// verdict belongs to the file at abs: the patch that states it, or the
// kustomization k when none of its own patches does.
func (c composed) hardware(abs, k string) (finding.Range, bool) {
	root := c.file.Docs[0].Root
	v, err := root.ToValue(1_000_000)
	if err != nil {
		return finding.Range{}, false
	}
	for _, p := range kube.FindPods(v) {
		var path []any
		switch {
		case p.ProductAt != nil:
			path = p.ProductAt
		case len(p.Hints) > 0:
			path = p.Hints[0].Path
		case p.NodeSelector[kube.ComputeClassLabel] != "":
			path = append(clone(p.Path), "nodeSelector", kube.ComputeClassLabel)
		default:
			for _, ct := range p.Containers {
				if ct.GPUPath != nil {
					path = ct.GPUPath
					break
				}
			}
		}
		if path == nil {
			continue
		}
		n, _, matched := root.Lookup(path)
		if matched != len(path) {
			continue
		}
		ln, ok := c.at(n.Range(c.file.Path))
		if !ok {
			continue
		}
		switch {
		case ln.At.File == abs:
			return ln.At, true
		case abs == k && !slices.Contains(c.build.Patches, ln.At.File):
			return finding.Range{File: abs, Start: finding.Pos{Line: 1, Col: 1}, End: finding.Pos{Line: 1, Col: 1}}, true
		}
		return finding.Range{}, false
	}
	return finding.Range{}, false
}

// combines reports whether the composed resource holds values of more
// than one file: otherwise its own file already says all of it.
func (c composed) combines() bool {
	files := map[string]bool{}
	for _, ln := range c.lines {
		files[ln.At.File] = true
		for _, v := range ln.Via {
			files[v.At.File] = true
		}
	}
	return len(files) > 1
}

// remap moves a finding of the rendered manifest onto the file that
// states the hardware, with every place it read as a related location.
// Its fixes are dropped: they would edit the rendered text.
func (c composed) remap(f finding.Finding, hw finding.Range, path, abs string) finding.Finding {
	g := f
	g.Fixes, g.Path = nil, nil
	var related []finding.Related
	seen := map[string]bool{}
	add := func(r finding.Range, msg string) {
		key := r.File + "\x00" + msg
		if seen[key] {
			return
		}
		seen[key] = true
		related = append(related, finding.Related{Range: r, Message: msg})
	}
	disp := func(p string) string { return displayPath(path, abs, p) }
	addLine := func(r finding.Range, msg string) finding.Range {
		ln, ok := c.at(r)
		if !ok {
			add(r, msg)
			return r
		}
		at := ln.At
		at.File = disp(at.File)
		add(at, msg)
		for _, v := range ln.Via {
			va := v.At
			va.File = disp(va.File)
			add(va, v.What+" in $(VAR)")
		}
		return at
	}
	g.Range = hw
	g.Range.File = path
	addLine(f.Range, "the composed value this verdict reads")
	for _, r := range f.Related {
		addLine(r.Range, r.Message)
	}
	g.Evidence = slices.Clone(f.Evidence)
	for i, in := range g.Evidence {
		if in.Range == nil {
			continue
		}
		at := addLine(*in.Range, in.Name+" "+in.Value)
		g.Evidence[i].Range = &at
	}
	add(finding.Range{File: disp(c.build.Path), Start: finding.Pos{Line: 1, Col: 1}, End: finding.Pos{Line: 1, Col: 1}},
		"the kustomization this verdict composes, as kustomize build would")
	for _, n := range c.build.Notes {
		at := n.At
		at.File = disp(at.File)
		add(at, "not composed: "+n.Message)
	}
	g.Related = related
	return g
}

// sources lists the files the composed resource was read from, each at
// its first line that holds a value, for files[].sizing.related.
func (c composed) sources(path, abs string) []SizingSource {
	first := map[string]int{}
	role := map[string]string{}
	note := func(r finding.Range, rl string) {
		if l, ok := first[r.File]; !ok || r.Start.Line < l {
			first[r.File] = r.Start.Line
		}
		if role[r.File] == "" {
			role[r.File] = rl
		}
	}
	for _, ln := range c.lines {
		for _, v := range ln.Via {
			note(v.At, "env")
		}
	}
	for _, ln := range c.lines {
		rl := "base"
		if slices.Contains(c.build.Patches, ln.At.File) {
			rl = "patch"
		}
		note(ln.At, rl)
	}
	out := []SizingSource{{Role: "kustomization", File: displayPath(path, abs, c.build.Path), Line: 1}}
	files := make([]string, 0, len(first))
	for f := range first {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if f == c.build.Path {
			continue
		}
		out = append(out, SizingSource{Role: role[f], File: displayPath(path, abs, f), Line: first[f]})
	}
	return out
}
