package lint

import (
	"fmt"
	"strings"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

// The project file's target may state every input of the memory model that
// `gpulint estimate` takes as a flag (schemas/config.cue #ConfigTarget).
// What the linted file states wins (TARGET001); a stated value fills only
// what the file leaves to its script, and the verdict's evidence names the
// project file's line.

// applyStatedGPUMemory replaces the usable memory of a GPU the project file
// names with the project's gpu_memory, so every check that reads the GPU's
// memory reads the stated one. A GPU the file itself names keeps the
// catalog's.
func (t *Target) applyStatedGPUMemory() {
	st := t.Stated
	if st.GPUMemory == "" || t.GPU == nil || t.GPUFrom != "project" || t.MIG != nil {
		return
	}
	n, err := parseMemory(st.GPUMemory)
	if err != nil || n <= 0 {
		return
	}
	g := *t.GPU
	g.UsableBytes = n
	g.UsableSource = "gpu_memory " + st.GPUMemory + " at " + st.Where("gpu_memory")
	t.GPU = &g
}

// parseMemory reads a size as the schema admits it: a number and one of
// KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000).
func parseMemory(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}} {
		if strings.HasSuffix(t, u.suffix) {
			var v float64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), &v); err != nil {
				return 0, err
			}
			return int64(v * u.mult), nil
		}
	}
	return 0, fmt.Errorf("%q is not a memory size", s)
}

// statedAttention maps targets.attention to the memory model's kernel.
var statedAttention = map[string]tuner.AttentionImpl{
	"eager": tuner.EagerAttention, "sdpa": tuner.FlashAttention, "flash": tuner.FlashAttention,
}

// applyStatedInputs fills the inputs beyond seq_len, micro_batch, method and
// model_dtype that the file leaves open with what the project file states.
func (t Target) applyStatedInputs(w *normalize.Workload, tw tuner.Workload) tuner.Workload {
	st := t.Stated
	unset := func(field string) bool {
		v, ok := w.Get(field)
		return !ok || v == nil || v == ""
	}
	if st.CUDAContextMiB > 0 {
		tw.CUDAContextBytes = int64(st.CUDAContextMiB) * tuner.MiB
	}
	if tw.Kind == tuner.Serve {
		if fw, _ := w.Get("framework"); fw != "vllm" {
			return tw // vLLM's engine arguments; TGI names its own
		}
		if st.MaxNumBatchedTokens > 0 && unset("serve.max_num_batched_tokens") {
			tw.MaxNumBatchedTokens = st.MaxNumBatchedTokens
		}
		if st.EnforceEager != nil && unset("serve.enforce_eager") {
			tw.EnforceEager = *st.EnforceEager
		}
		if st.VLLMVersion != "" && t.VLLMRelease == "" {
			// The file's own image or pip pin wins (applyRelease).
			tw.VLLMVersion = st.VLLMVersion
		}
		return tw
	}
	if a, ok := statedAttention[st.Attention]; ok {
		tw.Attention = a
	}
	if tw.Kind == tuner.Inference {
		return tw
	}
	if st.Loss != "" && unset("liger") && unset("cut_cross_entropy") {
		// A recipe's use_liger_kernel states its loss (recipe.FusedLoss).
		tw.Loss = tuner.LossImpl(st.Loss)
	}
	if c, ok := tuner.OptimizerByName(st.Optimizer); ok && unset("optimizer") {
		c.Set(&tw)
	}
	if st.OptimizerInBackward != nil && unset("optimizer_in_backward") {
		tw.OptimizerInBackward = *st.OptimizerInBackward
	}
	if tw.Kind == tuner.QLoRA && st.KbitFP32 != nil {
		tw.KbitFP32 = *st.KbitFP32
	}
	if st.ActivationOffloading != nil && unset("activation_offloading") {
		// The script moves saved activations to host memory
		// (tuner.Workload.ActivationOffloading); a recipe's own key wins.
		tw.ActivationOffloading = *st.ActivationOffloading
	}
	if tw.Kind == tuner.LoRA || tw.Kind == tuner.QLoRA {
		if st.LoRARank > 0 && unset("adapter.rank") {
			tw.LoRARank = st.LoRARank
		}
		if len(st.LoRATargets) > 0 && unset("adapter.targets") {
			tw.LoRATargets = append([]string(nil), st.LoRATargets...)
		}
	}
	// targets.fsdp is applied by recipe.WorkloadWithFSDP: only a recipe
	// leaves its sharding to the launcher; a DeepSpeed or Accelerate file
	// names its own.
	return tw
}

// statedFSDP reports whether the project's FSDP strategy sized w: a
// fine-tuning recipe that names no DeepSpeed config or sharding.
func (t Target) statedFSDP(w *normalize.Workload) bool {
	_, ds := w.Get("deepspeed_config_file")
	if t.Stated.FSDP == "" || !isFinetune(w) || ds || sharded(w) {
		return false
	}
	// A launch config that states its sharding (or plain data
	// parallelism) wins over the project file (recipe.WorkloadWithFSDP).
	if lw := t.launchedWork(); lw != nil {
		d, _ := lw.Get("distributed_type")
		_, lds := lw.Get("deepspeed_config_file")
		if sharded(lw) || lds || strings.EqualFold(fmt.Sprint(d), "MULTI_GPU") {
			return false
		}
	}
	return true
}

// statedInputs adds to a subject's evidence the inputs the project file
// states beyond seq_len, micro_batch, method and model_dtype, each with the
// project file's line; a file's own value, where it has one, is what the
// estimate used and the project's is left out.
func (t Target) statedInputs(w *normalize.Workload, out map[string]finding.Input) {
	st := t.Stated
	add := func(name string, v any, key string) {
		in := finding.Input{Name: name, Value: fmt.Sprint(v), Source: finding.SourceProject}
		if pos, ok := st.At[key]; ok {
			in.Range = &finding.Range{File: st.File, Start: pos, End: pos}
		}
		out[name] = in
	}
	unset := func(field string) bool {
		v, ok := w.Get(field)
		return !ok || v == nil || v == ""
	}
	role, _ := w.Get("role")
	serve := role == "serve"
	if st.CUDAContextMiB > 0 {
		add("cuda_context", fmt.Sprintf("%d MiB", st.CUDAContextMiB), "cuda_context")
	}
	if st.GPUMemory != "" && t.GPU != nil && t.GPUFrom == "project" && t.MIG == nil {
		add("gpu_memory", st.GPUMemory, "gpu_memory")
	}
	if serve {
		if fw, _ := w.Get("framework"); fw != "vllm" {
			return
		}
		if st.MaxNumBatchedTokens > 0 && unset("serve.max_num_batched_tokens") {
			add("max_num_batched_tokens", st.MaxNumBatchedTokens, "max_num_batched_tokens")
		}
		if st.EnforceEager != nil && unset("serve.enforce_eager") {
			add("enforce_eager", *st.EnforceEager, "enforce_eager")
		}
		if st.VLLMVersion != "" && t.VLLMRelease == "" {
			add("vllm_version", st.VLLMVersion, "vllm_version")
		}
		return
	}
	if st.Attention != "" {
		add("attention", st.Attention, "attention")
	}
	if role != "train" {
		return
	}
	if st.Loss != "" && unset("liger") && unset("cut_cross_entropy") {
		add("loss", st.Loss, "loss")
	}
	if st.OptimizerInBackward != nil && unset("optimizer_in_backward") {
		add("optimizer_in_backward", *st.OptimizerInBackward, "optimizer_in_backward")
	}
	if st.LoRARank > 0 && unset("adapter.rank") {
		add("lora_rank", st.LoRARank, "lora_rank")
	}
	if len(st.LoRATargets) > 0 && unset("adapter.targets") {
		add("lora_targets", strings.Join(st.LoRATargets, ","), "lora_targets")
	}
	if t.statedFSDP(w) {
		add("fsdp", st.FSDP, "fsdp")
	}
	if st.ActivationOffloading != nil && unset("activation_offloading") {
		add("activation_offloading", *st.ActivationOffloading, "activation_offloading")
	}
	if m, ok := methodInFile(w); st.KbitFP32 != nil && (m == "qlora" || !ok && st.Method == "qlora") {
		add("kbit_fp32", *st.KbitFP32, "kbit_fp32")
	}
}
