package lint

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kustomize"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// launcher is an Accelerate config that launches a DeepSpeed config file:
// what it says about the job that the DeepSpeed file does not.
type launcher struct {
	relatedSource
	processes int64 // num_processes: the world size (accelerate.md §2)
	procAt    []any // where num_processes is written
	// ranges locate, in a launch script or manifest, the values the
	// launch graph read (path ["gpus"]), where there is no document tree
	// to look paths up in.
	ranges map[string]finding.Range
}

// locate maps a related path to the launcher's file: a value the launch
// graph read, or a key of the Accelerate config.
func (la *launcher) locate(path []any) finding.Range {
	if len(path) == 1 {
		if k, ok := path[0].(string); ok {
			if r, ok := la.ranges[k]; ok {
				return r
			}
		}
	}
	if la.file == nil || len(la.file.Docs) == 0 || la.file.Docs[0].Root == nil {
		return finding.Range{File: la.path, Start: finding.Pos{Line: 1, Col: 1}, End: finding.Pos{Line: 1, Col: 1}}
	}
	return la.relatedSource.locate(path)
}

// relatedIndex finds, per directory, the Accelerate configs that name a
// DeepSpeed config file, so the DeepSpeed file is checked with the world
// size it will run at. Directories are scanned once, on first use, so
// linting only the files a commit touches still sees their neighbours.
type relatedIndex struct {
	mu   sync.Mutex
	dirs map[string]map[string]*launcher // dir -> DeepSpeed file (abs) -> launcher
	// edges are the launch commands of a directory and its direct
	// subdirectories (related_launch.go).
	edges map[string][]launchEdge
	// configMaps are the repository files the scripts and kustomizations
	// of a directory and its direct subdirectories pack into ConfigMaps
	// (related_configmap.go), read with edges.
	configMaps map[string][]configMapSource
	// nodePools are the Karpenter NodePools of a directory and its direct
	// subdirectories (related_nodepool.go), read with edges.
	nodePools map[string][]nodePoolSource
	// tfPools are the Karpenter pools the Terraform files under a
	// repository root declare (related_nodepool.go), read once per root.
	tfPools map[string][]nodePoolSource
	// builds are the kustomizations composed (kustomize.go), by file.
	builds map[string]*kustomize.Build
	// classes are the GKE ComputeClasses of a repository, by its root
	// (related_computeclass.go).
	classes map[string][]classSource
	// alone are the rules that fire on a file linted without composing
	// its kustomization (kustomize.go), by file.
	alone map[string]aloneResult
	// roots are the lint roots (rootFor) by directory, and the
	// repository roots (repoRoot) by "repo\x00" and directory, under
	// their own lock: they are asked with mu held (kustomizeBuild).
	rootMu sync.Mutex
	roots  map[string]string
}

func newRelatedIndex() *relatedIndex {
	return &relatedIndex{dirs: map[string]map[string]*launcher{}, edges: map[string][]launchEdge{},
		configMaps: map[string][]configMapSource{},
		nodePools:  map[string][]nodePoolSource{}, tfPools: map[string][]nodePoolSource{},
		builds: map[string]*kustomize.Build{}, classes: map[string][]classSource{}, alone: map[string]aloneResult{}, roots: map[string]string{}}
}

// launcherFor returns the Accelerate config in the DeepSpeed file's
// directory that names it, if any.
func (l *Linter) launcherFor(dsPath string) *launcher {
	abs, err := filepath.Abs(dsPath)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	ri := l.related
	ri.mu.Lock()
	byDS, ok := ri.dirs[dir]
	if !ok {
		byDS = l.scanLaunchers(dir)
		ri.dirs[dir] = byDS
	}
	ri.mu.Unlock()
	return byDS[abs]
}

// scanLaunchers reads the small YAML files of dir that mention
// deepspeed_config_file.
func (l *Linter) scanLaunchers(dir string) map[string]*launcher {
	out := map[string]*launcher{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	lim, _ := l.limits(nil)
	for _, name := range names {
		p := filepath.Join(dir, name)
		data, err := readLimited(p, min(lim.MaxBytes, 1<<20))
		if err != nil || !bytes.Contains(data, []byte("deepspeed_config_file")) {
			continue
		}
		f, err := source.Parse(p, data, lim)
		if err != nil || len(f.Docs) == 0 || source.Detect(f) != source.KindAccelerate {
			continue
		}
		root := f.Docs[0].Root
		value, err := root.ToValue(lim.MaxNodes)
		if err != nil {
			continue
		}
		w := normalize.Accelerate(value)
		dsv, _ := w.Get("deepspeed_config_file")
		ds, _ := dsv.(string)
		if ds == "" {
			continue
		}
		if !filepath.IsAbs(ds) {
			ds = filepath.Join(dir, ds)
		}
		la := &launcher{relatedSource: relatedSource{path: p, file: f}}
		if n, ok := w.Get("parallel.world_size"); ok {
			la.processes, _ = n.(int64)
			la.procAt = w.Paths["parallel.world_size"]
		}
		if _, taken := out[filepath.Clean(ds)]; !taken {
			out[filepath.Clean(ds)] = la
		}
	}
	return out
}

// relatedSource is a file read beside the linted one, parsed, with the
// means to point into it and to record its content for the cache.
type relatedSource struct {
	path string // as found on disk
	file *source.File
}

// locate returns the range of a path in the related file's first
// document: the key when the path ends at one.
func (r relatedSource) locate(path []any) finding.Range {
	root := r.file.Docs[0].Root
	node, entry, _ := root.Lookup(path)
	if entry.Key != nil {
		return finding.Range{File: r.path, Start: entry.Key.Start, End: node.End}
	}
	return root.Range(r.path)
}

// digest identifies the related file's content for the result cache.
func (r relatedSource) digest() relatedFile {
	return relatedFile{Path: r.path, Sum: sha256.Sum256(r.file.Data)}
}

// relatedFile is something a result depends on besides the linted file's
// bytes: another file's content (Probe empty; the file must exist), or
// the answer of a context lookup (Probe names it, probe.go) that a warm
// run asks again.
type relatedFile struct {
	Path string   `json:"path"`
	Sum  [32]byte `json:"sum"`
	// Probe names the lookup; Arg is what it was asked beyond Path.
	Probe string `json:"probe,omitempty"`
	Arg   string `json:"arg,omitempty"`
}
