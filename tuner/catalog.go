package tuner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Catalog holds the GPU and model catalogs with their lookup indexes. Build it
// once with LoadCatalog and pass it down; it is read-only afterwards and safe
// for concurrent use.
type Catalog struct {
	gpus      []*GPU
	gpuIndex  map[string]*GPU // normalized spelling → GPU
	spellings []spelling      // every GPU spelling, for Suggest

	models     []*Model
	modelIndex map[string]*Model // lower-cased id, alias or bare name → model
}

type spelling struct {
	norm string
	gpu  *GPU
}

// LoadCatalog builds the catalog from its compiled-in data (catalogData,
// generated from the embedded YAML files and held equal to them by
// TestCatalogData).
func LoadCatalog() (*Catalog, error) {
	d := catalogData()
	return buildCatalog(d.GPUs, d.Models)
}

// catalogDoc is the two YAML catalog files, decoded: the shape
// catalogData returns.
type catalogDoc struct {
	GPUs   gpuFile
	Models modelFile
}

// MustLoadCatalog is LoadCatalog for program start-up; it panics if the
// embedded data is broken, which a test rules out.
func MustLoadCatalog() *Catalog {
	c, err := LoadCatalog()
	if err != nil {
		panic(err)
	}
	return c
}

// LoadCatalogFS parses GPUProfilesPath and ModelProfilesPath from fsys.
func LoadCatalogFS(fsys fs.FS) (*Catalog, error) {
	gdata, err := fs.ReadFile(fsys, GPUProfilesPath)
	if err != nil {
		return nil, fmt.Errorf("read gpu catalog: %w", err)
	}
	mdata, err := fs.ReadFile(fsys, ModelProfilesPath)
	if err != nil {
		return nil, fmt.Errorf("read model catalog: %w", err)
	}
	return ParseCatalog(gdata, mdata)
}

// ParseCatalog builds a catalog from the two YAML documents.
func ParseCatalog(gpuYAML, modelYAML []byte) (*Catalog, error) {
	var gf gpuFile
	if err := decodeStrict(gpuYAML, &gf); err != nil {
		return nil, fmt.Errorf("parse gpu catalog: %w", err)
	}
	var mf modelFile
	if err := decodeStrict(modelYAML, &mf); err != nil {
		return nil, fmt.Errorf("parse model catalog: %w", err)
	}
	return buildCatalog(gf, mf)
}

// buildCatalog indexes decoded catalog files.
func buildCatalog(gf gpuFile, mf modelFile) (*Catalog, error) {
	gpus, err := buildGPUs(gf)
	if err != nil {
		return nil, err
	}
	models, err := buildModels(mf)
	if err != nil {
		return nil, err
	}
	c := &Catalog{gpuIndex: map[string]*GPU{}, modelIndex: map[string]*Model{}}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Key < gpus[j].Key })
	c.gpus = gpus
	var errs []error
	for _, g := range gpus {
		names := append([]string{g.Key, g.Name, g.DisplayName}, g.Aliases...)
		names = append(names, g.Labels...)
		for _, n := range names {
			k := normName(n)
			if k == "" {
				errs = append(errs, fmt.Errorf("gpu catalog: %s: empty spelling %q", g.Key, n))
				continue
			}
			if prev, dup := c.gpuIndex[k]; dup && prev != g {
				errs = append(errs, fmt.Errorf("gpu catalog: spelling %q names both %s and %s", n, prev.Key, g.Key))
				continue
			}
			if _, dup := c.gpuIndex[k]; !dup {
				c.spellings = append(c.spellings, spelling{norm: k, gpu: g})
			}
			c.gpuIndex[k] = g
		}
	}
	sort.Slice(models, func(i, j int) bool { return models[i].ID < models[j].ID })
	c.models = models
	for _, m := range models {
		for _, k := range modelKeys(m) {
			if prev, dup := c.modelIndex[k]; dup && prev != m {
				errs = append(errs, fmt.Errorf("model catalog: %q names both %s and %s", k, prev.ID, m.ID))
				continue
			}
			c.modelIndex[k] = m
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// GPUs returns the catalog GPUs sorted by key.
func (c *Catalog) GPUs() []*GPU { return append([]*GPU(nil), c.gpus...) }

// GPU finds a GPU by key, catalog name, alias or nvidia.com/gpu.product label,
// ignoring case and punctuation. Label values with a "-MIG-<profile>",
// "-MIG-INVALID" or "-SHARED" suffix return the base GPU; ParseProductLabel
// returns the suffix information. Names with an "NVIDIA", "Tesla", "GeForce",
// "AMD" or "Instinct" prefix also match without it (older drivers and cloud
// labels spell names both ways).
func (c *Catalog) GPU(name string) (*GPU, bool) {
	base, _, _, _ := splitProductLabel(name)
	return c.lookupGPU(base)
}

func (c *Catalog) lookupGPU(name string) (*GPU, bool) {
	k := normName(name)
	for {
		if g, ok := c.gpuIndex[k]; ok {
			return g, true
		}
		trimmed := trimVendorPrefix(k)
		if trimmed == k || trimmed == "" {
			return nil, false
		}
		k = trimmed
	}
}

var vendorPrefixes = []string{"nvidia", "tesla", "geforce", "amd", "instinct"}

func trimVendorPrefix(k string) string {
	for _, p := range vendorPrefixes {
		if strings.HasPrefix(k, p) && len(k) > len(p) {
			return k[len(p):]
		}
	}
	return k
}

// MemoryVariants returns the GPUs a name that leaves out the memory may
// mean: those whose catalog name is the name followed by a memory size
// ("A100" → A100-40GB, A100-40GB-PCIe, A100-80GB, A100-80GB-PCIe; "V100"
// → V100-16GB, V100-32GB), least usable memory first. It returns nil when
// the name itself is a GPU (an alias may pick one variant, as "H100"
// picks H100-80GB) or no catalog name extends it so.
func (c *Catalog) MemoryVariants(name string) []*GPU {
	if _, ok := c.GPU(name); ok {
		return nil
	}
	k := normName(name)
	for t := trimVendorPrefix(k); t != k && t != ""; t = trimVendorPrefix(k) {
		k = t
	}
	if k == "" {
		return nil
	}
	var out []*GPU
	for _, g := range c.gpus {
		rest, ok := strings.CutPrefix(normName(g.Name), k)
		if !ok {
			continue
		}
		digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		if digits > 0 && strings.HasPrefix(rest[digits:], "gb") {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UsableBytes < out[j].UsableBytes })
	return out
}

// Suggest returns the catalog name of the GPU closest to an unknown name, or
// "" when nothing is close. A name that starts the spelling of some GPUs
// (e.g. "A100") suggests the shortest such spelling; otherwise the smallest
// edit distance wins, if it is at most a third of the name's length (min 2).
func (c *Catalog) Suggest(name string) string {
	base, _, _, _ := splitProductLabel(name)
	k := normName(base)
	for t := trimVendorPrefix(k); t != k && t != ""; t = trimVendorPrefix(k) {
		k = t
	}
	if k == "" {
		return ""
	}
	var best *GPU
	bestLen := 0
	for _, s := range c.spellings {
		if strings.HasPrefix(s.norm, k) && (best == nil || len(s.norm) < bestLen ||
			(len(s.norm) == bestLen && s.gpu.Name < best.Name)) {
			best, bestLen = s.gpu, len(s.norm)
		}
	}
	if best != nil {
		return best.Name
	}
	bestDist := -1
	for _, s := range c.spellings {
		d := levenshtein(k, s.norm)
		if bestDist < 0 || d < bestDist || (d == bestDist && s.gpu.Name < best.Name) {
			best, bestDist = s.gpu, d
		}
	}
	limit := max(2, len(k)/3)
	if best == nil || bestDist > limit {
		return ""
	}
	return best.Name
}

// ProductLabel is a parsed nvidia.com/gpu.product label value.
type ProductLabel struct {
	GPU *GPU
	// MIG is the profile named by a "-MIG-<profile>" suffix (mig.strategy=single),
	// nil when absent or when the GPU has no such profile.
	MIG *MIGProfile
	// MIGProfileName is the suffix as written, empty when there is none.
	MIGProfileName string
	// MIGInvalid is set for "-MIG-INVALID" (inconsistent MIG setup on the node).
	MIGInvalid bool
	// Shared is set for "-SHARED" (time-slicing or MPS replicas).
	Shared bool
}

// ParseProductLabel parses a nvidia.com/gpu.product value such as
// "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb" or "NVIDIA-H100-80GB-HBM3-SHARED"
// (kubernetes-gpu.md §3). ok is false when the base GPU is unknown.
func (c *Catalog) ParseProductLabel(value string) (ProductLabel, bool) {
	base, mig, invalid, shared := splitProductLabel(value)
	g, ok := c.lookupGPU(base)
	if !ok {
		return ProductLabel{}, false
	}
	pl := ProductLabel{GPU: g, MIGProfileName: mig, MIGInvalid: invalid, Shared: shared}
	if mig != "" {
		if p, ok := g.MIGProfile(mig); ok {
			pl.MIG = p
		}
	}
	return pl, true
}

// ProductLabelMIG returns the MIG profile a nvidia.com/gpu.product value
// names with a -MIG-<profile> suffix (single strategy), "" when none;
// the base GPU need not be in the catalog.
func ProductLabelMIG(value string) string {
	_, mig, _, _ := splitProductLabel(value)
	return mig
}

// splitProductLabel removes the -SHARED and -MIG-<profile> suffixes.
func splitProductLabel(v string) (base, mig string, invalid, shared bool) {
	base = strings.TrimSpace(v)
	lower := strings.ToLower(base)
	if strings.HasSuffix(lower, "-shared") {
		shared = true
		base = base[:len(base)-len("-shared")]
		lower = lower[:len(lower)-len("-shared")]
	}
	if i := strings.LastIndex(lower, "-mig-"); i > 0 {
		mig = base[i+len("-mig-"):]
		base = base[:i]
		if strings.EqualFold(mig, "invalid") {
			invalid, mig = true, ""
		}
	}
	return base, mig, invalid, shared
}

// normName lower-cases s and keeps only ASCII letters and digits.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// levenshtein is the classic edit distance over bytes.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
