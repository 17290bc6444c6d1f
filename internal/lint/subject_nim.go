package lint

import (
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/kube"
	"github.com/gpulint/gpulint/internal/normalize"
)

// kindNIM is the subject kind of the server an NVIDIA NIM for LLMs
// container runs (kube.NIM). Its engine options are NIM's choice, not the
// file's, so no vLLM rule and no plan reads it: it carries the memory
// verdict (files[].sizing) and vram-overcommit.
const kindNIM = "nim"

// nimSubjects derives the servers of a manifest's NIMs: a NIM Operator
// NIMService, or a pod's container that runs a NIM image.
func (l *Linter) nimSubjects(s *subject, pods []kube.Pod, proj *config.Project) []*subject {
	if n, ok := kube.ReadNIMService(s.value); ok {
		if ns := l.nimSubject(s, n, proj); ns != nil {
			return []*subject{ns}
		}
		return nil
	}
	var out []*subject
	for _, p := range pods {
		for _, c := range p.Containers {
			if n, ok := kube.NIMContainer(s.value, p, c); ok {
				if ns := l.nimSubject(s, n, proj); ns != nil {
					out = append(out, ns)
				}
			}
		}
	}
	return out
}

// nimSubject sizes the server a NIM runs as NIM would start it, nil when
// it cannot be sized: a retrieval NIM (no KV cache), a multi-node
// NIMService (the operator's parallel sizes), no GPU count, or a model
// name the catalog cannot map.
//
// What NIM runs rests on inputs the file rarely states, each an assumed
// input of every verdict:
//   - the model: the image names a NIM, mapped to a catalog model by its
//     name alone (tuner.Catalog.ModelByName), unless NIM_MODEL_PATH points
//     a model-free NIM at a Hugging Face model, which is stated;
//   - the profile: unless pinned by a readable profile name, NIM picks one
//     at start among those its image ships for the number and type of GPUs
//     it detects, TensorRT-LLM before vLLM and lower precision first
//     (docs.nvidia.com/nim/large-language-models/1.1.0/profiles.html,
//     Automatic Profile Selection); a throughput profile may use fewer GPUs
//     than a latency one (.../1.0.0/optimization.html). gpulint sizes
//     tensor parallelism over every GPU the container gets, and bf16
//     weights; on a GPU with FP8 an fp8 profile may be picked instead, and
//     when the two disagree the sizing holds both (files[].sizing
//     alternatives, open "profile"). Weights that exceed the GPUs even at
//     4 bits fit under no profile: that verdict does not rest on it;
//   - the context: NIM_MAX_MODEL_LEN when set, else the model's own
//     (docs.nvidia.com/nim/large-language-models/1.10.0/configuration.html,
//     NIM_MAX_MODEL_LEN), held as one whole sequence in the KV cache as
//     vLLM's engine requires at start.
func (l *Linter) nimSubject(s *subject, n kube.NIM, proj *config.Project) *subject {
	if n.NotLLM != "" || n.MultiNode || n.GPUs <= 0 {
		return nil
	}
	imageAt := s.locate(n.ImageAt)
	gpusAt := s.locate(n.GPUsAt)
	h := l.podHints(s, n.Pod)
	if n.ModelID == "" {
		h.ModelName, h.ModelNameAt, h.ModelNameBy = n.Model, &imageAt, "the NIM image"
	}
	prof := kube.ParseNIMProfile(n.Profile)
	tp := int(n.GPUs)
	if prof.Known {
		tp = prof.TP * max(prof.PP, 1)
	}
	h.GPUs, h.GPUsRange = tp, &gpusAt
	at := map[string]finding.Range{"model": imageAt, "tensor-parallel-size": gpusAt}
	if n.ModelID != "" {
		at["model"] = s.locate(n.ModelIDAt)
	}
	if prof.Known {
		// The pinned profile states the GPUs the server spans.
		pr := s.locate(n.ProfileAt)
		at["tensor-parallel-size"], h.GPUsRange = pr, &pr
	}
	build := func(precision string, ctxLen int64) *subject {
		val := map[string]any{"tensor-parallel-size": int64(tp)}
		if prof.Known && prof.PP > 1 {
			val["tensor-parallel-size"], val["pipeline-parallel-size"] = int64(prof.TP), int64(prof.PP)
		}
		switch precision {
		case "fp8":
			val["quantization"] = "fp8"
		case "int4":
			val["quantization"] = "awq"
		case "fp16":
			val["dtype"] = "float16"
		default:
			val["dtype"] = "bfloat16"
		}
		if ctxLen > 0 {
			val["max-model-len"] = ctxLen
		}
		if n.ModelID != "" {
			val["model"] = n.ModelID
		}
		ns := &subject{lookups: s.lookups, kind: kindNIM, file: s.file, doc: s.doc, root: s.root, value: val, optAt: at, whole: &imageAt}
		ns.work = normalize.VLLM(val)
		ns.tgt = l.resolveTarget(s.file.Path, proj, ns.work, h)
		return ns
	}
	probe := build("bf16", n.MaxModelLen)
	t := probe.tgt
	if t.Model == nil || t.GPU == nil || t.MIG != nil {
		return nil
	}
	ctxLen, ctxAssumed := n.MaxModelLen, false
	if ctxLen > 0 {
		at["max-model-len"] = s.locate(n.MaxModelLenAt)
	} else {
		ctxLen, ctxAssumed = int64(t.Model.MaxPositions), true
		if ctxLen <= 0 {
			return nil
		}
	}
	var precisions []string
	switch {
	case prof.Known && (prof.Precision == "bf16" || prof.Precision == "fp16" || prof.Precision == "fp8"):
		precisions = []string{prof.Precision}
	case prof.Known:
		return nil // a quantization the memory model does not size
	case t.GPU.SupportsFP8():
		precisions = []string{"fp8", "bf16"}
	default:
		precisions = []string{"bf16"}
	}
	var subs []*subject
	var alts []SizingAlternative
	for _, p := range precisions {
		ns := build(p, ctxLen)
		need, capacity, _ := nimNeed(ns)
		if capacity <= 0 {
			return nil
		}
		subs = append(subs, ns)
		alts = append(alts, SizingAlternative{Value: p, Fits: need <= capacity, PerGPUBytes: need})
	}
	// Weights that exceed the GPUs even at 4 bits (int4, AWQ's group-128
	// layout, the smallest a NIM profile's precision takes: int4_awq) over
	// every GPU the container gets exceed them under any profile NIM may
	// pick: the GPU count is then the manifest's fact, not an assumption.
	anyProfile, fourBitFits, floor := false, false, int64(0)
	if !prof.Known && !alts[0].Fits && !alts[len(alts)-1].Fits {
		need, capacity, weights := nimNeed(build("int4", ctxLen))
		anyProfile, floor = capacity > 0 && weights > capacity, weights
		fourBitFits = capacity > 0 && need <= capacity
	}
	// The subject the rules judge: the bf16 profile when every precision
	// gives one verdict (its weights are the largest), else the fp8 one
	// NIM prefers where its image ships it, with both in the sizing.
	ns, agree := subs[len(subs)-1], true
	for _, a := range alts {
		agree = agree && a.Fits == alts[0].Fits
	}
	if !agree {
		ns = subs[0]
		ns.open = &nimOpen{alts: alts, note: fmt.Sprintf("fits with an fp8 profile (%s a GPU), not with bf16 (%s): NIM picks fp8 only where its image ships an fp8 profile for this GPU; set NIM_MODEL_PROFILE to say which",
			gib(alts[0].PerGPUBytes), gib(alts[1].PerGPUBytes))}
	}
	if anyProfile {
		ns.defaults = append(ns.defaults, finding.Input{Name: "gpus", Source: finding.SourceFile, Range: &gpusAt,
			Value: fmt.Sprintf("%d (nvidia.com/gpu); even 4-bit weights (%s a GPU) exceed the GPU, so no profile NIM may pick fits", tp, gib(floor))})
	}
	if !prof.Known && !anyProfile {
		// The profile is NIM's pick: the GPU count is the limit's, the
		// tensor parallelism over all of it an assumption.
		fourBit := ""
		if fourBitFits {
			fourBit = "; a 4-bit profile, where the image ships one, would fit"
		}
		ns.defaults = append(ns.defaults, finding.Input{Name: "gpus", Source: finding.SourceAssumed, Range: &gpusAt,
			Value: fmt.Sprintf("%d (nvidia.com/gpu), all in one %s profile as NIM picks it at start (lower precision first; a throughput profile may use fewer GPUs)%s",
				tp, strings.Join(precisions, " or "), fourBit),
			Settle: "set NIM_MODEL_PROFILE or storage.nimCache.profile to a profile name"})
	}
	if ctxAssumed {
		ns.defaults = append(ns.defaults, finding.Input{Name: "seq_len", Value: fmt.Sprintf("%d (the model's context, NIM's default)", ctxLen),
			Source: finding.SourceAssumed, Range: &imageAt, Settle: "set NIM_MAX_MODEL_LEN"})
	}
	return ns
}

// nimOpen is the profile a NIM leaves open when its precisions disagree:
// the estimate under each and what to state.
type nimOpen struct {
	alts []SizingAlternative
	note string
}

// apply fills a sizing with the open profile: it fits only when every
// precision does.
func (o *nimOpen) apply(z *Sizing) {
	if o == nil || z == nil {
		return
	}
	z.Open, z.Alternatives, z.Note = "profile", o.alts, o.note
	z.Fits = true
	for _, a := range o.alts {
		z.Fits = z.Fits && a.Fits
	}
}

// nimNeed is a NIM subject's estimate: the per-GPU need, the capacity and
// the weights' share.
func nimNeed(ns *subject) (need, capacity, weights int64) {
	est, _ := ns.tgt.estimate(ns.work)
	need, _ = est["total"].(int64)
	capacity, _ = est["capacity"].(int64)
	b, _ := est["breakdown"].(map[string]any)
	weights, _ = b["weights"].(int64)
	return need, capacity, weights
}
