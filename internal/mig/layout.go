// Package mig knows MIG layouts: which catalog GPU a mig-parted entry's
// device filter names, and whether the entry's slices fit the GPUs it
// applies to (gpus.md §2.1 placement rules). It returns plain verdicts;
// the linter renders them for the rules.
package mig

import (
	_ "embed"
	"sort"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/value"
	"github.com/gpulint/gpulint/tuner"
)

// Verdict is whether one MIG-enabled entry of a mig-parted config fits
// the GPU it was checked on.
type Verdict struct {
	// Config and Entry locate it: mig-configs.<Config>[<Entry>].
	Config string
	Entry  int
	// GPU is the catalog GPU it was checked on, GPUFrom what chose it:
	// "device-filter", "profiles" (every catalog GPU with its profiles),
	// or the target's source.
	GPU, GPUFrom string
	Valid        bool
	Reason       string // why it does not fit, when not Valid
	Counts       map[string]int
	// GPUs names the catalog GPUs it was tried on when chosen by profiles.
	GPUs []string
	// Unknown lists the entry's profiles that no catalog GPU has; the
	// entry then gets no layout verdict. Known is every profile name the
	// catalog has, for the message, and FilterUnknown is true when the
	// entry's device-filter names only GPUs the catalog lacks (whose
	// profiles gpulint cannot know).
	Unknown       []string
	Known         []string
	FilterUnknown bool
}

// KnownProfiles returns every MIG profile name of the catalog's GPUs,
// sorted and without repeats.
func KnownProfiles(cat *tuner.Catalog) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range cat.GPUs() {
		for _, p := range g.MIGProfiles() {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

//go:embed published.txt
var publishedText string

// published is the set of MIG profile names NVIDIA publishes for GPUs the
// catalog lacks (published.txt), parsed once from the embedded file.
var published = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(publishedText, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
})

// Unknown reports whether a MIG profile or resource name is one no catalog
// GPU has and NVIDIA does not publish for a GPU the catalog lacks.
func Unknown(cat *tuner.Catalog, name string) bool {
	return len(cat.GPUsWithMIGProfile(name)) == 0 && !published()[tuner.CanonicalMIGProfileName(name)]
}

// unknownProfiles returns the profiles of counts that are Unknown, sorted.
func unknownProfiles(cat *tuner.Catalog, counts map[string]int) []string {
	var out []string
	for p := range counts {
		if Unknown(cat, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// deviceIDs maps the PCI device ids mig-parted device filters use
// ("0x233010DE": device 0x2330, vendor 0x10DE) to the catalog GPU with the
// same MIG profile set. H800 and A800 parts share the H100-80GB and A100
// profiles (gpus.md §2.4, §2.5); ids of GPUs the catalog lacks (GH200
// 144GB, B300, GB300, RTX PRO 6000) are left out, so their entries get no
// verdict. Source: kubernetes-gpu.md §5 (NVIDIA/mig-parted and the GPU
// Operator's default-mig-parted-config), gpus.md §2.14.
var deviceIDs = map[string]string{
	"2330": "h100-sxm", "2331": "h100-pcie", "2322": "h100-sxm", "2324": "h100-sxm",
	"20b2": "a100-80-sxm", "20b5": "a100-80-pcie", "20f3": "a100-80-sxm", "20f5": "a100-80-sxm",
	"20b0": "a100-40-sxm", "20b1": "a100-40-pcie", "20f1": "a100-40-pcie", "20f6": "a100-40-sxm",
	"20b7": "a30",
	"2321": "h100-nvl", "233a": "h100-nvl",
	"2342": "gh200", "233d": "gh200", "20b6": "gh200", "2329": "h20",
	"2335": "h200", "233b": "h200-nvl",
	"2901": "b200", "2941": "gb200",
}

// deviceFilterGPU maps one device-filter entry to a catalog GPU.
func deviceFilterGPU(cat *tuner.Catalog, id string) (*tuner.GPU, bool) {
	s := strings.ToLower(strings.TrimSpace(id))
	s = strings.TrimPrefix(s, "0x")
	if len(s) == 8 && strings.HasSuffix(s, "10de") {
		s = s[:4]
	}
	key, ok := deviceIDs[s]
	if !ok {
		return nil, false
	}
	return cat.GPU(key)
}

// Layouts checks every MIG-enabled entry of a mig-parted config with
// tuner.ValidateMIGLayout (gpus.md §2.1 placement rules) against the GPUs
// the entry applies to:
//
//   - its device-filter, when the ids map to catalog GPUs: the layout must
//     hold on each of them;
//   - else the target GPU, when it has every profile the entry names;
//   - else every catalog GPU that has all the entry's profiles: the
//     layout is invalid only when it holds on none (a config file often
//     lists layouts for several GPU models, told apart by profile names).
//
// An entry naming a profile that no catalog GPU has gets a verdict with
// Unknown set instead (the catalog may lack the GPU, or the name is
// wrong); entries whose profiles no single candidate GPU has all of get
// none.
func Layouts(cat *tuner.Catalog, doc any, target *tuner.GPU, targetFrom string) []Verdict {
	configs, _ := kube.LookupAny(doc, "mig-configs").(map[string]any)
	var out []Verdict
	for _, name := range value.SortedKeys(configs) {
		for i, e := range value.List(configs[name]) {
			em, _ := e.(map[string]any)
			if b, _ := em["mig-enabled"].(bool); !b {
				continue
			}
			devs, _ := em["mig-devices"].(map[string]any)
			counts := map[string]int{}
			for p, v := range devs {
				n, ok := kube.ToInt(v)
				if !ok {
					counts = nil
					break
				}
				counts[p] = int(n)
			}
			if len(counts) == 0 {
				continue
			}
			if unknown := unknownProfiles(cat, counts); len(unknown) > 0 {
				v := Verdict{Config: name, Entry: i, Valid: true, Counts: counts, Unknown: unknown, Known: KnownProfiles(cat)}
				v.FilterUnknown = filterNamesOnlyUnknown(cat, em["device-filter"])
				out = append(out, v)
				continue
			}
			v, ok := layoutVerdict(cat, em["device-filter"], counts, target, targetFrom)
			if !ok {
				continue
			}
			v.Config, v.Entry = name, i
			out = append(out, v)
		}
	}
	return out
}

// filterNamesOnlyUnknown reports whether a device-filter is set and maps
// none of its ids to a catalog GPU.
func filterNamesOnlyUnknown(cat *tuner.Catalog, filter any) bool {
	ids := value.List(filter)
	if s, ok := filter.(string); ok {
		ids = []any{s}
	}
	for _, id := range ids {
		if _, ok := deviceFilterGPU(cat, value.String(id)); ok {
			return false
		}
	}
	return len(ids) > 0
}

// layoutVerdict validates one entry's counts; false when no GPU applies.
func layoutVerdict(cat *tuner.Catalog, filter any, counts map[string]int, target *tuner.GPU, targetFrom string) (Verdict, bool) {
	hasAll := func(g *tuner.GPU) bool {
		for p := range counts {
			if _, ok := g.MIGProfile(p); !ok {
				return false
			}
		}
		return true
	}
	verdict := func(g *tuner.GPU, from string) Verdict {
		v := Verdict{GPU: g.Name, GPUFrom: from, Valid: true, Counts: counts}
		if err := tuner.ValidateMIGLayout(g, counts); err != nil {
			v.Valid, v.Reason = false, strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		return v
	}
	var filtered []*tuner.GPU
	ids := value.List(filter)
	if s, ok := filter.(string); ok {
		ids = []any{s}
	}
	for _, id := range ids {
		if g, ok := deviceFilterGPU(cat, value.String(id)); ok && hasAll(g) {
			filtered = append(filtered, g)
		}
	}
	if len(filtered) > 0 {
		for _, g := range filtered {
			if v := verdict(g, "device-filter"); !v.Valid {
				return v, true
			}
		}
		return verdict(filtered[0], "device-filter"), true
	}
	if len(ids) > 0 {
		return Verdict{}, false // filtered to GPUs gpulint does not know
	}
	if target != nil && target.MIGCapable() && hasAll(target) {
		return verdict(target, targetFrom), true
	}
	var first *Verdict
	var names []string
	for _, g := range cat.GPUs() {
		if !g.MIGCapable() || !hasAll(g) {
			continue
		}
		v := verdict(g, "profiles")
		if v.Valid {
			return Verdict{}, false // some GPU with these profiles holds the layout
		}
		if first == nil {
			first = &v
		}
		names = append(names, g.Name)
	}
	if first == nil {
		return Verdict{}, false
	}
	first.GPUs = names
	return *first, true
}
