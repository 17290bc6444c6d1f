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
		// fp32 weights and gradients (precision.md §2.2). Its FSDP plugin
		// does the same sharded: set_mixed_precision builds
		// MixedPrecision(param_dtype=dtype, reduce_dtype=dtype,
		// buffer_dtype=dtype), so the sharded parameters, their gradients
		// and the optimizer states stay fp32 and only the gathered copies
		// are 16-bit (huggingface/accelerate src/accelerate/utils/dataclasses.py,
		// FullyShardedDataParallelPlugin.set_mixed_precision, 16cb6eb); the
		// model's load dtype lives in the training script.
		if str("framework") == "accelerate" && tw.Precision != tuner.FP32 {
			switch strings.ToUpper(str("distributed_type")) {
			case "NO", "MULTI_GPU", "", "FSDP":
				tw.Precision = tuner.AMP
			}
		}
		tw.ZeroStage = num("zero.stage")
		tw.OffloadOptimizer = tuner.Device(cmp.Or(str("zero.offload_optimizer"), "none"))
		tw.OffloadParam = tuner.Device(cmp.Or(str("zero.offload_param"), "none"))
		for _, f := range []struct {
			field string
			to    **int64
		}{{"zero.max_live_parameters", &tw.ZeRO3MaxLiveParams}, {"zero.prefetch_bucket_size", &tw.ZeRO3PrefetchBucket}, {"zero.max_reuse_distance", &tw.ZeRO3MaxReuseDistance}} {
			if n, ok := get(f.field).(int64); ok {
				*f.to = &n
			}
		}
		w.ApplyFSDP(&tw)
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
		switch q := str("serve.quantization"); {
		case str("framework") == "tgi":
			// A TGI launcher's --quantize arrives already named as the
			// memory model's weight format (cmdline.TGI.ServeConfig):
			// bitsandbytes is int8, bitsandbytes-nf4 and -fp4 are nf4-dq,
			// eetq is int8; none of these is a vLLM option value.
			tw.WeightQuant = q
		case q == "awq" || q == "awq_marlin":
			tw.WeightQuant = "awq"
		case q == "gptq" || q == "gptq_marlin":
			tw.WeightQuant = "gptq"
		case q == "fp8":
			tw.WeightQuant = "fp8"
		case q == "bitsandbytes":
			tw.WeightQuant = "nf4"
		}
		if b, ok := get("serve.enforce_eager").(bool); ok {
			tw.EnforceEager = b
		}
		if b, ok := get("serve.disable_hybrid_kv_cache_manager").(bool); ok {
			tw.DisableHybridKVCache = b
		}
	default:
		return tw, false
	}
	return tw, true
}

// ApplyFSDP sets tw's sharding from the workload's fsdp block, if it has
// one, and reports whether it did. FSDP's strategies partition like ZeRO
// stages (torch.distributed.fsdp.ShardingStrategy docstrings: FULL_SHARD
// shards parameters, gradients and optimizer states; SHARD_GRAD_OP
// gradients and optimizer states; NO_SHARD nothing, like DDP;
// HYBRID_SHARD and _HYBRID_SHARD_ZERO2 the same within a node), so the
// memory model keeps its ZeroStage with Sharding saying the framework is
// FSDP; CPU offload (CPUOffload(offload_params=True)) moves parameters
// and gradients to the CPU and runs the optimizer step there.
func (w *Workload) ApplyFSDP(tw *tuner.Workload) bool {
	sh, _ := w.Get("fsdp.sharding")
	s, _ := sh.(string)
	if s == "" {
		return false
	}
	v, _ := w.Get("fsdp.version")
	FSDPStrategy(tw, s, v == int64(2))
	tw.OffloadOptimizer, tw.OffloadParam = tuner.NoOffload, tuner.NoOffload
	if b, _ := w.Get("fsdp.cpu_offload"); b == true {
		tw.OffloadOptimizer, tw.OffloadParam = tuner.CPU, tuner.CPU
	}
	return true
}

// FSDPStrategy sets tw's sharding for an FSDP ShardingStrategy name
// (full_shard, shard_grad_op, no_shard, hybrid_shard, hybrid_shard_zero2;
// case and a leading underscore ignored; anything else is full sharding),
// as ApplyFSDP reads it from a config: a project file's targets.fsdp and
// `gpulint estimate --fsdp` name the same strategies.
func FSDPStrategy(tw *tuner.Workload, strategy string, fsdp2 bool) {
	tw.Sharding = tuner.FSDP1
	if fsdp2 {
		tw.Sharding = tuner.FSDP2
	}
	tw.HybridShard = false
	switch strings.TrimPrefix(strings.ToLower(strategy), "_") {
	case "no_shard":
		tw.ZeroStage = 0
	case "shard_grad_op":
		tw.ZeroStage = 2
	case "hybrid_shard_zero2":
		tw.ZeroStage, tw.HybridShard = 2, true
	case "hybrid_shard":
		tw.ZeroStage, tw.HybridShard = 3, true
	default:
		tw.ZeroStage = 3
	}
}
