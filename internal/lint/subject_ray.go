package lint

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/ray"
	"github.com/gpulint/gpulint/internal/source"
)

// embedded locates the paths of a subject whose value was read from
// text the manifest holds as strings (a RayService's Serve config, a
// RayJob's runtime_env and entrypoint script): each canonical top-level
// key has its range in the manifest; any other path points at whole.
type embedded struct {
	keys  map[string]finding.Range
	whole finding.Range
}

// errEmbeddedEdit refuses edits inside an embedded document: gpulint
// offers no fix there.
var errEmbeddedEdit = errors.New("no edits inside a YAML string")

func (e *embedded) locate(path []any) finding.Range {
	if len(path) > 0 {
		if k, ok := path[0].(string); ok {
			if r, ok := e.keys[k]; ok {
				return r
			}
		}
	}
	return e.whole
}

// block maps positions in a text a manifest holds as a literal block
// scalar (|) to the manifest's bytes: line n of the text is the header's
// line + n, indented by the block's indentation. Other scalar styles
// escape or fold the text, so their positions are not mapped.
type block struct {
	file  *source.File
	outer *source.Node
}

// span maps a range of the text; false when it cannot.
func (b block) span(start, end finding.Pos) (finding.Range, bool) {
	s, ok1 := b.pos(start)
	t, ok2 := b.pos(end)
	return finding.Range{File: b.file.Path, Start: s, End: t}, ok1 && ok2
}

func (b block) pos(p finding.Pos) (finding.Pos, bool) {
	if b.outer == nil || b.outer.Style != source.Literal {
		return finding.Pos{}, false
	}
	data := b.file.Data
	// The start of the line after the block header.
	off := b.outer.Start.Offset
	for off < len(data) && data[off] != '\n' {
		off++
	}
	off++
	line := b.outer.Start.Line + 1
	// The block's indentation: the first non-blank line's.
	indent := -1
	for o := off; o < len(data) && indent < 0; {
		end := bytes.IndexByte(data[o:], '\n')
		if end < 0 {
			end = len(data) - o
		}
		text := data[o : o+end]
		if len(bytes.TrimSpace(text)) > 0 {
			indent = len(text) - len(bytes.TrimLeft(text, " "))
		}
		o += end + 1
	}
	if indent < 0 {
		return finding.Pos{}, false
	}
	for line < b.outer.Start.Line+p.Line {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return finding.Pos{}, false
		}
		off += nl + 1
		line++
	}
	o := off + indent + (p.Col - 1)
	if o > len(data) || o > b.outer.End.Offset {
		return finding.Pos{}, false
	}
	return finding.Pos{Offset: o, Line: line, Col: p.Col + indent}, true
}

// textPos is the position of a byte offset in text.
func textPos(text string, off int) finding.Pos {
	off = min(max(off, 0), len(text))
	line := 1 + strings.Count(text[:off], "\n")
	col := off - (strings.LastIndexByte(text[:off], '\n') + 1) + 1
	return finding.Pos{Offset: off, Line: line, Col: col}
}

// embeddedYAML is a YAML document a manifest holds in a string, parsed,
// with the block that holds it.
type embeddedYAML struct {
	b     block
	inner *source.File
	value any
}

// parseEmbedded parses the YAML string at path of the subject's document.
func (l *Linter) parseEmbedded(s *subject, path []any, text string, proj *config.Project) (*embeddedYAML, bool) {
	root := s.file.Docs[s.doc].Root
	outer, _, matched := root.Lookup(path)
	if outer == nil || matched != len(path) || outer.Kind != source.ScalarNode {
		return nil, false
	}
	lim, _ := l.limits(proj)
	inner, err := source.Parse(s.file.Path+"#"+fmt.Sprint(path[len(path)-1]), []byte(text), lim)
	if err != nil || len(inner.Docs) != 1 || inner.Docs[0].Root == nil {
		return nil, false
	}
	v, err := inner.Docs[0].Root.ToValue(lim.MaxNodes)
	if err != nil {
		return nil, false
	}
	return &embeddedYAML{b: block{file: s.file, outer: outer}, inner: inner, value: v}, true
}

// rangeOf maps a path of the embedded document to the manifest's bytes.
func (d *embeddedYAML) rangeOf(p []any) (finding.Range, bool) {
	if d == nil {
		return finding.Range{}, false
	}
	node, entry, matched := d.inner.Docs[0].Root.Lookup(p)
	if node == nil || matched != len(p) {
		return finding.Range{}, false
	}
	start := node.Start
	if entry.Key != nil {
		start = entry.Key.Start
	}
	return d.b.span(start, node.End)
}

// keyRange is the range of the key at path in the subject's document.
func keyRange(s *subject, path []any) finding.Range {
	node, entry, _ := s.file.Docs[s.doc].Root.Lookup(path)
	if entry.Key != nil {
		return entry.Key.Range(s.file.Path)
	}
	if node != nil {
		return node.Range(s.file.Path)
	}
	return s.docStart()
}

// scriptBlock finds the entrypoint script a RayJob runs in a ConfigMap of
// the same file that the job mounts (a data key named as the script).
func scriptBlock(s *subject, script string) (block, string, bool) {
	mounted := map[string]bool{}
	for _, n := range ray.MountedConfigMaps(s.value) {
		mounted[n] = true
	}
	base := path.Base(script)
	for _, d := range s.file.Docs {
		r := d.Root
		if r == nil || r.Kind != source.MapNode {
			continue
		}
		k, md := r.Get("kind"), r.Get("metadata")
		if k == nil || k.Text != "ConfigMap" || md == nil || md.Get("name") == nil || !mounted[md.Get("name").Text] {
			continue
		}
		if data := r.Get("data"); data != nil {
			if n := data.Get(base); n != nil && n.Kind == source.ScalarNode {
				return block{file: s.file, outer: n}, n.Text, true
			}
		}
	}
	return block{}, "", false
}

// rayEngineSubjects derives one vLLM subject from each vLLM engine a
// RayService's Serve config runs (ray.Engines), so the vLLM and memory
// rules size it. Its GPU is what the GPU worker group's node selector or
// affinity says, else the engine's accelerator_type; its GPU count the
// worker container's nvidia.com/gpu limit. Options the file implies rather
// than states (ray.Arg.Assumed) are assumed inputs of every verdict.
func (l *Linter) rayEngineSubjects(s *subject, pods []kube.Pod, proj *config.Project) ([]*subject, []finding.Finding) {
	var engines []ray.Engine
	var locate func(ray.Loc) (finding.Range, bool)
	var whole finding.Range
	var field []any
	var modules []*serveModuleSource // the module each engine past len(engines)-len(modules) was read from
	if at, text, ok := ray.ServeConfigPath(s.value); ok {
		serve, ok := l.parseEmbedded(s, at, text, proj)
		if !ok {
			return nil, nil
		}
		engines, whole, field = ray.Engines(serve.value), keyRange(s, at), at
		locate = func(loc ray.Loc) (finding.Range, bool) { return serve.rangeOf(loc.Path) }
		for _, m := range ray.ImportModules(serve.value) {
			mod, ok := serveModule(s, m.Module)
			if !ok {
				continue
			}
			for _, e := range ray.ModuleEngines(mod.text, m) {
				for i, a := range e.Args {
					if a.Name == "model" {
						e.Args[i].Assumed = strings.TrimPrefix(a.Assumed+"; read from "+mod.where+", taken as the module the application's import_path "+m.Module+" names", "; ")
					}
				}
				engines = append(engines, e)
				modules = append(modules, mod)
			}
		}
	} else if script, envAt, envText, ok := ray.JobEntrypoint(s.value); ok {
		b, src, ok := scriptBlock(s, script)
		if !ok {
			return nil, nil
		}
		env, _ := l.parseEmbedded(s, envAt, envText, proj)
		var envValue any
		if env != nil {
			envValue = env.value
		}
		field = []any{"spec", "entrypoint"}
		engines, whole = ray.ScriptEngines(src, envValue), keyRange(s, field)
		locate = func(loc ray.Loc) (finding.Range, bool) {
			switch loc.In {
			case "runtime_env":
				return env.rangeOf(loc.Path)
			case "script":
				return b.span(textPos(src, loc.Off), textPos(src, loc.End))
			}
			return finding.Range{}, false
		}
	} else {
		return nil, nil
	}
	pod, gpuCont, ok := rayGPUWorker(pods)
	var out []*subject
	var fs []finding.Finding
	fromConfig := len(engines) - len(modules)
	configLocate := locate
	for ei, eng := range engines {
		locate := configLocate
		var mod *serveModuleSource
		if ei >= fromConfig {
			mod = modules[ei-fromConfig]
			locate = mod.locator(configLocate)
		}
		val := map[string]any{}
		em := &embedded{keys: map[string]finding.Range{}, whole: whole}
		if r, ok := locate(eng.App); ok {
			em.whole = r
		}
		assumed := map[string]string{}
		assumedOpts := map[string]finding.Input{}
		var notes []string
		modelAssumed := false
		unknown := false
		for _, n := range eng.Unknown {
			unknown = unknown || memoryFlags[n] || n == "engine_kwargs"
		}
		for _, a := range eng.Args {
			if !memoryFlags[a.Name] {
				continue
			}
			if sv, ok := a.Value.(string); ok && kube.IsPlaceholder(sv) {
				unknown = true // set when the file is rendered: no memory verdict can hold
				continue
			}
			val[a.Name] = a.Value
			if r, ok := locate(a.At); ok {
				em.keys[a.Name] = r
			}
			switch {
			case a.Assumed != "" && a.Name == "model":
				modelAssumed = true
				notes = append([]string{a.Assumed}, notes...)
			case a.Assumed != "":
				notes = append(notes, fmt.Sprintf("%s %v %s", a.Name, a.Value, a.Assumed))
				// A finding on the option itself rests on it too.
				in := finding.Input{Name: a.Name, Value: fmt.Sprintf("%v %s", a.Value, a.Assumed), Source: finding.SourceAssumed,
					Settle: "state it in the application's runtime_env env_vars"}
				if r, ok := em.keys[a.Name]; ok {
					in.Range = &r
				}
				assumedOpts[a.Name] = in
			}
		}
		// A model the file only implies yields to one a flag or the
		// project file states; otherwise the verdicts say what they assume.
		if pt := proj.Target(s.file.Path); modelAssumed && (l.opts.Model != "" || (pt != nil && pt.Model != "")) {
			delete(val, "model")
			delete(em.keys, "model")
		} else if len(notes) > 0 {
			assumed["model"] = strings.Join(notes, "; ") + "; --model or targets.model states it"
		}
		vs := &subject{
			lookups:     s.lookups,
			kind:        string(source.KindVLLM),
			file:        s.file,
			doc:         s.doc,
			root:        s.root,
			prefix:      clone(field),
			value:       val,
			embed:       em,
			assumed:     assumed,
			assumedOpts: assumedOpts,
		}
		if mod != nil && mod.src != nil {
			vs.linked = append(vs.linked, *mod.src)
		}
		vs.work = normalize.VLLM(val)
		h := targetHints{At: s.locate}
		if ok {
			h = l.podHints(s, pod)
			h.GPUs = int(gpuCont.GPU)
			if gpuCont.GPU > 0 {
				r := s.locate(append(clone(gpuCont.Path), "resources", "limits"))
				h.GPUsRange = &r
			}
			// Ray places an engine's TP x PP workers across the group's
			// pods: when they span pods, the engine gets TP x PP GPUs.
			if par := parallelOf(vs); par.TP*par.PP > gpuCont.GPU && pod.GroupGPUs >= par.TP*par.PP {
				h.GPUs = int(par.TP * par.PP)
				h.GPUsRange = nil // the count is the engine's, not this container's limit
			}
		}
		rayIn := l.acceleratorConflict(s, h, eng, locate, em)
		if _, _, hinted := nodeGPU(h.Hints); h.Product == "" && !hinted && eng.Accelerator != "" {
			if _, known := l.deps.Targets.gpu(eng.Accelerator); known {
				r := em.whole
				if ar, ok := locate(eng.AcceleratorAt); ok {
					r = ar
				}
				h.Product, h.ProductAt = eng.Accelerator, &r
				if eng.AcceleratorAssumed != "" {
					assumed["gpu"] = "accelerator_type " + eng.Accelerator + " " + eng.AcceleratorAssumed + "; --gpu or targets.gpu states it"
				}
			}
		}
		vs.tgt = l.resolveTarget(s.file.Path, proj, vs.work, h)
		if unknown || offloadsWeights(val) {
			vs.tgt.Model = nil
		}
		if ok {
			pm := podInput(pod)
			for j, c := range pod.Containers {
				if pathEqual(c.Path, gpuCont.Path) {
					vs.extra = map[string]any{"k8s": map[string]any{"pod": pm, "container": pm["containers"].([]any)[j]}}
				}
			}
		}
		if rayIn != nil {
			if vs.extra == nil {
				vs.extra = map[string]any{}
			}
			vs.extra["ray"] = rayIn
		}
		fs = append(fs, l.schemaFindings(vs, "vllm")...)
		out = append(out, vs)
	}
	return out, fs
}

// acceleratorConflict renders input.ray for an engine whose Ray
// accelerator_type names another GPU than the GPU worker group's nodes
// (its product label or hardware hints, nodeGPU): Ray Serve LLM and ray.data.llm
// ask for the accelerator_type:<name> resource Ray sets on nodes with that
// GPU, so no node of the group can take the replica. Both places are
// added to the subject's locations (accelerator-type, ray-node-gpu). nil
// when they agree or either is unknown.
func (l *Linter) acceleratorConflict(s *subject, h targetHints, eng ray.Engine, locate func(ray.Loc) (finding.Range, bool), em *embedded) map[string]any {
	if eng.Accelerator == "" {
		return nil
	}
	acc, ok := l.deps.Targets.gpu(eng.Accelerator)
	if !ok {
		return nil
	}
	var node string
	var nodeAt finding.Range
	switch name, at, hinted := nodeGPU(h.Hints); {
	case h.Product != "":
		pl, ok := l.deps.Targets.gpu(h.Product)
		if !ok || h.ProductAt == nil {
			return nil
		}
		node, nodeAt = pl.GPU.Name, *h.ProductAt
	case hinted:
		pl, ok := l.deps.Targets.gpu(name)
		if !ok {
			return nil
		}
		node, nodeAt = pl.GPU.Name, s.locate(at)
	default:
		return nil
	}
	if node == acc.GPU.Name {
		return nil
	}
	accAt, ok := locate(eng.AcceleratorAt)
	if !ok {
		return nil
	}
	em.keys["accelerator-type"], em.keys["ray-node-gpu"] = accAt, nodeAt
	return map[string]any{"accelerator": map[string]any{
		"value": eng.Accelerator, "gpu": acc.GPU.Name, "node_gpu": node,
		"path": []any{"accelerator-type"}, "node_path": []any{"ray-node-gpu"},
	}}
}

// rayGPUWorker picks the Ray pod the engines run on: the one pod template
// of the cluster whose container asks for GPUs (the GPU worker group);
// false when none does or several groups do.
func rayGPUWorker(pods []kube.Pod) (kube.Pod, kube.Container, bool) {
	var found []kube.Pod
	var conts []kube.Container
	for _, p := range pods {
		if p.Group != "ray" {
			continue
		}
		for _, c := range p.Containers {
			if c.GPU > 0 {
				found, conts = append(found, p), append(conts, c)
				break
			}
		}
	}
	if len(found) != 1 {
		return kube.Pod{}, kube.Container{}, false
	}
	return found[0], conts[0], true
}

// serveModuleSource is the Python module a Serve application's
// import_path names: a ConfigMap key the manifest mounts into its pods,
// else a file beside the manifest.
type serveModuleSource struct {
	src   *relatedSource // the file beside the manifest; nil for a ConfigMap
	b     block          // the ConfigMap's block
	text  string
	where string
}

// serveModule finds the module ("pkg.mod") a Serve application imports:
// mod.py as a key of a ConfigMap the manifest's pods mount, else
// pkg/mod.py in the manifest's directory, as the repository keeps the
// code it builds into the image or uploads beside the manifest that runs
// it.
func serveModule(s *subject, module string) (*serveModuleSource, bool) {
	if strings.ContainsAny(module, "/\\") || strings.Contains(module, "..") {
		return nil, false
	}
	rel := filepath.FromSlash(strings.ReplaceAll(module, ".", "/")) + ".py"
	if b, text, ok := scriptBlock(s, rel); ok {
		return &serveModuleSource{b: b, text: text, where: "the mounted ConfigMap's " + filepath.Base(rel)}, true
	}
	p := filepath.Join(filepath.Dir(s.file.Path), rel)
	s.lookups.add(fileProbe(p)) // it may appear, change or go away
	data, err := readLimited(p, maxScriptBytes)
	if err != nil {
		return nil, false
	}
	return &serveModuleSource{src: &relatedSource{path: p, file: &source.File{Path: p, Data: data}}, text: string(data),
		where: filepath.Base(p) + " beside the manifest"}, true
}

// locator locates an engine's values: those in the module in its file
// or ConfigMap block, the env_vars in the Serve config.
func (m *serveModuleSource) locator(config func(ray.Loc) (finding.Range, bool)) func(ray.Loc) (finding.Range, bool) {
	return func(loc ray.Loc) (finding.Range, bool) {
		switch {
		case loc.In != "script":
			return config(loc)
		case m.src == nil:
			return m.b.span(textPos(m.text, loc.Off), textPos(m.text, loc.End))
		}
		return finding.Range{File: m.src.path, Start: textPos(m.text, loc.Off), End: textPos(m.text, loc.End)}, true
	}
}
