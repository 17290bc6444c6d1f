package lint

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/source"
)

// A GKE pod may name its nodes only by a custom ComputeClass
// (nodeSelector cloud.google.com/compute-class: gpu-h100-80gb-high-x1),
// which the platform team defines once for the repository, often far
// from the workloads. The class's priorities state the GPU; the pod runs
// on it when every priority states the same one.

// classSource is a ComputeClass read from a repository file.
type classSource struct {
	src   relatedSource
	doc   int
	class kube.ComputeClass
}

// maxClassScan bounds the entries a repository walk for ComputeClasses
// visits.
const maxClassScan = 20000

// computeClasses reads the ComputeClasses of the repository at root, once
// per run: YAML files of up to 1 MiB that mention ComputeClass, skipping
// hidden, vendor and node_modules directories.
func (l *Linter) computeClasses(root string) []classSource {
	ri := l.related
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if cs, ok := ri.classes[root]; ok {
		return cs
	}
	lim, _ := l.limits(nil)
	var out []classSource
	seen := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		seen++
		if err != nil || seen > maxClassScan {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(name))
		if !d.Type().IsRegular() || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
		if err != nil || !bytes.Contains(data, []byte("ComputeClass")) {
			return nil
		}
		f, err := source.Parse(p, data, lim)
		if err != nil {
			return nil
		}
		for di, doc := range f.Docs {
			if doc.Root == nil {
				continue
			}
			v, err := doc.Root.ToValue(lim.MaxNodes)
			if err != nil {
				continue
			}
			if cc, ok := kube.ReadComputeClass(v); ok {
				out = append(out, classSource{src: relatedSource{path: p, file: f}, doc: di, class: cc})
			}
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].src.path < out[j].src.path })
	ri.classes[root] = out
	return out
}

// locate returns the range of a path in the class's document.
func (c classSource) locate(path []any) finding.Range {
	return nodePoolSource{src: c.src, doc: c.doc}.locate(path)
}

// classGPU resolves the GPU of a pod that selects a custom ComputeClass
// by name through the repository's definition of that class: the one
// nearest the manifest (the longest shared directory), every one as near
// stating the same GPU in every priority (kube.ComputeClass.GPU). The GPU
// is located at the first priority's statement.
func (l *Linter) classGPU(manifest string, p kube.Pod) (gpu string, at finding.Range, src relatedSource, ok bool) {
	name := p.NodeSelector[kube.ComputeClassLabel]
	if name == "" || l.related == nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	abs, err := filepath.Abs(manifest)
	if err != nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	root := l.repoRoot(abs)
	best := -1
	var picks []classSource
	for _, c := range l.computeClasses(root) {
		if c.class.Name != name {
			continue
		}
		switch d := sharedDepth(filepath.Dir(abs), filepath.Dir(c.src.path)); {
		case d > best:
			best, picks = d, []classSource{c}
		case d == best:
			picks = append(picks, c)
		}
	}
	for _, c := range picks {
		g, path, known := c.class.GPU()
		if !known || (gpu != "" && g != gpu) {
			return "", finding.Range{}, relatedSource{}, false
		}
		if gpu == "" {
			gpu, at, src = g, c.locate(path), c.src
		}
	}
	return gpu, at, src, gpu != ""
}

// sharedDepth counts the leading directories two paths share.
func sharedDepth(a, b string) int {
	as := strings.Split(filepath.ToSlash(a), "/")
	bs := strings.Split(filepath.ToSlash(b), "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}
