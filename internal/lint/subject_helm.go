package lint

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/helm"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// helmSubjects derives one vLLM subject from each model a serving chart's
// values deploy (helm.ProductionStack, or helm.SubstratusVLLM for a values
// file of substratusai's vllm chart): the options the chart writes from
// the model spec, then its extraArgs, which win; the GPU count is
// requestGPU and the GPU what nodeSelectorTerms name. Each option is
// located where the values file states it. No fix is offered: an edit
// would have to know which of the two places the chart reads.
func (l *Linter) helmSubjects(s *subject, proj *config.Project) ([]*subject, []finding.Finding) {
	root := s.file.Docs[s.doc].Root
	var out []*subject
	var fs []finding.Finding
	if n, ok := helm.NIMLLM(s.value); ok {
		// The nim-llm chart's values: the NIM server its pod runs.
		if ns := l.nimSubject(s, n, proj); ns != nil {
			return []*subject{ns}, nil
		}
		return nil, nil
	}
	specs := helm.ProductionStack(s.value)
	podSpec := false
	var sizedFrom []SizingSource
	if len(specs) == 0 {
		// Values of substratusai's vllm chart: the chart is the one its
		// Chart.yaml names, or the one whose own keys the values set.
		name := ""
		chart := l.chartOf(s.file.Path, s.lookups)
		if chart != nil {
			name = chartName(chart)
		}
		if tv := helm.SubstratusTGI(s.value, name); tv != nil {
			if ts := l.tgiChartSubject(s, tv, chart, proj); ts != nil {
				return []*subject{ts}, nil
			}
			return nil, nil
		}
		if ms := helm.SubstratusVLLM(s.value, name); ms != nil {
			specs, podSpec = []helm.ModelSpec{*ms}, true
			if name != "" {
				s.linked = append(s.linked, *chart)
				line := 1
				if n := chart.file.Docs[0].Root.Get("name"); n != nil {
					line = n.Start.Line
				}
				sizedFrom = append(sizedFrom, SizingSource{Role: "chart", File: chart.path, Line: line})
			}
		}
	}
	for _, ms := range specs {
		val := map[string]any{}
		em := &embedded{keys: map[string]finding.Range{}, whole: s.locate(ms.Path)}
		if n, _, matched := root.Lookup(ms.Path); n != nil && matched == len(ms.Path) && n.Kind == source.MapNode && len(n.Entries) > 0 {
			em.whole = n.Entries[0].Key.Range(s.file.Path) // the spec's first key, not the whole block
		}
		for _, o := range ms.Options {
			val[o.Name] = o.Value
			em.keys[o.Name] = s.locate(o.Path)
		}
		var cmd *cmdline.Command
		if ms.ExtraArgs != nil {
			node, _, _ := root.Lookup(ms.ExtraArgs)
			cmd = cmdline.ParseArgList(s.file.Path, argsOf(s.file, node), nil)
			a := &argvSubject{file: s.file, cmd: cmd}
			for k, v := range cmd.Config() {
				val[k] = v
				if r, ok := a.locate([]any{k}); ok {
					em.keys[k] = r
				}
			}
		}
		vs := &subject{
			lookups:   s.lookups,
			kind:      string(source.KindVLLM),
			file:      s.file,
			doc:       s.doc,
			root:      root,
			prefix:    clone(ms.Path),
			value:     val,
			embed:     em,
			linked:    s.linked,
			sizedFrom: sizedFrom,
		}
		vs.work = normalize.VLLM(val)
		h := targetHints{At: s.locate, Hints: kube.TermsHints(ms.Terms, ms.TermsAt)}
		if m, ok := s.value.(map[string]any); ok && podSpec {
			// The chart copies nodeSelector and affinity into the pod
			// spec as they are.
			h.Hints = kube.PodSpecHints(m, nil)
		}
		switch {
		case ms.GPUType == "nvidia.com/gpu" && ms.GPUs > 0:
			r := s.locate(ms.GPUsAt)
			h.GPUs, h.GPUsRange = int(ms.GPUs), &r
		case strings.HasPrefix(ms.GPUType, "nvidia.com/mig-"):
			h.MIGProfile = strings.TrimPrefix(ms.GPUType, "nvidia.com/mig-")
		}
		vs.tgt = l.resolveTarget(s.file.Path, proj, vs.work, h)
		if (cmd != nil && sizesUnknown(cmd)) || offloadsWeights(val) || len(ms.Unread) > 0 {
			vs.tgt.Model = nil
		}
		fs = append(fs, l.schemaFindings(vs, "vllm")...)
		out = append(out, vs)
	}
	return out, fs
}

// chartOf reads the Chart.yaml of the chart a values file belongs to: in
// the file's directory (the chart's own values.yaml) or the one above it
// (a chart's examples/ values); nil when neither holds one that parses.
func (l *Linter) chartOf(path string, log *lookupLog) *relatedSource {
	lim, _ := l.limits(nil)
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		p := filepath.Join(dir, "Chart.yaml")
		log.add(fileProbe(p)) // it may appear, change or go away
		data, err := readLimited(p, min(lim.MaxBytes, 1<<16))
		if err != nil {
			continue
		}
		f, err := source.Parse(p, data, lim)
		if err != nil || len(f.Docs) == 0 || f.Docs[0].Root == nil {
			return nil
		}
		return &relatedSource{path: p, file: f}
	}
	return nil
}

// chartName is the name a Chart.yaml gives its chart.
func chartName(c *relatedSource) string {
	if n := c.file.Docs[0].Root.Get("name"); n != nil && n.Kind == source.ScalarNode {
		return n.Text
	}
	return ""
}

// tgiChartSubject derives the TGI subject of substratusai's
// text-generation-inference chart values (helm.SubstratusTGI), nil when
// what the estimate rests on is not known (cmdline.TGI.ServeConfig). With
// no max-total-tokens, the launcher's default for the image's release is
// taken (cmdline.TGIDefaultMaxTotalTokens): the release is image.tag or,
// left empty, the chart's appVersion (the template's `.Values.image.tag |
// default .Chart.AppVersion`), and the sequence length is an assumed
// input, since the values do not state it.
func (l *Linter) tgiChartSubject(s *subject, tv *helm.TGIValues, chart *relatedSource, proj *config.Project) *subject {
	t := &cmdline.TGI{Options: map[string]cmdline.TGIOption{}}
	at := map[string]finding.Range{}
	byOpt := map[string]finding.Range{}
	for _, o := range tv.Options {
		t.Options[o.Name] = cmdline.TGIOption{Name: o.Name, Value: scalarText(o.Value), Arg: -1, Unknown: o.Value == nil}
		byOpt[o.Name] = s.locate(o.Path)
	}
	assumed := map[string]string{}
	var sizedFrom []SizingSource
	if _, ok := t.Options["max-total-tokens"]; !ok {
		release, relAt := tv.ImageTag, s.locate(tv.ImageTagAt)
		if release == "" && chart != nil {
			if n := chart.file.Docs[0].Root.Get("appVersion"); n != nil && n.Kind == source.ScalarNode {
				release, relAt = n.Text, chart.locate([]any{"appVersion"})
			}
		}
		n, ok := cmdline.TGIDefaultMaxTotalTokens(release)
		if !ok {
			return nil
		}
		t.Options["max-total-tokens"] = cmdline.TGIOption{Name: "max-total-tokens", Value: fmt.Sprint(n), Arg: -1}
		byOpt["max-total-tokens"] = relAt
		assumed["seq_len"] = fmt.Sprintf("max_total_tokens %d is TGI %s's launcher default; set MAX_TOTAL_TOKENS in env to state it", n, release)
	}
	cfg, from, note, err := t.ServeConfig(int(tv.GPUs))
	if err != nil {
		return nil
	}
	if note != "" && assumed["seq_len"] == "" {
		assumed["seq_len"] = note
	}
	for key, opt := range from {
		if r, ok := byOpt[opt]; ok {
			at[key] = r
		}
	}
	if chart != nil {
		s.linked = append(s.linked, *chart)
		line := 1
		if n := chart.file.Docs[0].Root.Get("name"); n != nil {
			line = n.Start.Line
		}
		sizedFrom = append(sizedFrom, SizingSource{Role: "chart", File: chart.path, Line: line})
	}
	root := s.file.Docs[s.doc].Root
	whole := root.Range(s.file.Path)
	if len(root.Entries) > 0 {
		whole = root.Entries[0].Key.Range(s.file.Path)
	}
	ts := &subject{lookups: s.lookups, kind: kindTGI, file: s.file, doc: s.doc, root: root, value: cfg,
		optAt: at, whole: &whole, assumed: assumed, linked: s.linked, sizedFrom: sizedFrom}
	ts.work = normalize.TGI(cfg)
	h := targetHints{At: s.locate}
	if m, ok := s.value.(map[string]any); ok {
		h.Hints = kube.PodSpecHints(m, nil)
	}
	if tv.GPUs > 0 {
		r := s.locate(tv.GPUsAt)
		h.GPUs, h.GPUsRange = int(tv.GPUs), &r
	}
	ts.tgt = l.resolveTarget(s.file.Path, proj, ts.work, h)
	return ts
}

// scalarText renders a values scalar as the text an env var carries.
func scalarText(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
