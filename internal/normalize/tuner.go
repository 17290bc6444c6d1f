package normalize

import (
	"cmp"
	"strings"

	"github.com/gpulint/gpulint/tuner"
)

// Tuner maps a DeepSpeed, Accelerate or vLLM workload run on gpus GPUs (0
// when unknown) to the memory model's workload. ok is false when the
// model does not say enough to estimate, and for fine-tuning recipes,
// whose mapping is internal/recipe's Workload.
func (w *Workload) Tuner(gpus int) (tuner.Workload, bool) {
	get := func(f string) any { v, _ := w.Get(f); return v }
	num := func(f string) int {
		n, _ := get(f).(int64)
		return int(n)
	}
	str := func(f string) string { s, _ := get(f).(string); return s }
	if str("kind") == "finetune" {
		return tuner.Workload{}, false
	}
	var tw tuner.Workload
	switch str("role") {
	case "train":
		if str("device") != "" && str("device") != "gpu" {
			return tw, false
		}
		tw.Kind = tuner.Train
		switch str("precision") {
		case "fp32":
			tw.Precision = tuner.FP32
		case "fp16":
			tw.Precision = tuner.FP16
		case "fp8":
			tw.Precision = tuner.FP8
		default:
			tw.Precision = tuner.BF16
		}
		// Accelerate without DeepSpeed or FSDP runs PyTorch AMP, which keeps
		// fp32 weights and gradients (precision.md §2.2).
		if str("framework") == "accelerate" && tw.Precision != tuner.FP32 {
			switch strings.ToUpper(str("distributed_type")) {
			case "NO", "MULTI_GPU", "":
				tw.Precision = tuner.AMP
			}
		}
		tw.ZeroStage = num("zero.stage")
		tw.OffloadOptimizer = tuner.Device(cmp.Or(str("zero.offload_optimizer"), "none"))
		tw.OffloadParam = tuner.Device(cmp.Or(str("zero.offload_param"), "none"))
		tw.DataParallel = max(gpus, 1)
		tw.MicroBatch = max(num("batch.micro"), 1)
		if b, ok := get("checkpointing").(bool); ok {
			tw.Checkpointing = b
		}
	case "serve":
		tw.Kind = tuner.Serve
		tw.TensorParallel = max(num("parallel.tp"), 1)
		tw.PipelineParallel = max(num("parallel.pp"), 1)
		switch str("precision") {
		case "fp16":
			tw.Precision = tuner.FP16
		case "bf16":
			tw.Precision = tuner.BF16
		case "fp32":
			tw.Precision = tuner.FP32
		}
		if f, ok := get("serve.gpu_memory_utilization").(float64); ok && f > 0 && f <= 1 {
			tw.GPUMemoryUtilization = f
		}
		tw.MaxModelLen = max(num("serve.max_model_len"), 0)
		tw.MaxNumSeqs = max(num("serve.max_num_seqs"), 0)
		tw.MaxNumBatchedTokens = max(num("serve.max_num_batched_tokens"), 0)
		if bs := num("serve.block_size"); bs > 0 {
			tw.BlockSize = bs
		}
		if kv := str("serve.kv_cache_dtype"); kv != "" {
			tw.KVCacheDtype = kv
		}
		switch q := str("serve.quantization"); q {
		case "awq", "awq_marlin":
			tw.WeightQuant = "awq"
		case "gptq", "gptq_marlin":
			tw.WeightQuant = "gptq"
		case "fp8":
			tw.WeightQuant = "fp8"
		case "bitsandbytes":
			tw.WeightQuant = "nf4"
		}
		if b, ok := get("serve.enforce_eager").(bool); ok {
			tw.EnforceEager = b
		}
	default:
		return tw, false
	}
	return tw, true
}
