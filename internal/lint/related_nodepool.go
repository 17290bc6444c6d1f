package lint

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/internal/terraform"
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
// the manifest's directory or one above it up to the repository root, each
// with its direct subdirectories (the launch graph's reach), or one a
// Terraform file under the repository root declares (terraformPools). Every
// pool the selector picks must state the same GPU by a requirement the
// hardware table knows; the GPU is located at that requirement.
func (l *Linter) poolGPU(manifest string, p kube.Pod) (gpu string, at finding.Range, src relatedSource, ok bool) {
	if len(p.NodeSelector) == 0 || l.related == nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	abs, err := filepath.Abs(manifest)
	if err != nil {
		return "", finding.Range{}, relatedSource{}, false
	}
	root := l.repoRoot(abs)
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
	pools = append(pools, l.terraformPools(root)...)
	sort.SliceStable(pools, func(i, j int) bool { return pools[i].src.path < pools[j].src.path })
	seen := map[string]bool{}
	for _, np := range pools {
		key := np.src.path + "\x00" + np.pool.Name + "\x00" + strconv.Itoa(np.src.file.Docs[np.doc].Start.Offset)
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

// Terraform pools: limits of the walk that finds them. A repository
// keeps its cluster's Terraform apart from its manifests (infra/ beside
// blueprints/), so the reach is the lint root, walked once per run.
const (
	maxTFDepth    = 8 // directories below the root
	maxTFDirs     = 2048
	maxTFFiles    = 256 // .tf files read by content
	maxTFHeredocs = 64  // heredocs parsed per file
	maxTFBytes    = 1 << 20
)

// tfPoolWords are the cheap content checks of a .tf file and of a
// heredoc body: the karpenter-resources chart's values, or a NodePool
// manifest.
var tfPoolWords = [][]byte{[]byte("nodePool:"), []byte("NodePool")}

func mentionsPool(b []byte) bool {
	return bytes.Contains(b, tfPoolWords[0]) || bytes.Contains(b, tfPoolWords[1])
}

// tfNodePools reads the Karpenter pools a Terraform file declares in its
// heredocs: values of the karpenter-resources chart
// (kube.ReadNodePoolChartValues) and NodePool manifests (a
// kubectl_manifest's yaml_body). Terraform is not run: what it fills in
// is unknown (terraform.Heredoc.Value), and every location is the .tf
// file's.
func tfNodePools(p string, data []byte, lim source.Limits) []nodePoolSource {
	if !mentionsPool(data) {
		return nil
	}
	var out []nodePoolSource
	parsed := 0
	for _, h := range terraform.Heredocs(data, 0) {
		if !mentionsPool(data[h.Start:h.End]) {
			continue
		}
		if parsed++; parsed > maxTFHeredocs {
			break // each parse reads the file up to the heredoc
		}
		f, err := h.Docs(p, data, lim)
		if err != nil {
			continue
		}
		for di, d := range f.Docs {
			if d.Root == nil {
				continue
			}
			v, _, err := h.Value(d.Root, lim.MaxNodes)
			if err != nil {
				continue
			}
			np, ok := kube.ReadNodePool(v)
			if !ok {
				np, ok = kube.ReadNodePoolChartValues(v)
			}
			if ok {
				out = append(out, nodePoolSource{src: relatedSource{path: p, file: f}, doc: di, pool: np})
			}
		}
	}
	return out
}

// terraformPools returns the pools the .tf files under root declare,
// read once per run.
func (l *Linter) terraformPools(root string) []nodePoolSource {
	ri := l.related
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ps, ok := ri.tfPools[root]; ok {
		return ps
	}
	var out []nodePoolSource
	lim, _ := l.limits(nil)
	dirs, files := 0, 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			if p != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") ||
				strings.Count(rel, string(filepath.Separator)) >= maxTFDepth) {
				return filepath.SkipDir
			}
			if dirs++; dirs > maxTFDirs {
				return filepath.SkipAll
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.EqualFold(filepath.Ext(p), ".tf") {
			return nil
		}
		if files++; files > maxTFFiles {
			return filepath.SkipAll
		}
		data, err := readLimited(p, min(lim.MaxBytes, maxTFBytes))
		if err == nil {
			out = append(out, tfNodePools(p, data, lim)...)
		}
		return nil
	})
	ri.tfPools[root] = out
	return out
}
