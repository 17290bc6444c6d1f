package lint

import (
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/mig"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
	"github.com/gpulint/gpulint/internal/value"
	"github.com/gpulint/gpulint/tuner"
)

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
			t := l.resolveTarget(s.file.Path, proj, s.work, l.podHints(s, p))
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
			if mig.Unknown(cat, name) {
				mm["known_profiles"] = anyStrings(mig.KnownProfiles(cat))
			}
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
	for _, key := range value.SortedKeys(data) {
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

// migLayouts renders the verdicts of a mig-parted config's layouts (see
// mig.Layouts), each located by at.
func migLayouts(cat *tuner.Catalog, doc any, t Target, at func(config string, i int) []any) []any {
	var out []any
	for _, v := range mig.Layouts(cat, doc, t.GPU, t.GPUFrom) {
		counts := make(map[string]any, len(v.Counts))
		for k, n := range v.Counts {
			counts[k] = int64(n)
		}
		m := map[string]any{"gpu": v.GPU, "gpu_from": v.GPUFrom, "valid": v.Valid, "counts": counts,
			"path": at(v.Config, v.Entry), "config": v.Config, "entry": int64(v.Entry)}
		if !v.Valid {
			m["reason"] = v.Reason
		}
		if len(v.Unknown) > 0 {
			m["unknown"], m["known_profiles"], m["filter_unknown"] = anyStrings(v.Unknown), anyStrings(v.Known), v.FilterUnknown
			delete(m, "gpu")
			delete(m, "gpu_from")
		}
		if v.GPUs != nil {
			names := make([]any, len(v.GPUs))
			for i, g := range v.GPUs {
				names[i] = g
			}
			m["gpus"] = names
		}
		out = append(out, m)
	}
	return out
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// migParents sizes a workload on a MIG slice whose parent GPU the manifest
// leaves open: the profile name states the slice's memory, and a verdict
// that holds on every catalog GPU with that profile needs no parent. When
// the workload overflows the slice on each of them, the target becomes the
// candidate with the largest slice (the verdict holds a fortiori on the
// rest), its source the MIG resource at at, and Parents names them all.
// Otherwise t is returned unchanged: a fit, or a split verdict, rests on
// the parent.
func (l *Linter) migParents(t Target, w *normalize.Workload, profile string, at finding.Range) Target {
	if t.GPU != nil || profile == "" || t.Model == nil {
		return t
	}
	var best Target
	var names []string
	for _, g := range l.deps.Targets.Catalog().GPUsWithMIGProfile(profile) {
		p, ok := g.MIGProfile(profile)
		if !ok {
			continue
		}
		c := t
		c.GPU, c.MIG, c.GPUFrom, c.GPUAt = g, p, "mig-profile", &at
		est, _ := c.estimate(w)
		if est == nil {
			return t
		}
		total, _ := est["total"].(int64)
		capacity, _ := est["capacity"].(int64)
		if total <= capacity {
			return t
		}
		if best.GPU == nil || p.MemoryBytes > best.MIG.MemoryBytes {
			best = c
		}
		names = append(names, g.Name)
	}
	if best.GPU == nil {
		return t
	}
	best.Parents = names
	return best
}

// migHint sets the MIG profile a container runs in: its
// nvidia.com/mig-<profile> resource, else the -MIG-<profile> suffix of its
// pod's single-strategy product label (whose base GPU may be one the
// catalog lacks). It returns where the profile is written.
func migHint(s *subject, pod kube.Pod, c kube.Container, h *targetHints) finding.Range {
	var at finding.Range
	for _, m := range c.MIG {
		h.MIGProfile, at = m.Profile, s.locate(m.Path)
	}
	if h.MIGProfile == "" && pod.Product != "" {
		if p := tuner.ProductLabelMIG(pod.Product); p != "" {
			h.MIGProfile, at = p, s.locate(pod.ProductAt)
		}
	}
	return at
}
