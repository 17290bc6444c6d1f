package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/gpulint/gpulint/tuner"
)

// modelSource says which model --model or --params resolved to and where
// it came from.
func (o *EstimateOptions) modelSource(m *tuner.Model, from string, cat *tuner.Catalog) tuner.ModelSource {
	src := tuner.ModelSource{ID: m.ID}
	switch c, ok := cat.Model(o.Model); {
	case o.Model == "":
		src.From = "--params " + o.Params
		if where, ok := o.fromProject["params"]; ok {
			src.From = "params " + o.Params + ", " + where
		}
		return src
	case from != "catalog" && from != "" && !isDir(o.Model):
		src.From = "Hugging Face cache, " + from
	case ok && c.ID == o.Model:
		src.From = "catalog"
	case ok:
		src.From = fmt.Sprintf("catalog, alias %s", o.Model)
	default:
		src.From = fmt.Sprintf("model directory %s, config.json", o.Model)
	}
	if where, ok := o.fromProject["model"]; ok {
		src.From += ", " + where
	}
	return src
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// estimateInputs lists every input the estimate of e rests on, for its
// workload, in flag order: a flag the user set is given; any other is
// assumed, with the value the estimate used and the default's basis.
// given reports whether a flag was set on the command line.
func (o *EstimateOptions) estimateInputs(e tuner.Estimate, m *tuner.Model, given func(string) bool) []tuner.EstimateInput {
	w := e.Workload
	var in []tuner.EstimateInput
	add := func(name string, flagValue, assumedValue any, basis string) {
		if given(name) {
			in = append(in, tuner.EstimateInput{Name: name, Value: flagValue})
			return
		}
		if from, ok := o.fromProject[name]; ok {
			in = append(in, tuner.EstimateInput{Name: name, Value: flagValue, From: from})
			return
		}
		in = append(in, tuner.EstimateInput{Name: name, Value: assumedValue, Assumed: true, Basis: basis})
	}
	// stated reports whether the command line or the project file set name.
	stated := func(name string) bool {
		_, ok := o.fromProject[name]
		return given(name) || ok
	}
	for _, name := range []string{"gpu", "gpu-memory"} {
		if _, ok := o.fromProject[name]; ok && !given(name) {
			add(name, map[string]string{"gpu": o.GPU, "gpu-memory": o.GPUMemory}[name], "", "")
		}
	}
	if given("mig") {
		add("mig", o.MIG, "", "")
	}
	if given("host-memory") {
		add("host-memory", o.HostMemory, "", "")
	}
	add("workload", o.Workload, string(w.Kind), "")
	add("gpus", o.GPUs, o.GPUs, "one GPU")
	add("tp", o.TP, w.TensorParallel, "no tensor parallelism")
	add("pp", o.PP, w.PipelineParallel, "no pipeline parallelism")
	precisionBasis := "bf16 for training"
	if w.Kind == tuner.Inference || w.Kind == tuner.Serve {
		precisionBasis = fmt.Sprintf("the checkpoint dtype (%s)", m.Dtype)
	}
	add("precision", o.Precision, string(w.Precision), precisionBasis)
	training := w.Kind == tuner.Train || w.Kind == tuner.LoRA || w.Kind == tuner.QLoRA
	if training || w.Kind == tuner.Inference {
		add("micro-batch", o.MicroBatch, w.MicroBatch, "")
		add("seq-len", o.SeqLen, w.SeqLen, fmt.Sprintf("min(2048, max positions %d)", m.MaxPositions))
		if m.EncoderDecoder() {
			add("target-len", o.TargetLen, w.TargetLen, "the encoder input length (--seq-len)")
		}
	}
	if training {
		add("zero", o.Zero, w.ZeroStage, "no ZeRO")
		add("sharding", o.Sharding, string(w.Sharding), "DeepSpeed ZeRO")
		add("offload-optimizer", o.OffloadOptimizer, string(w.OffloadOptimizer), "")
		add("offload-param", o.OffloadParam, string(w.OffloadParam), "")
		// ZeRO-3's gathering settings decide how many parameters a rank
		// keeps gathered; they matter only to DeepSpeed ZeRO-3.
		maxLive, prefetch, reuse := tuner.ZeRO3Defaults()
		for _, z := range []struct {
			flag, key string
			v         float64
			def       int64
		}{{"zero3-max-live", "stage3_max_live_parameters", o.Zero3MaxLive, maxLive},
			{"zero3-prefetch-bucket", "stage3_prefetch_bucket_size", o.Zero3PrefetchBucket, prefetch},
			{"zero3-reuse-distance", "stage3_max_reuse_distance", o.Zero3ReuseDistance, reuse}} {
			if given(z.flag) || (w.ZeroStage == 3 && w.Sharding == tuner.ZeRO) {
				add(z.flag, z.v, float64(z.def), "DeepSpeed's default "+z.key)
			}
		}
		add("checkpointing", o.Checkpointing, w.Checkpointing, "")
		if stated("activation-offloading") {
			add("activation-offloading", o.ActivationOffloading, w.ActivationOffloading, "")
		}
		add("optimizer", o.Optimizer, string(w.Optimizer), "the framework's default AdamW kernel")
		if c, _ := tuner.OptimizerByName(o.Optimizer); c.StandIn != "" {
			// Sized as another optimizer: the estimate rests on that stand-in.
			x := &in[len(in)-1]
			x.Assumed, x.Basis, x.From = true, c.StandInBasis(o.Optimizer), ""
		}
		if stated("fsdp") {
			add("fsdp", o.FSDP, "", "")
		}
		add("optimizer-in-backward", o.OptimizerInBackward, w.OptimizerInBackward, "")
		add("attention", o.Attention, "sdpa/flash", "")
		add("loss", o.Loss, string(w.Loss), "transformers' loss on fp32 logits")
	}
	if w.Kind == tuner.LoRA || w.Kind == tuner.QLoRA {
		add("lora-rank", o.LoRARank, w.LoRARank, "")
		add("lora-targets", o.LoRATargets, "all-linear", "")
	}
	if w.Kind == tuner.QLoRA {
		add("kbit-fp32", o.KbitFP32, w.KbitFP32, "embeddings, lm_head and norms in 16 bits")
	}
	if w.Kind == tuner.QLoRA || w.Kind == tuner.Inference || w.Kind == tuner.Serve {
		weights, basis := checkpointWeights(m), "the checkpoint's"
		if w.Kind == tuner.QLoRA {
			weights, basis = "nf4-dq", "QLoRA's NF4 with double quantization"
		}
		add("weights", o.Weights, weights, basis)
	}
	if w.Kind == tuner.Inference {
		add("prefill-logits", o.PrefillLogits, string(w.PrefillLogits), "the last position, as generate() asks")
	}
	if w.Kind == tuner.Inference || w.Kind == tuner.Serve {
		add("kv-cache-dtype", o.KVCache, "auto", "the compute dtype")
	}
	if s := e.Serve; s != nil {
		add("gpu-memory-utilization", o.GPUMemoryUtilization, s.GPUMemoryUtilization, "vLLM's default")
		add("max-model-len", o.MaxModelLen, s.MaxModelLen, "the model's max positions")
		add("max-num-seqs", o.MaxNumSeqs, s.MaxNumSeqs, "vLLM's default for this GPU")
		add("max-num-batched-tokens", o.MaxNumBatchedTokens, s.MaxNumBatchedTokens, "vLLM's default for this GPU")
		add("enforce-eager", o.EnforceEager, w.EnforceEager, "CUDA graphs captured")
		if given("disable-hybrid-kv-cache-manager") {
			add("disable-hybrid-kv-cache-manager", o.DisableHybridKVCache, false, "")
		}
		add("vllm-version", o.VLLMVersion, "current", "the current engine: CUDA graphs outside gpu_memory_utilization, no sort in the profiled sampler run")
		if given("flashinfer-sampler") {
			add("flashinfer-sampler", o.FlashInferSampler, false, "")
		}
	}
	if w.Kind == tuner.Train || w.Kind == tuner.LoRA || w.Kind == tuner.QLoRA {
		add("cuda-context", o.CUDAContextMiB, int(tuner.DefaultTrainCUDAContextMiB), "MiB, as training steps left it in bench/gpu (H200, torch 2.11)")
	} else {
		add("cuda-context", o.CUDAContextMiB, int(tuner.DefaultCUDAContextMiB), "MiB, as vLLM v0.19 measured on an H100")
	}
	return in
}

// checkpointWeights names the stored weight format of m: its quantization
// method, else its dtype.
func checkpointWeights(m *tuner.Model) string {
	if m.Quant != nil && m.Quant.Method != "" {
		return strings.ToLower(m.Quant.Method)
	}
	if m.Dtype == "" {
		return "bfloat16"
	}
	return m.Dtype
}
