package lint

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/ray"
	"github.com/gpulint/gpulint/internal/source"
)

// embedded locates the paths of a subject whose value was read from a
// YAML document held as a string in the manifest (a RayService's
// serveConfigV2): each canonical top-level key maps to a path in the
// embedded document, which maps to bytes of the manifest through the
// block scalar that holds it.
type embedded struct {
	file  *source.File // the manifest
	outer *source.Node // the string node holding the document
	inner *source.File // the embedded document, parsed
	keys  map[string][]any
	// whole is where a path without a place of its own points: the
	// application in the embedded document, else the string's key.
	whole finding.Range
	app   []any
}

// errEmbeddedEdit refuses edits inside an embedded document: gpulint
// offers no fix there.
var errEmbeddedEdit = errors.New("no edits inside a YAML string")

func (e *embedded) locate(path []any) finding.Range {
	if len(path) > 0 {
		if k, ok := path[0].(string); ok {
			if p, ok := e.keys[k]; ok {
				if r, ok := e.rangeOf(p); ok {
					return r
				}
			}
		}
	}
	if r, ok := e.rangeOf(e.app); ok {
		return r
	}
	return e.whole
}

// rangeOf maps a path of the embedded document to the manifest's bytes;
// false when the string is not a literal block scalar (|), whose lines
// are the document's lines shifted by one indentation.
func (e *embedded) rangeOf(p []any) (finding.Range, bool) {
	if e.outer.Style != source.Literal || len(e.inner.Docs) == 0 || e.inner.Docs[0].Root == nil {
		return finding.Range{}, false
	}
	node, entry, matched := e.inner.Docs[0].Root.Lookup(p)
	if node == nil || matched != len(p) {
		return finding.Range{}, false
	}
	start, end := node.Start, node.End
	if entry.Key != nil {
		start = entry.Key.Start
	}
	s, ok1 := e.shift(start)
	t, ok2 := e.shift(end)
	return finding.Range{File: e.file.Path, Start: s, End: t}, ok1 && ok2
}

// shift maps a position in the embedded document to the manifest: line n
// of a literal block is the header's line + n, indented by the block's
// indentation.
func (e *embedded) shift(p finding.Pos) (finding.Pos, bool) {
	data := e.file.Data
	// The start of the line after the block header.
	off := e.outer.Start.Offset
	for off < len(data) && data[off] != '\n' {
		off++
	}
	off++
	line := e.outer.Start.Line + 1
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
	for line < e.outer.Start.Line+p.Line {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return finding.Pos{}, false
		}
		off += nl + 1
		line++
	}
	// The embedded offset counts from its line's start.
	lineStart := p.Offset - (p.Col - 1)
	if lineStart < 0 {
		return finding.Pos{}, false
	}
	o := off + indent + (p.Offset - lineStart)
	if o > len(data) || o > e.outer.End.Offset {
		return finding.Pos{}, false
	}
	return finding.Pos{Offset: o, Line: line, Col: p.Col + indent}, true
}

// rayEngineSubjects derives one vLLM subject from each vLLM engine a
// RayService's Serve config runs (ray.Engines), so the vLLM and memory
// rules size it. Its GPU is what the GPU worker group's node selector or
// affinity says, else the engine's accelerator_type; its GPU count the
// worker container's nvidia.com/gpu limit. Options the file implies rather
// than states (ray.Arg.Assumed) are assumed inputs of every verdict.
func (l *Linter) rayEngineSubjects(s *subject, pods []kube.Pod, proj *config.Project) ([]*subject, []finding.Finding) {
	at, text, ok := ray.ServeConfigPath(s.value)
	if !ok {
		return nil, nil
	}
	root := s.file.Docs[s.doc].Root
	outer, _, matched := root.Lookup(at)
	if outer == nil || matched != len(at) || outer.Kind != source.ScalarNode {
		return nil, nil
	}
	lim, _ := l.limits(proj)
	inner, err := source.Parse(s.file.Path+"#serveConfigV2", []byte(text), lim)
	if err != nil || len(inner.Docs) != 1 || inner.Docs[0].Root == nil {
		return nil, nil
	}
	serve, err := inner.Docs[0].Root.ToValue(lim.MaxNodes)
	if err != nil {
		return nil, nil
	}
	pod, gpuCont, ok := rayGPUWorker(pods)
	var out []*subject
	var fs []finding.Finding
	for _, eng := range ray.Engines(serve) {
		val := map[string]any{}
		keys := map[string][]any{}
		assumed := map[string]string{}
		unknown := false
		for _, a := range eng.Args {
			if !memoryFlags[a.Name] {
				continue
			}
			if sv, ok := a.Value.(string); ok && kube.IsPlaceholder(sv) {
				unknown = true // set when the file is rendered: no memory verdict can hold
				continue
			}
			val[a.Name], keys[a.Name] = a.Value, a.Path
			if a.Assumed != "" && a.Name == "model" {
				assumed["model"] = a.Assumed
			} else if a.Assumed != "" {
				assumed["model"] = strings.TrimPrefix(assumed["model"]+"; "+a.Name+" "+fmt.Sprint(a.Value)+" "+a.Assumed, "; ")
			}
		}
		em := &embedded{file: s.file, outer: outer, inner: inner, keys: keys, app: eng.App}
		em.whole = outer.Range(s.file.Path)
		if _, entry, _ := root.Lookup(at); entry.Key != nil {
			em.whole = entry.Key.Range(s.file.Path)
		}
		vs := &subject{
			kind:    string(source.KindVLLM),
			file:    s.file,
			doc:     s.doc,
			root:    outer,
			prefix:  clone(at),
			value:   val,
			embed:   em,
			assumed: assumed,
		}
		vs.work = normalize.VLLM(val)
		h := targetHints{At: s.locate}
		if ok {
			h = podHints(s, pod)
			h.GPUs = int(gpuCont.GPU)
			if gpuCont.GPU > 0 {
				r := s.locate(append(clone(gpuCont.Path), "resources", "limits"))
				h.GPUsRange = &r
			}
		}
		if _, _, hinted := hintedGPU(h.Hints); h.Product == "" && !hinted && eng.Accelerator != "" {
			if _, known := l.deps.Targets.gpu(eng.Accelerator); known {
				r := em.locate([]any{"accelerator_type"})
				if ar, ok := em.rangeOf(eng.AcceleratorAt); ok {
					r = ar
				}
				h.Product, h.ProductAt = eng.Accelerator, &r
			}
		}
		vs.tgt = l.resolveTarget(s.file.Path, proj, vs.work, h)
		if unknown {
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
		fs = append(fs, l.schemaFindings(vs, "vllm")...)
		out = append(out, vs)
	}
	return out, fs
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
