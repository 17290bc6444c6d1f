package tuner

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MIGProfile is one GPU-instance profile of a MIG-capable GPU. Profile names
// repeat across GPUs with different geometry (1g.10gb is a 1-memory-slice
// profile on 80 GB parts and a 2-memory-slice profile on the A100-40GB), so a
// profile always belongs to one GPU (gpus.md §2.4 "Trap").
type MIGProfile struct {
	Name            string // canonical spelling, e.g. "1g.10gb" or "1g.10gb+me"
	Class           string // placement class in the catalog geometry: 1g, 1g+me, 1g-2m, 2g, 3g, 4g, 7g
	GIProfileID     int    // nvidia-smi GPU-instance profile id; 0 when unknown
	ComputeSlices   int
	MemorySlices    int
	MaxCount        int   // most instances of this profile on one GPU
	Starts          []int // memory-slice indices where an instance may start (nvidia-smi mig -lgipp)
	MemoryBytes     int64 // instance memory (nvidia-smi mig -lgip) or derived, see MemorySource
	MemorySource    string
	MediaExtensions bool // +me profile: takes the GPU's media engines, one per GPU
}

// MIGProfile finds g's profile by name. It accepts the canonical spelling
// ("1g.10gb", "1g.10gb+me"), the device-plugin resource spelling
// ("1g.10gb.me", "mig-1g.10gb", "nvidia.com/mig-1g.10gb.me") and any case.
func (g *GPU) MIGProfile(name string) (*MIGProfile, bool) {
	want := CanonicalMIGProfileName(name)
	for _, p := range g.migProfiles {
		if p.Name == want {
			return p, true
		}
	}
	return nil, false
}

// CanonicalMIGProfileName rewrites a MIG profile or resource name to the
// canonical profile spelling: lower case, without "nvidia.com/" and "mig-"
// prefixes, and with the resource-name ".me" suffix turned back into "+me"
// (the device plugin replaces "+" with "." in resource names,
// kubernetes-gpu.md §2).
func CanonicalMIGProfileName(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	s = strings.TrimPrefix(s, "nvidia.com/")
	s = strings.TrimPrefix(s, "mig-")
	for _, suf := range []string{".me.all", ".me", ".gfx"} {
		if strings.HasSuffix(s, suf) {
			s = strings.TrimSuffix(s, suf) + "+" + strings.TrimPrefix(suf, ".")
			break
		}
	}
	return s
}

// GPUsWithMIGProfile returns the catalog GPUs that have a profile of this
// name, sorted by key. The same name can mean different geometry on
// different GPUs; check each returned GPU's profile.
func (c *Catalog) GPUsWithMIGProfile(name string) []*GPU {
	var out []*GPU
	for _, g := range c.gpus {
		if _, ok := g.MIGProfile(name); ok {
			out = append(out, g)
		}
	}
	return out
}

// ValidateMIGLayout checks that counts (profile name → instances on one GPU)
// is a geometry g can hold, following gpus.md §2.1: each profile's per-GPU
// maximum, at most one +me instance, compute slices within the GPU's total
// (7, or 4 on the A30), and memory-slice intervals placed on allowed start
// slots without overlap (an exhaustive search; layouts are tiny). All count
// problems are reported together; placement is searched only when the counts
// are otherwise valid.
func ValidateMIGLayout(g *GPU, counts map[string]int) error {
	if g == nil {
		return errors.New("validate mig layout: no gpu")
	}
	if !g.MIGCapable() {
		return fmt.Errorf("%s does not support MIG", g.Name)
	}
	merged := map[*MIGProfile]int{}
	var errs []error
	names := sortedKeys(counts)
	for _, name := range names {
		n := counts[name]
		p, ok := g.MIGProfile(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s has no MIG profile %q (profiles: %s)", g.Name, name, profileList(g)))
		case n < 0:
			errs = append(errs, fmt.Errorf("%s: count %d is negative", name, n))
		default:
			merged[p] += n
		}
	}
	profiles := make([]*MIGProfile, 0, len(merged))
	for p, n := range merged {
		if n > 0 {
			profiles = append(profiles, p)
		}
	}
	sort.Slice(profiles, func(i, j int) bool { return profileOrder(g, profiles[i]) < profileOrder(g, profiles[j]) })

	compute, memory, media := 0, 0, 0
	for _, p := range profiles {
		n := merged[p]
		if n > p.MaxCount {
			if p.MaxCount == 1 {
				errs = append(errs, fmt.Errorf("%s can be placed once per GPU, layout asks for %d", p.Name, n))
			} else {
				errs = append(errs, fmt.Errorf("%s can be placed at most %d times per GPU, layout asks for %d",
					p.Name, p.MaxCount, n))
			}
		}
		compute += n * p.ComputeSlices
		memory += n * p.MemorySlices
		if p.MediaExtensions {
			media += n
		}
	}
	if media > 1 {
		errs = append(errs, fmt.Errorf("only one +me instance fits per GPU (it takes the media engines), layout asks for %d", media))
	}
	if compute > g.MIGComputeSlices {
		errs = append(errs, fmt.Errorf("layout uses %d compute slices, %s has %d", compute, g.Name, g.MIGComputeSlices))
	}
	if memory > g.MIGMemorySlices {
		errs = append(errs, fmt.Errorf("layout needs %d memory slices, %s has %d", memory, g.Name, g.MIGMemorySlices))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	var inst []*MIGProfile
	for _, p := range profiles {
		for i := 0; i < merged[p]; i++ {
			inst = append(inst, p)
		}
	}
	// Place the widest intervals first; identical instances take non-decreasing starts.
	sort.SliceStable(inst, func(i, j int) bool { return inst[i].MemorySlices > inst[j].MemorySlices })
	if !place(inst, 0, 0, -1, g.MIGMemorySlices) {
		return fmt.Errorf("%s cannot be placed on the %d memory slices of %s without overlap (start slots: %s)",
			layoutString(profiles, merged), g.MIGMemorySlices, g.Name, startsString(profiles))
	}
	return nil
}

// place assigns instance i onward to free memory slices; used is a bitmask.
func place(inst []*MIGProfile, i int, used uint64, prevStart, slices int) bool {
	if i == len(inst) {
		return true
	}
	p := inst[i]
	for _, s := range p.Starts {
		if i > 0 && inst[i-1] == p && s <= prevStart {
			continue
		}
		if s+p.MemorySlices > slices {
			continue
		}
		mask := uint64(1)<<uint(s+p.MemorySlices) - uint64(1)<<uint(s)
		if used&mask != 0 {
			continue
		}
		if place(inst, i+1, used|mask, s, slices) {
			return true
		}
	}
	return false
}

func profileOrder(g *GPU, p *MIGProfile) int {
	for i, q := range g.migProfiles {
		if q == p {
			return i
		}
	}
	return len(g.migProfiles)
}

func profileList(g *GPU) string {
	names := make([]string, len(g.migProfiles))
	for i, p := range g.migProfiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func layoutString(profiles []*MIGProfile, counts map[*MIGProfile]int) string {
	parts := make([]string, len(profiles))
	for i, p := range profiles {
		parts[i] = fmt.Sprintf("%s×%d", p.Name, counts[p])
	}
	return strings.Join(parts, " + ")
}

func startsString(profiles []*MIGProfile) string {
	parts := make([]string, len(profiles))
	for i, p := range profiles {
		s := make([]string, len(p.Starts))
		for j, v := range p.Starts {
			s[j] = fmt.Sprint(v)
		}
		parts[i] = fmt.Sprintf("%s {%s}", p.Name, strings.Join(s, ","))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
