package lint

import (
	"path/filepath"
	"sort"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/source"
)

// nodePoolSource is a Karpenter NodePool read from a repository file.
type nodePoolSource struct {
	src  relatedSource
	doc  int
	pool kube.NodePool
}

// nodePools reads the NodePools of a YAML file.
func nodePools(p string, data []byte, lim source.Limits) []nodePoolSource {
	f, err := source.Parse(p, data, lim)
	if err != nil {
		return nil
	}
	var out []nodePoolSource
	for di, d := range f.Docs {
		if d.Root == nil {
			continue
		}
		v, err := d.Root.ToValue(lim.MaxNodes)
		if err != nil {
			continue
		}
		if np, ok := kube.ReadNodePool(v); ok {
			out = append(out, nodePoolSource{src: relatedSource{path: p, file: f}, doc: di, pool: np})
		}
	}
	return out
}

// locate returns the range of a path in the NodePool's document.
func (n nodePoolSource) locate(path []any) finding.Range {
	root := n.src.file.Docs[n.doc].Root
	node, entry, matched := root.Lookup(path)
	switch {
	case entry.Key != nil:
		return finding.Range{File: n.src.path, Start: entry.Key.Start, End: node.End}
	case matched == len(path) && node != nil:
		return node.Range(n.src.path)
	}
	return root.Range(n.src.path)
}

// poolGPU resolves the GPU of a pod that names no GPU itself through the
// repository's Karpenter NodePool its nodeSelector picks: one found in
// the manifest's directory or one above it up to the lint root, each
// with its direct subdirectories (the launch graph's reach). Every pool
// the selector picks must state the same GPU by a requirement the
// hardware table knows; the GPU is located at that requirement.
func (l *Linter) poolGPU(manifest string, p kube.Pod) (gpu string, at finding.Range, src relatedSource, ok bool) {
	if len(p.NodeSelector) == 0 || l.related == nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	abs, err := filepath.Abs(manifest)
	if err != nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	root := l.rootFor(abs)
	var pools []nodePoolSource
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		l.launchEdges(d)
		l.related.mu.Lock()
		pools = append(pools, l.related.nodePools[d]...)
		l.related.mu.Unlock()
		if d == root || !within(d, root) || d == filepath.Dir(d) {
			break
		}
	}
	sort.SliceStable(pools, func(i, j int) bool { return pools[i].src.path < pools[j].src.path })
	seen := map[string]bool{}
	for _, np := range pools {
		key := np.src.path + "\x00" + np.pool.Name
		if seen[key] {
			continue // a directory and its parent both scanned it
		}
		seen[key] = true
		if _, picks := np.pool.Selects(p.NodeSelector); !picks {
			continue
		}
		name, path, known := hintedGPU(np.pool.Hints)
		if !known || (gpu != "" && name != gpu) {
			return "", finding.Range{}, relatedSource{}, false
		}
		if gpu == "" {
			gpu, at, src = name, np.locate(path), np.src
		}
	}
	return gpu, at, src, gpu != ""
}
