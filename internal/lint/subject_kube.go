package lint

import (
	"sort"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/ray"
	"github.com/gpulint/gpulint/internal/source"
)

// podInput renders a pod in the plain form the rules read.
func podInput(p kube.Pod) map[string]any {
	cs := make([]any, 0, len(p.Containers))
	for _, c := range p.Containers {
		cs = append(cs, containerInput(c))
	}
	pm := map[string]any{"path": p.Path, "host_ipc": p.HostIPC, "containers": cs, "group": p.Group}
	// A count that is a template variable is left out, not guessed as 1.
	if p.Replicas > 0 {
		pm["replicas"] = p.Replicas
	}
	if p.GroupPods > 0 {
		pm["group_pods"], pm["group_gpus"] = p.GroupPods, p.GroupGPUs
	}
	if p.WorldSize > 0 {
		pm["world_size"] = p.WorldSize
	}
	if p.Product != "" {
		pm["product"] = p.Product
		pm["product_path"] = p.ProductAt
	}
	if len(p.Hints) > 0 {
		hs := make([]any, 0, len(p.Hints))
		for _, h := range p.Hints {
			vals := make([]any, len(h.Values))
			for i, v := range h.Values {
				vals[i] = v
			}
			gpus := make([]any, len(h.GPUs))
			for i, g := range h.GPUs {
				gpus[i] = g
			}
			hs = append(hs, map[string]any{"label": h.Label, "values": vals, "gpus": gpus,
				"count": int64(h.Count), "path": h.Path})
		}
		pm["hardware"] = hs
	}
	if p.MIGStrategy != "" {
		pm["mig_strategy"] = p.MIGStrategy
		pm["mig_strategy_path"] = p.MIGStrategyAt
	}
	return pm
}

// rayStartInput renders the GPUs a KubeRay group's rayStartParams
// advertise to Ray (input.k8s.pods[].ray).
func rayStartInput(rs ray.StartGPUs) map[string]any {
	m := map[string]any{"group": rs.Group}
	if rs.NumGPUsAt != nil {
		m["num_gpus"], m["num_gpus_path"] = rs.NumGPUs, rs.NumGPUsAt
	}
	if rs.ResourceAt != nil {
		m["resource_gpu"], m["resource_gpu_path"] = rs.ResourceGPU, rs.ResourceAt
	}
	return m
}

func containerInput(c kube.Container) map[string]any {
	migs := make([]any, 0, len(c.MIG))
	sort.Slice(c.MIG, func(i, j int) bool { return c.MIG[i].Profile < c.MIG[j].Profile })
	for _, m := range c.MIG {
		migs = append(migs, map[string]any{"profile": m.Profile, "count": m.Count, "path": m.Path})
	}
	res := make([]any, 0, len(c.Resources))
	for _, r := range c.Resources {
		rm := map[string]any{"name": r.Name, "section": r.Section, "value": r.Value, "integer": r.Integer,
			"placeholder": r.Placeholder, "path": r.Path}
		if r.Integer {
			rm["count"] = r.Count
		}
		res = append(res, rm)
	}
	cm := map[string]any{"path": c.Path, "name": c.Name, "image": c.Image, "gpu": c.GPU, "mig": migs,
		"shm": c.ShmSize, "shm_mount": c.ShmMount, "resources": res}
	if c.GPUPath != nil {
		cm["gpu_path"] = c.GPUPath
	}
	if v := c.VLLM; v != nil {
		cm["vllm"] = map[string]any{"tp": v.TP, "pp": v.PP, "dp": v.DP, "dp_local": v.DPLocal}
	}
	return cm
}

// kubernetesSubjects adds the pods of a manifest to its subject and
// derives one vLLM subject per container that launches vLLM. Each vLLM
// subject also gets its pod and container (input.k8s.pod, .container), and
// the manifest's MIG requests are checked against the target GPU's
// profiles.
func (l *Linter) kubernetesSubjects(s *subject, proj *config.Project) ([]*subject, []finding.Finding) {
	pods := kube.FindPods(s.value)
	vs, fs := l.vllmContainerSubjects(s, pods, proj)
	for _, v := range vs {
		if v.kind != string(source.KindVLLM) {
			continue
		}
		for pi := range pods {
			for ci := range pods[pi].Containers {
				if pathEqual(pods[pi].Containers[ci].Path, v.prefix) {
					pods[pi].Containers[ci].VLLM = parallelOf(v)
				}
			}
		}
	}
	k8s := map[string]any{}
	ps := make([]any, 0, len(pods))
	for _, p := range pods {
		pm := podInput(p)
		if rs, ok := ray.GroupStart(s.value, p.Path); ok {
			pm["ray"] = rayStartInput(rs)
		}
		if pl, ok := l.deps.Targets.gpu(p.Product); ok && p.Product != "" {
			pm["product_gpu"] = pl.GPU.Name
			if pl.MIGProfileName != "" && pl.MIG == nil {
				var profiles []string
				for _, pr := range pl.GPU.MIGProfiles() {
					profiles = append(profiles, pr.Name)
				}
				pm["product_mig_missing"] = map[string]any{"profile": pl.MIGProfileName, "gpu_profiles": anyStrings(profiles)}
			}
		}
		l.annotateMIG(s, proj, p, pm)
		ps = append(ps, pm)
	}
	k8s["pods"] = ps
	if ev, ok := kube.Template(s.value); ok {
		k8s["template"] = map[string]any{"value": ev.Value, "path": ev.Path}
	}
	for _, v := range vs {
		for i, p := range pods {
			for j, c := range p.Containers {
				if pathEqual(c.Path, v.prefix) {
					pm := ps[i].(map[string]any)
					v.extra = map[string]any{"k8s": map[string]any{
						"pod": pm, "container": pm["containers"].([]any)[j],
					}}
				}
			}
		}
	}
	s.extra = map[string]any{"k8s": k8s}
	l.embeddedConfigs(s)
	rs, rfs := l.rayEngineSubjects(s, pods, proj)
	ks, kfs := l.kubeAISubjects(s, proj)
	ks = append(ks, l.kaitoSubjects(s, proj)...)
	ks = append(ks, l.nimSubjects(s, pods, proj)...)
	return append(append(vs, rs...), ks...), append(append(fs, rfs...), kfs...)
}

// podHints are what a pod's node selector and affinity say about its
// GPU, located in the manifest subject s.
func (l *Linter) podHints(s *subject, p kube.Pod) targetHints {
	h := targetHints{Product: p.Product, Hints: p.Hints, At: s.locate}
	if p.Product != "" {
		r := s.locate(p.ProductAt)
		h.ProductAt = &r
	} else if _, _, hinted := hintedGPU(p.Hints); !hinted {
		// A pod that selects its nodes by a label of the repository's own
		// Karpenter NodePool runs on that pool's GPU.
		gpu, at, src, ok := l.poolGPU(s.file.Path, p)
		if len(p.NodeSelector) > 0 {
			s.lookups.add(l.poolProbe(s.file.Path, p.NodeSelector))
		}
		if !ok && p.NodeSelector[kube.ComputeClassLabel] != "" {
			s.lookups.add(l.classProbe(s.file.Path, p.NodeSelector))
		}
		if ok {
			h.Product, h.ProductAt = gpu, &at
			s.linked = append(s.linked, src)
		} else if gpu, at, src, ok := l.classGPU(s.file.Path, p); ok {
			// A pod that selects the repository's own GKE ComputeClass
			// runs on the GPU its priorities state.
			h.Product, h.ProductAt = gpu, &at
			s.linked = append(s.linked, src)
		}
	}
	if p.ModelLabel != "" {
		r := s.locate(p.ModelLabelAt)
		h.ModelName, h.ModelNameAt, h.ModelNameBy = p.ModelLabel, &r, "the ai.gke.io/model label"
	}
	return h
}

func pathEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parallelOf reads a vLLM subject's parallel sizes.
func parallelOf(s *subject) *kube.VLLMParallel {
	get := func(f string) int64 {
		if v, ok := s.work.Get(f); ok {
			if n, ok := v.(int64); ok && n > 0 {
				return n
			}
		}
		return 1
	}
	p := &kube.VLLMParallel{TP: get("parallel.tp"), PP: get("parallel.pp"), DP: get("parallel.dp")}
	if m, ok := s.value.(map[string]any); ok {
		if n, ok := kube.ToInt(m["data-parallel-size-local"]); ok {
			p.DPLocal = n
		}
	}
	return p
}

func clone(p []any) []any { return append([]any(nil), p...) }
