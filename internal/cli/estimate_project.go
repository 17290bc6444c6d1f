package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/lint"
	"github.com/gpulint/gpulint/tuner"
)

// applyProject fills the inputs no flag sets from the --config project
// file's target (the one whose paths match --target-path, else the first):
// a flag wins over the project file, which wins over gpulint's defaults,
// as for lint. Each input it fills is recorded with the file's line, so
// the output names it; then the options are validated again.
func (o *EstimateOptions) applyProject(deps *lint.Deps, cat *tuner.Catalog) error {
	p, err := config.Load(o.Config, deps.Validator)
	if err != nil {
		return err
	}
	var t *config.TargetRule
	switch {
	case o.TargetPath != "":
		if t = p.Target(o.TargetPath); t == nil {
			return &usageError{fmt.Errorf("no target in %s matches %s", o.Config, o.TargetPath)}
		}
	case len(p.Targets) > 0:
		t = &p.Targets[0]
	default:
		return &usageError{fmt.Errorf("%s has no targets", o.Config)}
	}
	given := o.given
	if given == nil {
		given = func(string) bool { return false }
	}
	o.fromProject = map[string]string{}
	set := func(flag, key string, ok bool, apply func()) {
		if !ok || given(flag) {
			return
		}
		apply()
		o.fromProject[flag] = "project file " + t.Where(key)
	}
	set("gpu", "gpu", t.GPU != "", func() { o.GPU = t.GPU })
	set("gpu-memory", "gpu_memory", t.GPUMemory != "" && !given("gpu"), func() { o.GPUMemory = t.GPUMemory })
	set("gpus", "gpus", t.GPUs > 0, func() { o.GPUs = t.GPUs })
	named := given("model") || given("params")
	set("model", "model", t.Model != "" && !named, func() {
		o.Model = t.Model
		if _, ok := cat.Model(t.Model); !ok && !filepath.IsAbs(t.Model) && !strings.Contains(t.Model, "://") {
			o.Model = filepath.Join(p.Root, t.Model) // a local model directory is relative to the project file
		}
	})
	set("params", "params", t.Params != "" && !named && t.Model == "", func() { o.Params = t.Params })
	workload := map[string]string{"full": "train", "lora": "lora", "qlora": "qlora"}[t.Method]
	set("workload", "method", workload != "", func() { o.Workload = workload })
	set("seq-len", "seq_len", t.SeqLen > 0, func() { o.SeqLen = t.SeqLen })
	set("target-len", "target_len", t.TargetLen > 0, func() { o.TargetLen = t.TargetLen })
	set("micro-batch", "micro_batch", t.MicroBatch > 0, func() { o.MicroBatch = t.MicroBatch })
	set("attention", "attention", t.Attention != "", func() { o.Attention = t.Attention })
	set("cuda-context", "cuda_context", t.CUDAContextMiB > 0, func() { o.CUDAContextMiB = t.CUDAContextMiB })
	set("optimizer", "optimizer", t.Optimizer != "", func() { o.Optimizer = t.Optimizer })
	set("optimizer-in-backward", "optimizer_in_backward", t.OptimizerInBackward != nil, func() { o.OptimizerInBackward = *t.OptimizerInBackward })
	set("loss", "loss", t.Loss != "", func() { o.Loss = t.Loss })
	set("lora-rank", "lora_rank", t.LoRARank > 0, func() { o.LoRARank = t.LoRARank })
	set("lora-targets", "lora_targets", len(t.LoRATargets) > 0, func() { o.LoRATargets = strings.Join(t.LoRATargets, ",") })
	set("fsdp", "fsdp", t.FSDP != "" && !given("zero"), func() { o.FSDP = t.FSDP })
	set("max-num-batched-tokens", "max_num_batched_tokens", t.MaxNumBatchedTokens > 0, func() { o.MaxNumBatchedTokens = t.MaxNumBatchedTokens })
	set("enforce-eager", "enforce_eager", t.EnforceEager != nil, func() { o.EnforceEager = *t.EnforceEager })
	set("vllm-version", "vllm_version", t.VLLMVersion != "", func() { o.VLLMVersion = t.VLLMVersion })
	set("kbit-fp32", "kbit_fp32", t.KbitFP32 != nil, func() { o.KbitFP32 = *t.KbitFP32 })
	set("activation-offloading", "activation_offloading", t.ActivationOffloading != nil && o.Workload != "serve" && o.Workload != "inference", func() { o.ActivationOffloading = *t.ActivationOffloading })
	if err := o.validate(); err != nil {
		var u *usageError
		if errors.As(err, &u) {
			return &usageError{fmt.Errorf("%w (with the inputs of %s)", u.err, o.Config)}
		}
		return err
	}
	return nil
}
