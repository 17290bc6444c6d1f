package tuner

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// vllmRelease is the vLLM release a serving workload runs
// (Workload.VLLMVersion). The zero value is an unstated release, which the
// estimate sizes as the current engine does.
type vllmRelease struct {
	major, minor, patch int
	known               bool
}

var vllmVersionPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?$`)
})

// parseVLLMRelease reads "0.10.1", "v0.11.0" or "0.21"; "" is an unstated
// release.
func parseVLLMRelease(s string) (vllmRelease, error) {
	if s == "" {
		return vllmRelease{}, nil
	}
	m := vllmVersionPattern().FindStringSubmatch(s)
	if m == nil {
		return vllmRelease{}, fmt.Errorf("vllm version %q is not X.Y or X.Y.Z", s)
	}
	r := vllmRelease{known: true}
	r.major, _ = strconv.Atoi(m[1])
	r.minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		r.patch, _ = strconv.Atoi(m[3])
	}
	return r, nil
}

// before reports whether the release is stated and older than
// major.minor.patch.
func (v vllmRelease) before(major, minor, patch int) bool {
	if !v.known {
		return false
	}
	if v.major != major {
		return v.major < major
	}
	if v.minor != minor {
		return v.minor < minor
	}
	return v.patch < patch
}

// atLeast reports whether the release is stated and major.minor.patch or
// newer.
func (v vllmRelease) atLeast(major, minor, patch int) bool {
	return v.known && !v.before(major, minor, patch)
}

// sortsInSamplerProfile reports whether the release's profile run sorts
// the whole vocabulary in the dummy sampler run (vllmSortSamplerBytes).
// V1 (the default engine from v0.8.0) builds the dummy SamplingMetadata
// with top_p 0.9 and top_k vocab − 1 (vllm-project/vllm
// vllm/v1/worker/gpu_model_runner.py, inside profile_run in v0.8 and in
// _dummy_sampler_run through v0.11),
// and its PyTorch path, apply_top_k_top_p in
// vllm/v1/sample/ops/topk_topp_sampler.py, sorts the logits for any top-p.
// FlashInfer's sampler, which does not sort, serves instead where
// flashinfer is importable ("VLLM_USE_FLASHINFER_SAMPLER is not False",
// unset meaning on) until vllm-project/vllm#26859 (v0.11.1) turned it off
// by default; in v0.8.x only a flashinfer before 0.2.3, as the
// vllm/vllm-openai images of that series install (0.2.1.post2 in vLLM's
// Dockerfile), is used. So from v0.8.0 until v0.11.0 the sort happens
// only where the install has no FlashInfer sampler (flashinfer says so:
// Workload.VLLMFlashInferSampler); the logs of #23278 (v0.10.1) and
// #27508 (v0.11) show the sort's peak. The Triton top-k/top-p kernel
// (vllm-project/vllm#33538, merged 2026-02-02, "~80MiB of extra VRAM")
// later replaced the sort as the default, and the v0.19 logs the model was
// calibrated on show no sort. Releases v0.12 until that kernel's release
// also sort, but which release shipped it is not pinned here, so they keep
// the current engine's peak (an under-estimate for them).
func (v vllmRelease) sortsInSamplerProfile(flashinfer bool) bool {
	switch {
	case v.atLeast(0, 11, 1) && v.before(0, 12, 0):
		return true
	case v.atLeast(0, 8, 0) && v.before(0, 11, 1):
		return !flashinfer
	}
	return false
}

// graphsInBudget reports whether the release's memory profiler captures
// the CUDA graphs before sizing the KV cache and takes them out of
// gpu_memory_utilization's budget: "Enabled by default as of v0.21.0"
// (vllm-project/vllm vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS;
// vllm/v1/worker/gpu_worker.py determine_available_memory subtracts
// profile_cudagraph_memory()). vLLM 0.19.0's own logs still run with it
// False (llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs
// @d3121e0), and v0.27.1 logs "CUDA graph memory profiling is enabled
// (default since v0.21.0)" (gpustack/runner#251). An unstated release
// keeps the graphs outside the budget, as the estimate always did.
func (v vllmRelease) graphsInBudget() bool { return v.atLeast(0, 21, 0) }

// legacyCaptureRule reports whether the release captures CUDA graphs with
// the rule before v0.11 (sizes up to 512, no FULL decode graphs; see
// vllmCUDAGraphs).
func (v vllmRelease) legacyCaptureRule() bool { return v.before(0, 11, 0) }

// chunkedHybridOff reports whether the release turns vLLM's hybrid KV
// cache manager off by default for chunked local attention (Llama 4):
// from vllm-project/vllm#21761 (v0.10.1) until #29627 made
// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default on
// (vllm-project/vllm#46553 recounts that history); releases v0.10.1 to
// v0.12.0 size every layer as full attention.
func (v vllmRelease) chunkedHybridOff() bool {
	return v.atLeast(0, 10, 1) && v.before(0, 12, 1)
}

// String renders a stated release as vLLM tags it.
func (v vllmRelease) String() string {
	if !v.known {
		return "the current engine"
	}
	return fmt.Sprintf("v%d.%d.%d", v.major, v.minor, v.patch)
}
