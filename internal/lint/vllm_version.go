package lint

import (
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

// judgeRemovals holds the schema's "was removed" notes on vLLM options to
// the release the file states (cmdline.Removal): an option the stated
// release still has is no finding; one it lacks stays a warning naming the
// release; with no release stated (a config file, an image tagged latest
// or by digest) the note drops to info and says it assumes the newest
// vLLM.
func judgeRemovals(s *subject, vs []normalize.Violation) []normalize.Violation {
	var v cmdline.Version
	if s.argv != nil && s.argv.cmd != nil {
		v = s.argv.cmd.Version
	}
	out := vs[:0:0]
	for _, x := range vs {
		r, ok := removalNote(x)
		switch {
		case !ok:
		case v.Known() && r.Present(v):
			continue
		case v.Known():
			x.Message += fmt.Sprintf(" (the file runs %s, from %s)", v, v.From)
		default:
			x.Severity = normalize.SeverityInfo
			x.Message += "; assumes the newest vLLM, as the file states no release: pin the image tag (vllm/vllm-openai:vX.Y.Z) to settle this"
		}
		out = append(out, x)
	}
	return out
}

// removalNote finds the release facts behind the schema's note on a
// removed top-level option.
func removalNote(x normalize.Violation) (cmdline.Removal, bool) {
	if !x.Removed || len(x.Path) != 1 {
		return cmdline.Removal{}, false
	}
	name, _ := x.Path[0].(string)
	return cmdline.RemovalOf(name)
}

// graphProfiledSince is the first vLLM release whose memory profiler
// captures the CUDA graphs once before sizing the KV cache and takes their
// estimate out of gpu_memory_utilization's budget: "Enabled by default as
// of v0.21.0" (vllm-project/vllm vllm/envs.py,
// VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; the opt-in came with
// vllm-project/vllm#30515; vllm/v1/worker/gpu_worker.py
// determine_available_memory subtracts profile_cudagraph_memory()).
// Earlier releases capture the graphs after the KV cache, outside the
// budget: v0.18 announced the default for v0.19, yet vLLM 0.19.0's own
// logs still run with it False and only log the estimate
// (llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs
// @d3121e0, "'VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS': False"), and
// later releases log "CUDA graph memory profiling is enabled (default
// since v0.21.0)" (gpustack/runner#251, vLLM 0.27.1).
var graphProfiledSince = cmdline.Version{Minor: 21}

// graphEnv is the variable that turns the estimate on or off.
const graphEnv = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"

// vllmInput is what the rules read about the vLLM release a container
// states (input.vllm, docs/policy-input.md): release and release_from when
// it states one, and cuda_graphs, where CUDA-graph memory lives: "budget"
// (the profiler reserves it inside gpu_memory_utilization), "outside"
// (captured after the KV cache), absent when the file does not say.
func vllmInput(c *cmdline.Command) map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	v := c.Version
	if v.Known() {
		out["release"], out["release_from"] = v.String(), v.From
		// Which default capture set the release uses (tuner/cudagraph.go):
		// v0.11 bounded it by max_num_seqs and added FULL decode graphs.
		out["capture_rule"] = "v0_11"
		if v.Less(cmdline.Version{Minor: 11}) {
			out["capture_rule"] = "before_v0_11"
		}
	}
	env, set := c.EnvValue(graphEnv)
	switch {
	case set && (env == "0" || strings.EqualFold(env, "false")):
		out["cuda_graphs"] = "outside"
		out["cuda_graphs_from"] = graphEnv + "=" + env
	case v.Known() && !v.Less(graphProfiledSince):
		out["cuda_graphs"] = "budget"
		out["cuda_graphs_from"] = v.From
	case set && !v.Known():
		// Turned on where the release is not stated: a release that
		// predates the variable ignores it, but one that has it budgets
		// the graphs; the rules stay quiet rather than guess.
		out["cuda_graphs"] = "budget"
		out["cuda_graphs_from"] = graphEnv + "=" + env
	case set:
		// Turned on in a release before v0.21: the opt-in exists only
		// from the release that added it, so where the graphs live is
		// not settled.
	case v.Known():
		out["cuda_graphs"] = "outside"
		out["cuda_graphs_from"] = v.From
	}
	return out
}

// droppedInput is input.vllm.dropped: the model's architecture when the
// release the container states no longer serves it (cmdline.Dropped);
// nil when the release or the model is not known, or the release serves
// it.
func droppedInput(c *cmdline.Command, m *tuner.Model) map[string]any {
	if c == nil || m == nil {
		return nil
	}
	d, ok := cmdline.Dropped(strings.ToLower(m.ModelType), c.Version)
	if !ok {
		return nil
	}
	return map[string]any{
		"architecture": d.Architecture, "model_type": d.ModelType, "last": d.Last,
		"since": d.In.String(), "source": d.Source,
	}
}

// withRelease gives t the vLLM release the subject's container states, so
// the serving estimate sizes what that release does (tuner/vllm_release.go:
// the profiled sampler run, CUDA graphs inside the budget from v0.21, the
// capture rule, Llama 4's KV layout). It is located at the container's
// image for a tag, else at the command line that pins it. A container
// that states no release keeps t as it is: the current engine.
func (s *subject) withRelease(t Target) Target {
	if s.argv == nil || s.argv.cmd == nil || !s.argv.cmd.Version.Known() {
		return t
	}
	v := s.argv.cmd.Version
	at := s.argv.whole
	if strings.HasPrefix(v.From, "image ") && s.argv.path != nil && s.argv.doc < len(s.file.Docs) {
		path := append(append([]any(nil), s.argv.path...), "image")
		if root := s.file.Docs[s.argv.doc].Root; root != nil {
			if n, _, matched := root.Lookup(path); n != nil && matched == len(path) {
				at = finding.Range{File: s.file.Path, Start: n.Start, End: n.End}
			}
		}
	}
	t.VLLMRelease, t.VLLMReleaseFrom, t.VLLMReleaseAt = v.String(), v.From, &at
	return t
}

// applyRelease passes a stated vLLM release to a vLLM serving workload.
func (t Target) applyRelease(w *normalize.Workload, tw tuner.Workload) tuner.Workload {
	if fw, _ := w.Get("framework"); t.VLLMRelease == "" || tw.Kind != tuner.Serve || fw != "vllm" {
		return tw
	}
	tw.VLLMVersion = t.VLLMRelease
	// The vllm/vllm-openai images install flashinfer (0.2.1.post2 in
	// v0.8.x, which that series' sampler takes; later ones build it), so
	// an image-stated v0.8-v0.11.0 samples with FlashInfer's kernel; a pip
	// pin says nothing of flashinfer and keeps the PyTorch sort, the larger
	// peak (tuner vllmRelease.sortsInSamplerProfile).
	tw.VLLMFlashInferSampler = strings.HasPrefix(t.VLLMReleaseFrom, "image ")
	return tw
}
