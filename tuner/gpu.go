package tuner

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"
)

// MiB and GiB are byte multiples used throughout the memory model.
const (
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

// Usable-capacity derivation for GPUs without a published torch total_memory:
// usable = driver MiB × 985/1000. The pairs in memory-model.md "Units" give
// ratios between 0.983 and 0.993 (A100-40GB 39.38/40, RTX 3090 23.58/24,
// RTX 5090 31.37/31.84, H100 79.11/79.65, V100-32GB 31.75/32); 0.985 sits at the
// conservative end. Older drivers report total minus a reservation of the
// same size (gpus.md §1.2: T4 15109/15360 = 0.984, A100-40GB 40536/40960 = 0.990).
const (
	usableNum = 985
	usableDen = 1000
)

// MIG slice-size derivation for profiles without an `nvidia-smi mig -lgip`
// figure: driver MiB / memory slices × slices × 98/100. On H100 80GB the measured
// sizes are 0.979 (1 slice) to 0.995 (8 slices) of that proportion (gpus.md §2.5).
const (
	migNum = 98
	migDen = 100
)

// ComputeCapability is an NVIDIA CUDA compute capability.
type ComputeCapability struct {
	Major, Minor int
}

// AtLeast reports whether c is major.minor or newer.
func (c ComputeCapability) AtLeast(major, minor int) bool {
	return c.Major > major || (c.Major == major && c.Minor >= minor)
}

// String formats c as "major.minor".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// Interconnect describes the GPU-to-GPU link.
type Interconnect struct {
	// Type is nvlink, nvlink-bridge, pcie, c2c or infinity-fabric.
	Type string
	// BandwidthGBps is the per-GPU link bandwidth in GB/s; 0 when unknown or none.
	BandwidthGBps float64
}

// TFLOPS holds dense tensor throughput by dtype; zero means not supported or unknown.
type TFLOPS struct {
	BF16, FP16, FP8, FP4 float64
}

// GPU is one catalog entry.
type GPU struct {
	Key          string // stable id, e.g. "h100-sxm"
	Name         string // catalog name the CLI documents, e.g. "H100-80GB"
	DisplayName  string
	Vendor       string // "nvidia" or "amd"
	Architecture string
	CC           ComputeCapability // zero for AMD
	GFX          string            // AMD gfx target, empty for NVIDIA
	Aliases      []string
	Labels       []string // nvidia.com/gpu.product spellings

	DriverMiB     int64  // nvidia-smi memory.total
	UsableBytes   int64  // torch total_memory: what a process can allocate in total
	UsableSource  string // where UsableBytes comes from
	BandwidthGBps float64
	TFLOPS        TFLOPS
	Interconnect  Interconnect
	Note          string

	// MIG geometry; zero values when the GPU has no MIG.
	MIGComputeSlices int
	MIGMemorySlices  int
	migProfiles      []*MIGProfile
}

// SupportsBF16 reports native BF16 tensor cores (gpus.md §1.3: cc ≥ 8.0; AMD CDNA2+).
func (g *GPU) SupportsBF16() bool {
	if g.Vendor == "amd" {
		return amdFeatures(g.GFX).bf16
	}
	return g.CC.AtLeast(8, 0)
}

// SupportsFP8 reports FP8 tensor cores (gpus.md §1.3: cc 8.9 or ≥ 9.0; AMD gfx942 FNUZ).
func (g *GPU) SupportsFP8() bool {
	if g.Vendor == "amd" {
		return amdFeatures(g.GFX).fp8
	}
	return g.CC.AtLeast(8, 9)
}

// SupportsFP4 reports FP4 (NVFP4/MXFP4) tensor cores (gpus.md §1.3: cc ≥ 10.0).
func (g *GPU) SupportsFP4() bool {
	if g.Vendor == "amd" {
		return amdFeatures(g.GFX).fp4
	}
	return g.CC.AtLeast(10, 0)
}

// MIGCapable reports whether the catalog lists MIG profiles for g.
func (g *GPU) MIGCapable() bool { return len(g.migProfiles) > 0 }

// MIGProfiles returns g's MIG profiles in catalog order.
func (g *GPU) MIGProfiles() []*MIGProfile { return append([]*MIGProfile(nil), g.migProfiles...) }

type gfxFeatures struct{ bf16, fp8, fp4 bool }

// amdFeatures derives AMD capabilities from the gfx target (gpus.md §1.1,
// precision.md §4: MI250X gfx90a has no FP8; MI300 gfx942 has FNUZ FP8;
// MI350 gfx950 adds OCP FP8 and FP4).
func amdFeatures(gfx string) gfxFeatures {
	switch gfx {
	case "gfx90a":
		return gfxFeatures{bf16: true}
	case "gfx942":
		return gfxFeatures{bf16: true, fp8: true}
	case "gfx950":
		return gfxFeatures{bf16: true, fp8: true, fp4: true}
	}
	return gfxFeatures{}
}

// --- decoding --------------------------------------------------------------

type gpuFile struct {
	Version    int           `yaml:"version" json:"version"`
	Geometries []geometryDoc `yaml:"mig_geometries" json:"mig_geometries"`
	GPUs       []gpuDoc      `yaml:"gpus" json:"gpus"`
}

type geometryDoc struct {
	Name          string         `yaml:"name" json:"name"`
	ComputeSlices int            `yaml:"compute_slices" json:"compute_slices"`
	MemorySlices  int            `yaml:"memory_slices" json:"memory_slices"`
	Placements    []placementDoc `yaml:"placements" json:"placements"`
}

type placementDoc struct {
	Class         string `yaml:"class" json:"class"`
	GIProfileID   int    `yaml:"gi_profile_id" json:"gi_profile_id"`
	ComputeSlices int    `yaml:"compute_slices" json:"compute_slices"`
	MemorySlices  int    `yaml:"memory_slices" json:"memory_slices"`
	Starts        []int  `yaml:"starts" json:"starts"`
	MaxCount      int    `yaml:"max_count" json:"max_count"`
}

type gpuDoc struct {
	Key          string   `yaml:"key" json:"key"`
	Name         string   `yaml:"name" json:"name"`
	DisplayName  string   `yaml:"display_name" json:"display_name"`
	Vendor       string   `yaml:"vendor" json:"vendor"`
	Architecture string   `yaml:"architecture" json:"architecture"`
	CC           *ccDoc   `yaml:"compute_capability" json:"compute_capability"`
	GFX          string   `yaml:"gfx" json:"gfx"`
	Aliases      []string `yaml:"aliases" json:"aliases"`
	Labels       []string `yaml:"labels" json:"labels"`
	Memory       struct {
		DriverMiB    int64   `yaml:"driver_mib" json:"driver_mib"`
		UsableGiB    float64 `yaml:"usable_gib" json:"usable_gib"`
		UsableSource string  `yaml:"usable_source" json:"usable_source"`
	} `yaml:"memory" json:"memory"`
	BandwidthGBps float64            `yaml:"bandwidth_gbps" json:"bandwidth_gbps"`
	TFLOPS        map[string]float64 `yaml:"tflops" json:"tflops"`
	Interconnect  struct {
		Type          string  `yaml:"type" json:"type"`
		BandwidthGBps float64 `yaml:"bandwidth_gbps" json:"bandwidth_gbps"`
	} `yaml:"interconnect" json:"interconnect"`
	MIG  *gpuMIGDoc `yaml:"mig" json:"mig"`
	Note string     `yaml:"note" json:"note"`
}

type ccDoc struct {
	Major int `yaml:"major" json:"major"`
	Minor int `yaml:"minor" json:"minor"`
}

type gpuMIGDoc struct {
	Geometry string          `yaml:"geometry" json:"geometry"`
	Profiles []migProfileDoc `yaml:"profiles" json:"profiles"`
}

type migProfileDoc struct {
	Name         string  `yaml:"name" json:"name"`
	Class        string  `yaml:"class" json:"class"`
	MemoryGiB    float64 `yaml:"memory_gib" json:"memory_gib"`
	MemorySource string  `yaml:"memory_source" json:"memory_source"`
}

var (
	keyPattern        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
	validVendors      = map[string]bool{"nvidia": true, "amd": true}
	validArchitecture = map[string]bool{
		"volta": true, "turing": true, "ampere": true, "ada": true, "hopper": true,
		"blackwell": true, "cdna2": true, "cdna3": true, "cdna4": true,
	}
	validInterconnect = map[string]bool{
		"nvlink": true, "nvlink-bridge": true, "pcie": true, "c2c": true, "infinity-fabric": true,
	}
	validTFLOPSKeys = map[string]bool{"bf16": true, "fp16": true, "fp8": true, "fp4": true}
)

// gibToBytes converts a GiB figure as printed by tools (two decimals) into
// bytes, rounded to whole MiB.
func gibToBytes(gib float64) int64 {
	return int64(math.Round(gib*1024)) * MiB
}

// buildGPUs validates the decoded file and turns it into GPU values.
func buildGPUs(f gpuFile) ([]*GPU, error) {
	if f.Version != 1 {
		return nil, fmt.Errorf("gpu catalog: unsupported version %d", f.Version)
	}
	geoms := map[string]geometryDoc{}
	for _, g := range f.Geometries {
		if err := checkGeometry(g); err != nil {
			return nil, err
		}
		if _, dup := geoms[g.Name]; dup {
			return nil, fmt.Errorf("gpu catalog: duplicate mig geometry %q", g.Name)
		}
		geoms[g.Name] = g
	}
	var out []*GPU
	var errs []error
	for i := range f.GPUs {
		g, err := buildGPU(f.GPUs[i], geoms)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, g)
	}
	return out, errors.Join(errs...)
}

func checkGeometry(g geometryDoc) error {
	if g.Name == "" || g.ComputeSlices <= 0 || g.MemorySlices <= 0 || len(g.Placements) == 0 {
		return fmt.Errorf("gpu catalog: mig geometry %q is incomplete", g.Name)
	}
	seen := map[string]bool{}
	for _, p := range g.Placements {
		if seen[p.Class] {
			return fmt.Errorf("gpu catalog: mig geometry %s: duplicate class %q", g.Name, p.Class)
		}
		seen[p.Class] = true
		if p.ComputeSlices <= 0 || p.ComputeSlices > g.ComputeSlices || p.MemorySlices <= 0 ||
			p.MemorySlices > g.MemorySlices || p.MaxCount <= 0 || len(p.Starts) == 0 {
			return fmt.Errorf("gpu catalog: mig geometry %s: class %q has out-of-range fields", g.Name, p.Class)
		}
		for _, s := range p.Starts {
			if s < 0 || s+p.MemorySlices > g.MemorySlices {
				return fmt.Errorf("gpu catalog: mig geometry %s: class %q start %d overruns %d memory slices",
					g.Name, p.Class, s, g.MemorySlices)
			}
		}
	}
	return nil
}

func buildGPU(d gpuDoc, geoms map[string]geometryDoc) (*GPU, error) {
	where := fmt.Sprintf("gpu catalog: %s", d.Key)
	switch {
	case !keyPattern().MatchString(d.Key):
		return nil, fmt.Errorf("gpu catalog: key %q is not kebab case", d.Key)
	case d.Name == "" || d.DisplayName == "":
		return nil, fmt.Errorf("%s: name and display_name are required", where)
	case !validVendors[d.Vendor]:
		return nil, fmt.Errorf("%s: unknown vendor %q", where, d.Vendor)
	case !validArchitecture[d.Architecture]:
		return nil, fmt.Errorf("%s: unknown architecture %q", where, d.Architecture)
	case d.Vendor == "nvidia" && (d.CC == nil || d.CC.Major < 7):
		return nil, fmt.Errorf("%s: nvidia GPUs need compute_capability ≥ 7.0", where)
	case d.Vendor == "amd" && (d.GFX == "" || d.CC != nil):
		return nil, fmt.Errorf("%s: amd GPUs need gfx and no compute_capability", where)
	case d.Memory.DriverMiB <= 0:
		return nil, fmt.Errorf("%s: memory.driver_mib must be positive", where)
	case !validInterconnect[d.Interconnect.Type]:
		return nil, fmt.Errorf("%s: unknown interconnect type %q", where, d.Interconnect.Type)
	case d.BandwidthGBps <= 0:
		return nil, fmt.Errorf("%s: bandwidth_gbps must be positive", where)
	}
	g := &GPU{
		Key: d.Key, Name: d.Name, DisplayName: d.DisplayName, Vendor: d.Vendor,
		Architecture: d.Architecture, GFX: d.GFX,
		Aliases: append([]string(nil), d.Aliases...), Labels: append([]string(nil), d.Labels...),
		DriverMiB: d.Memory.DriverMiB, BandwidthGBps: d.BandwidthGBps, Note: d.Note,
		Interconnect: Interconnect{Type: d.Interconnect.Type, BandwidthGBps: d.Interconnect.BandwidthGBps},
	}
	if d.CC != nil {
		g.CC = ComputeCapability{Major: d.CC.Major, Minor: d.CC.Minor}
	}
	for k, v := range d.TFLOPS {
		if !validTFLOPSKeys[k] || v <= 0 {
			return nil, fmt.Errorf("%s: bad tflops entry %s: %v", where, k, v)
		}
		switch k {
		case "bf16":
			g.TFLOPS.BF16 = v
		case "fp16":
			g.TFLOPS.FP16 = v
		case "fp8":
			g.TFLOPS.FP8 = v
		case "fp4":
			g.TFLOPS.FP4 = v
		}
	}
	driver := d.Memory.DriverMiB * MiB
	if d.Memory.UsableGiB > 0 {
		if d.Memory.UsableSource == "" {
			return nil, fmt.Errorf("%s: memory.usable_gib needs memory.usable_source", where)
		}
		g.UsableBytes = gibToBytes(d.Memory.UsableGiB)
		g.UsableSource = d.Memory.UsableSource
		if g.UsableBytes > driver {
			return nil, fmt.Errorf("%s: usable memory exceeds the driver total", where)
		}
	} else {
		g.UsableBytes = driver / usableDen * usableNum
		g.UsableSource = fmt.Sprintf("derived: %d MiB × %d/%d (no published torch total_memory)",
			d.Memory.DriverMiB, usableNum, usableDen)
	}
	if d.MIG != nil {
		if err := attachMIG(g, d.MIG, geoms); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	return g, nil
}

var profileNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+)g\.(\d+)gb(\+me|\+me\.all|-me|\+gfx)?$`) })

func attachMIG(g *GPU, m *gpuMIGDoc, geoms map[string]geometryDoc) error {
	geom, ok := geoms[m.Geometry]
	if !ok {
		return fmt.Errorf("unknown mig geometry %q", m.Geometry)
	}
	classes := map[string]placementDoc{}
	for _, p := range geom.Placements {
		classes[p.Class] = p
	}
	g.MIGComputeSlices, g.MIGMemorySlices = geom.ComputeSlices, geom.MemorySlices
	seen := map[string]bool{}
	for _, pd := range m.Profiles {
		pl, ok := classes[pd.Class]
		if !ok {
			return fmt.Errorf("mig profile %s: unknown class %q", pd.Name, pd.Class)
		}
		match := profileNamePattern().FindStringSubmatch(pd.Name)
		if match == nil {
			return fmt.Errorf("mig profile %q: malformed name", pd.Name)
		}
		if gslices, _ := strconv.Atoi(match[1]); gslices != pl.ComputeSlices {
			return fmt.Errorf("mig profile %s: name says %d compute slices, class %s has %d",
				pd.Name, gslices, pd.Class, pl.ComputeSlices)
		}
		if seen[pd.Name] {
			return fmt.Errorf("duplicate mig profile %s", pd.Name)
		}
		seen[pd.Name] = true
		p := &MIGProfile{
			Name: pd.Name, Class: pd.Class, GIProfileID: pl.GIProfileID,
			ComputeSlices: pl.ComputeSlices, MemorySlices: pl.MemorySlices,
			MaxCount: pl.MaxCount, Starts: append([]int(nil), pl.Starts...),
			MediaExtensions: match[3] == "+me" || match[3] == "+me.all",
		}
		if pd.MemoryGiB > 0 {
			if pd.MemorySource == "" {
				return fmt.Errorf("mig profile %s: memory_gib needs memory_source", pd.Name)
			}
			p.MemoryBytes = gibToBytes(pd.MemoryGiB)
			p.MemorySource = pd.MemorySource
		} else {
			p.MemoryBytes = g.DriverMiB * MiB / int64(geom.MemorySlices) * int64(pl.MemorySlices) / migDen * migNum
			p.MemoryBytes = p.MemoryBytes / MiB * MiB
			p.MemorySource = fmt.Sprintf("derived: %d MiB / %d × %d × %d/%d", g.DriverMiB,
				geom.MemorySlices, pl.MemorySlices, migNum, migDen)
		}
		g.migProfiles = append(g.migProfiles, p)
	}
	return nil
}
