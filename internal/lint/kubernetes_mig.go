package lint

import (
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/tuner"
)

// migDeviceIDs maps the PCI device ids mig-parted device filters use
// ("0x233010DE": device 0x2330, vendor 0x10DE) to the catalog GPU with the
// same MIG profile set. H800 and A800 parts share the H100-80GB and A100
// profiles (gpus.md §2.4, §2.5); ids of GPUs the catalog lacks (GH200
// 144GB, B300, GB300, RTX PRO 6000) are left out, so their entries get no
// verdict. Source: kubernetes-gpu.md §5 (NVIDIA/mig-parted and the GPU
// Operator's default-mig-parted-config), gpus.md §2.14.
var migDeviceIDs = map[string]string{
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
	key, ok := migDeviceIDs[s]
	if !ok {
		return nil, false
	}
	return cat.GPU(key)
}

// annotateMIG adds, to each MIG request of a rendered pod, whether the
// pod's GPU has that profile: known, gpu, gpu_profiles (when the GPU is
// known: flag, project file or the pod's product label) and catalog_gpus
// (the catalog GPUs that have a profile of that name).
func (l *Linter) annotateMIG(s *subject, proj *config.Project, p kube.Pod, pm map[string]any) {
	cat := l.deps.Targets.Catalog()
	var gpu *tuner.GPU
	gpuFrom := ""
	for _, c := range p.Containers {
		if len(c.MIG) > 0 {
			t := l.resolveTarget(s.file.Path, proj, s.work, targetHints{Product: p.Product})
			gpu, gpuFrom = t.GPU, t.GPUFrom
			break
		}
	}
	for _, c := range pm["containers"].([]any) {
		for _, m := range c.(map[string]any)["mig"].([]any) {
			mm := m.(map[string]any)
			name := mm["profile"].(string)
			var names []any
			for _, g := range cat.GPUsWithMIGProfile(name) {
				names = append(names, g.Name)
			}
			mm["catalog_gpus"] = append([]any{}, names...)
			if gpu == nil {
				continue
			}
			_, ok := gpu.MIGProfile(name)
			profiles := []any{}
			for _, pr := range gpu.MIGProfiles() {
				profiles = append(profiles, pr.Name)
			}
			mm["known"], mm["gpu"], mm["gpu_from"], mm["gpu_profiles"] = ok, gpu.Name, gpuFrom, profiles
		}
	}
}

// embeddedConfigs finds mig-parted and device-plugin configs held as
// strings in a ConfigMap's data (how the GPU Operator and the device
// plugin's Helm chart ship them), parses them, and adds them to the
// subject's input as k8s.embedded [{path, kind, doc}], with the verdicts of
// their MIG layouts under mig.layouts.
func (l *Linter) embeddedConfigs(s *subject) {
	m, ok := s.value.(map[string]any)
	if !ok || m["kind"] != "ConfigMap" {
		return
	}
	data, _ := m["data"].(map[string]any)
	var embedded, layouts []any
	for _, key := range sortedKeys(data) {
		text, ok := data[key].(string)
		if !ok || !strings.Contains(text, "version") {
			continue
		}
		f, err := source.Parse(key, []byte(text), l.opts.Limits)
		if err != nil || len(f.Docs) != 1 || f.Docs[0].Root == nil || source.Detect(f) != source.KindMIG {
			continue
		}
		doc, err := f.Docs[0].Root.ToValue(l.opts.Limits.MaxNodes)
		if err != nil {
			continue
		}
		at := []any{"data", key}
		kind := "device-plugin"
		if dm, ok := doc.(map[string]any); ok && dm["mig-configs"] != nil {
			kind = "mig-parted"
			layouts = append(layouts, migLayouts(l.deps.Targets.Catalog(), doc, s.tgt, func(string, int) []any { return at })...)
		}
		embedded = append(embedded, map[string]any{"path": at, "kind": kind, "doc": doc})
	}
	if len(embedded) == 0 {
		return
	}
	s.extra["k8s"].(map[string]any)["embedded"] = embedded
	s.extra["mig"] = map[string]any{"layouts": layouts}
}

// migInput renders input.mig for a mig-parted document (kind mig): the
// verdicts of its layouts, each located at its entry's mig-devices.
func migInput(cat *tuner.Catalog, doc any, t Target) map[string]any {
	at := func(config string, i int) []any { return []any{"mig-configs", config, i, "mig-devices"} }
	return map[string]any{"layouts": migLayouts(cat, doc, t, at)}
}

// migLayouts checks every MIG-enabled entry of a mig-parted config with
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
// Entries whose profiles no candidate GPU has get no verdict: the catalog
// may lack the GPU, and the schema checks the profile format.
func migLayouts(cat *tuner.Catalog, doc any, t Target, at func(config string, i int) []any) []any {
	configs, _ := kube.LookupAny(doc, "mig-configs").(map[string]any)
	var out []any
	for _, name := range sortedKeys(configs) {
		for i, e := range asList(configs[name]) {
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
			v := layoutVerdict(cat, em["device-filter"], counts, t)
			if v == nil {
				continue
			}
			v["path"], v["config"], v["entry"] = at(name, i), name, int64(i)
			out = append(out, v)
		}
	}
	return out
}

// layoutVerdict validates one entry's counts; nil when no GPU applies.
func layoutVerdict(cat *tuner.Catalog, filter any, counts map[string]int, t Target) map[string]any {
	hasAll := func(g *tuner.GPU) bool {
		for p := range counts {
			if _, ok := g.MIGProfile(p); !ok {
				return false
			}
		}
		return true
	}
	verdict := func(g *tuner.GPU, from string) map[string]any {
		v := map[string]any{"gpu": g.Name, "gpu_from": from, "valid": true, "counts": countsInput(counts)}
		if err := tuner.ValidateMIGLayout(g, counts); err != nil {
			v["valid"], v["reason"] = false, strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		return v
	}
	var filtered []*tuner.GPU
	ids := asList(filter)
	if s, ok := filter.(string); ok {
		ids = []any{s}
	}
	for _, id := range ids {
		if g, ok := deviceFilterGPU(cat, str(id)); ok && hasAll(g) {
			filtered = append(filtered, g)
		}
	}
	if len(filtered) > 0 {
		for _, g := range filtered {
			if v := verdict(g, "device-filter"); v["valid"] == false {
				return v
			}
		}
		return verdict(filtered[0], "device-filter")
	}
	if len(ids) > 0 {
		return nil // filtered to GPUs gpulint does not know
	}
	if t.GPU != nil && t.GPU.MIGCapable() && hasAll(t.GPU) {
		return verdict(t.GPU, t.GPUFrom)
	}
	var first map[string]any
	var names []any
	for _, g := range cat.GPUs() {
		if !g.MIGCapable() || !hasAll(g) {
			continue
		}
		v := verdict(g, "profiles")
		if v["valid"] == true {
			return nil // some GPU with these profiles holds the layout
		}
		if first == nil {
			first = v
		}
		names = append(names, g.Name)
	}
	if first != nil {
		first["gpus"] = names
	}
	return first
}

func countsInput(counts map[string]int) map[string]any {
	out := make(map[string]any, len(counts))
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = int64(counts[k])
	}
	return out
}
