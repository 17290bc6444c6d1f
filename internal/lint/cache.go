package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/source"
)

// Cache stores each file's findings under a key made of what is known
// before the file is read: the file's bytes and path, gpulint's version,
// the policies, schemas and catalogs, the target flags and limits, the
// local model directory and Hugging Face cache refs, and the project file
// that applies. A changed input is simply a different key.
//
// What the result read besides the file is not in the key, since it is
// found only by linting: the entry lists it (cacheEntry.Related), and a
// warm run takes the entry only when all of it still holds (Linter.
// stillValid):
//
//   - each file the result read a value from (a launcher, the DeepSpeed
//     file a recipe names, a NodePool, a ComputeClass, a Chart.yaml, a
//     Serve module, the recipe a manifest launches) still has the
//     content it had;
//   - each context lookup the result consulted (probe.go) still gives the
//     same answer, asked again: the Karpenter pool a pod's selector picks
//     among the repository's YAML and Terraform, the GKE ComputeClass it
//     names, the launch that names a config (scripts, manifests,
//     ConfigMap packing), the kustomization that composes a manifest and
//     every file its build reads, the recipes a manifest launches, each
//     fixed place a lookup tried (present or absent);
//   - the Accelerate config that launches a DeepSpeed file is the same
//     one, or still none (cacheEntry.Launcher);
//   - each other file the result read or linted (a launched recipe, a
//     file a kustomization composes) is still under the same project
//     file, or still none (probeProject): the key holds only the linted
//     file's.
//
// So a context file that appears, changes or goes away makes the entries
// that consulted it miss, and a hit is never stale. Only the files that
// consulted a lookup carry it: a warm run over files that never consult
// one reads nothing but the entries; one that does pays each lookup once
// per run.
type Cache struct {
	dir  string
	salt []byte
	// cwd resolves relative paths for keys; read once, not per file.
	cwd string
}

// NewCache opens a cache in dir. salt identifies everything run-wide that
// results depend on (see Salt).
func NewCache(dir string, salt []byte) *Cache {
	cwd, _ := os.Getwd()
	return &Cache{dir: dir, salt: salt, cwd: cwd}
}

// Salt hashes the run-wide inputs of results: the version, every policy,
// schema and catalog file, and the options.
func Salt(version string, assets []fs.FS, opts Options) ([]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "gpulint %s\n", version)
	// The shape of an entry: summary, details and memory joined a
	// finding (2); the lookups a result consulted joined its related
	// files (3), so an entry of a build that recorded none - which a
	// development build of the same version would otherwise trust - is
	// a miss; the project files of the other files a result read joined
	// them (4).
	fmt.Fprintf(h, "findings 4\n")
	for i, a := range assets {
		if a == nil {
			continue
		}
		fmt.Fprintf(h, "asset %d\n", i)
		if err := hashFS(h, a); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(h, "gpu=%q gpus=%d model=%q limits=%+v timeout=%s\n", opts.GPU, opts.GPUs, opts.Model, opts.Limits, opts.FileTimeout)
	// The home directory bounds the repository walk (repoBoundary).
	fmt.Fprintf(h, "home=%q\n", opts.Home)
	if st, err := os.Stat(opts.Model); err == nil && st.IsDir() {
		// A local model directory: its config and the size and time of
		// every file (safetensors headers are read from them).
		if err := hashFS(h, os.DirFS(opts.Model)); err != nil {
			return nil, err
		}
	}
	if opts.Project != nil {
		fmt.Fprintf(h, "project %s %x\n", opts.Project.Path, opts.Project.Digest())
	}
	if opts.HFCache != "" {
		// A model read from the cache: which snapshot each repository's
		// refs/main names (a snapshot's files do not change).
		fmt.Fprintf(h, "hfcache %q\n", opts.HFCache)
		refs, _ := filepath.Glob(filepath.Join(opts.HFCache, "models--*", "refs", "main"))
		for _, r := range refs {
			b, _ := os.ReadFile(r)
			fmt.Fprintf(h, "%s %s\n", r, bytes.TrimSpace(b))
		}
	}
	return h.Sum(nil), nil
}

// hashFS hashes every file of fsys in path order: contents for small
// files, size and modification time for large ones (model weights).
// Policy tests and testdata directories are left out: no result depends on
// them, and they are most of the bytes of the built-in policies.
func hashFS(h hash.Hash, fsys fs.FS) error {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return fs.SkipDir
		}
		if !d.IsDir() && !strings.HasSuffix(p, "_test.rego") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hash policies and schemas: %w", err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		st, err := fs.Stat(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, st.Size())
		if st.Size() > 1<<20 {
			fmt.Fprintf(h, "mtime %d\n", st.ModTime().UnixNano())
			continue
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		h.Write(data)
	}
	return nil
}

// key is the cache key of one file's content under a project.
func (c *Cache) key(path string, data []byte, proj *config.Project) string {
	h := sha256.New()
	h.Write(c.salt)
	abs := path
	if !filepath.IsAbs(path) {
		abs = filepath.Join(c.cwd, path)
	}
	fmt.Fprintf(h, "\npath %q %q\n", path, abs)
	if proj != nil {
		fmt.Fprintf(h, "project %s %x\n", proj.Path, proj.Digest())
	}
	fmt.Fprintf(h, "data %d\n", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) file(key string) string {
	return filepath.Join(c.dir, key[:2], key[2:]+".json")
}

// cacheEntry is what the cache stores for a file.
type cacheEntry struct {
	Kind     source.Kind     `json:"kind"`
	Findings []cachedFinding `json:"findings"`
	// Related are the other files the result depends on, with the
	// content they had; a hit whose related files changed is a miss.
	Related []relatedFile `json:"related,omitempty"`
	// Launcher is the digest of the Accelerate config that launched a
	// DeepSpeed file when it was checked; a hit under another (or no)
	// launcher is a miss.
	Launcher []byte `json:"launcher,omitempty"`
	// Ignored are the project file's ignore entries that silenced a
	// finding, so that a warm run knows them used.
	Ignored []int `json:"ignored,omitempty"`
	// Sizing is the file's memory verdict.
	Sizing *Sizing `json:"sizing,omitempty"`
}

type cachedFinding struct {
	finding.Finding
	Sev finding.Severity `json:"sev"`
}

// entryMagic starts every entry file. An entry is one header line,
//
//	gpulint-cache 2 <sum> <data>
//
// then the entry's JSON. <data> is the SHA-256 of the file bytes the
// entry was computed from; <sum> is the SHA-256 of the key, <data> and the
// JSON (see entrySum). get checks both, so a corrupt, truncated or edited
// entry, or one copied under another key, is a miss and gets rewritten.
// The sums detect damage, not an adversary: one who can write the cache
// can recompute them, which is why fix never applies a cached edit
// (Linter.Fix lints a cached file again).
const entryMagic = "gpulint-cache 2 "

// entrySum is the checksum of an entry's JSON for a key and file bytes.
func entrySum(key, dataSum string, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s%s\n%s\n", entryMagic, key, dataSum)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func dataSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// get returns the cached result for a key, computed from data. An entry
// that fails its checks is a miss.
func (c *Cache) get(key string, data []byte) (cacheEntry, bool) {
	raw, err := os.ReadFile(c.file(key))
	if err != nil {
		return cacheEntry{}, false
	}
	head, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || !bytes.HasPrefix(head, []byte(entryMagic)) {
		return cacheEntry{}, false
	}
	sum, ds, ok := strings.Cut(string(head[len(entryMagic):]), " ")
	if !ok || ds != dataSum(data) || sum != entrySum(key, ds, body) {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if err := json.Unmarshal(body, &e); err != nil {
		return cacheEntry{}, false
	}
	for i := range e.Findings {
		f := &e.Findings[i]
		f.Severity = f.Sev
		for j, p := range f.Path {
			if n, ok := p.(float64); ok {
				f.Path[j] = int(n) // JSON numbers come back as float64
			}
		}
	}
	return e, true
}

// put stores a result computed from data; failures only cost a future
// miss.
func (c *Cache) put(key string, data []byte, fr FileResult, launcher []byte) {
	e := cacheEntry{Kind: fr.Kind, Findings: make([]cachedFinding, len(fr.Findings)), Related: uniqueRelated(fr.related), Launcher: launcher, Ignored: fr.ignored, Sizing: fr.Sizing}
	for i, f := range fr.Findings {
		e.Findings[i] = cachedFinding{Finding: f, Sev: f.Severity}
	}
	body, err := json.Marshal(e)
	if err != nil {
		return
	}
	ds := dataSum(data)
	entry := append([]byte(entryMagic+entrySum(key, ds, body)+" "+ds+"\n"), body...)
	p := c.file(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".entry-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(entry)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// uniqueRelated drops repeated dependencies (two pods asking the same
// pool, a file read by two lookups), keeping the first of each: a warm
// run checks each once.
func uniqueRelated(rel []relatedFile) []relatedFile {
	seen := make(map[relatedFile]bool, len(rel))
	out := rel[:0:0]
	for _, r := range rel {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// DefaultCacheDir is the cache's place in the user's cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gpulint", "results"), nil
}
