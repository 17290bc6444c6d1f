package tuner

import (
	"errors"
	"fmt"
	"strings"
)

// WorkloadKind says what runs on the GPUs.
type WorkloadKind string

// Workload kinds.
const (
	Train     WorkloadKind = "train"     // full fine-tuning or pre-training
	LoRA      WorkloadKind = "lora"      // frozen 16-bit base + trainable adapters
	QLoRA     WorkloadKind = "qlora"     // frozen 4-bit base + trainable adapters
	Inference WorkloadKind = "inference" // plain forward passes with a KV cache (HF generate)
	Serve     WorkloadKind = "serve"     // vLLM serving
	// PPO is an RLHF run: a trained policy and value model beside a
	// frozen reference policy and reward model (PPOShape).
	PPO WorkloadKind = "ppo"
)

// Precision is the training (or inference) number format.
type Precision string

// Precisions. FP16, BF16 and FP8 mean mixed precision with fp32 master weights
// as DeepSpeed and Megatron keep them (memory-model.md §1, §2); AMP is PyTorch
// autocast without DeepSpeed, which keeps fp32 weights and gradients
// (memory-model.md §3.2, precision.md §2.2); PureBF16 keeps weights, gradients
// and optimizer states in bf16 with no master copy (torchtune, LitGPT
// bf16-true; memory-model.md §6.3).
const (
	FP32     Precision = "fp32"
	FP16     Precision = "fp16"
	BF16     Precision = "bf16"
	FP8      Precision = "fp8"
	AMP      Precision = "amp"
	PureBF16 Precision = "pure-bf16"
)

// Optimizer is the training optimizer.
type Optimizer string

// Optimizers.
const (
	AdamW     Optimizer = "adamw"
	Adam8bit  Optimizer = "adam8bit"
	SGD       Optimizer = "sgd" // with momentum
	Adafactor Optimizer = "adafactor"
	// AdamWForeach and AdamWFused name torch.optim.AdamW's implementations.
	// Plain AdamW means the framework's default: torch's foreach kernel under
	// AMP, pure bf16 and fp32 (torch.optim.optimizer._default_to_fused_or_foreach
	// picks foreach on CUDA), DeepSpeed's FusedAdam under the fp16/bf16/fp8
	// master-weight recipes.
	AdamWForeach Optimizer = "adamw-foreach"
	AdamWFused   Optimizer = "adamw-fused"
	// AdamWForLoop updates one parameter at a time: torch's foreach=False,
	// or transformers' own AdamW (Trainer's "adamw_hf", its default before
	// v4.29); its temporaries are one parameter's size and are left out.
	AdamWForLoop Optimizer = "adamw-forloop"
	// OneState8bit keeps one 8-bit state per parameter: bitsandbytes'
	// Optimizer1State classes at optim_bits 8 (Lion8bit, SGD8bit,
	// RMSprop8bit, Adagrad8bit, LARS8bit; bitsandbytes/optim/lion.py,
	// sgd.py, rmsprop.py, adagrad.py, lars.py), 1 B/param as Adam8bit's
	// two states are 2 (memory-model.md §3.2).
	OneState8bit Optimizer = "onestate8bit"
)

// LossImpl is how the language-model loss is computed, which decides how
// many bytes per logit (token × vocabulary entry) live at the loss's peak.
type LossImpl string

// Loss implementations (see lossBytesPerLogit).
const (
	// HFDefaultLoss is transformers' ForCausalLMLoss (loss/loss_utils.py,
	// transformers ≥ 4.46): logits upcast to fp32, then cross_entropy.
	HFDefaultLoss LossImpl = "hf-default"
	// ChunkedLoss keeps the 16-bit logits and upcasts one chunk at a time
	// (torchtune CEWithChunkedOutputLoss, LitGPT chunked_cross_entropy).
	ChunkedLoss LossImpl = "chunked"
	// FusedLoss never materialises the logits (Liger
	// LigerFusedLinearCrossEntropyLoss, Apple cut-cross-entropy).
	FusedLoss LossImpl = "fused"
)

// PrefillLogits says for which prompt positions an inference forward
// computes logits.
type PrefillLogits string

// Prefill logits choices.
const (
	// LastLogits is generate(): "if self._supports_logits_to_keep() and
	// "logits_to_keep" not in model_kwargs: model_kwargs["logits_to_keep"] = 1"
	// (transformers src/transformers/generation/utils.py, GenerationMixin.generate).
	LastLogits PrefillLogits = "last"
	// AllLogits is a plain forward that returns logits for every position.
	AllLogits PrefillLogits = "all"
)

// Device is an offload destination.
type Device string

// Offload devices.
const (
	NoOffload Device = "none"
	CPU       Device = "cpu"
	NVMe      Device = "nvme"
)

// Sharding is the framework that partitions model states over data-parallel ranks.
type Sharding string

// Sharding frameworks.
const (
	ZeRO  Sharding = "zero"  // DeepSpeed ZeRO stages (default)
	FSDP1 Sharding = "fsdp"  // torch.distributed.fsdp.FullyShardedDataParallel (ShardingStrategy)
	FSDP2 Sharding = "fsdp2" // torch.distributed.fsdp.fully_shard (reshard_after_forward bool; no NO_SHARD)
)

// IsFSDP reports whether s is either FSDP version.
func (s Sharding) IsFSDP() bool { return s == FSDP1 || s == FSDP2 }

// AttentionImpl selects the attention kernel, which decides whether the s×s
// score matrices are stored for backward.
type AttentionImpl string

// Attention implementations.
const (
	FlashAttention AttentionImpl = "flash" // FlashAttention / SDPA: no s² terms (memory-model.md §3.1)
	EagerAttention AttentionImpl = "eager" // materialized softmax (Korthikanti et al. 5as²b term)
)

// Workload describes a training or serving job per GPU. Zero values take the
// defaults listed on each field.
type Workload struct {
	Kind WorkloadKind

	// Precision: default BF16 for training, the checkpoint dtype for
	// inference and serving.
	Precision Precision
	// Optimizer: default AdamW.
	Optimizer Optimizer
	// PagedOptimizer keeps optimizer states in unified memory that is paged out
	// under pressure (bitsandbytes paged optimizers); they are still counted
	// in the GPU peak, since they stay resident until paged out, with a note.
	PagedOptimizer bool
	// FP32OptimizerStates says the optimizer keeps fp32 states whatever
	// the parameters' dtype, which matters under PureBF16 (where torch's
	// optimizers keep states in the parameters' bf16): bitsandbytes'
	// 32-bit optimizers (AdamW, PagedAdamW, their 32bit names) allocate
	// state1 and state2 as torch.float32 when optim_bits is 32
	// (Optimizer2State.init_state, bitsandbytes/optim/optimizer.py @
	// 06029dd6).
	FP32OptimizerStates bool
	// OptimizerInBackward fuses the optimizer step into backward, so only one
	// layer's gradients exist at a time (torchtune optimizer_in_bwd, §6.3).
	OptimizerInBackward bool

	// ZeroStage is the DeepSpeed ZeRO stage 0-3 (FSDP SHARD_GRAD_OP ≈ 2, FULL_SHARD ≈ 3),
	// partitioning over DataParallel ranks.
	ZeroStage        int
	OffloadOptimizer Device // default none
	OffloadParam     Device // default none; needs ZeRO-3
	// ZeRO3MaxLiveParams, ZeRO3PrefetchBucket and ZeRO3MaxReuseDistance
	// are a DeepSpeed config's stage3_max_live_parameters,
	// stage3_prefetch_bucket_size and stage3_max_reuse_distance in
	// elements; nil is DeepSpeed's default (1e9, 5e7, 1e9). They decide how
	// many parameters a ZeRO-3 rank keeps gathered (zeroParamCache).
	ZeRO3MaxLiveParams, ZeRO3PrefetchBucket, ZeRO3MaxReuseDistance *int64

	// Sharding names the framework that partitions the model states:
	// DeepSpeed ZeRO (the default) or PyTorch FSDP, whose strategies map
	// onto ZeroStage (ShardingStrategy NO_SHARD 0, SHARD_GRAD_OP 2,
	// FULL_SHARD 3; FSDP2's reshard_after_forward false 2, true 3). Under
	// FSDP, OffloadParam CPU at stage 3 is CPUOffload(offload_params=True),
	// which keeps parameters and gradients in host memory and runs the
	// optimizer step there: set OffloadOptimizer CPU with it. The planner
	// proposes only what the framework supports (fsdpCandidates).
	Sharding Sharding
	// HybridShard partitions within a node and replicates across nodes
	// (FSDP HYBRID_SHARD, _HYBRID_SHARD_ZERO2): the partitioning degree is
	// min(DataParallel, GPUsPerNode).
	HybridShard bool

	// Parallel degrees; default 1. GPUsPerNode defaults to min(world size, 8).
	DataParallel, TensorParallel, PipelineParallel int
	GPUsPerNode                                    int

	// MicroBatch (default 1) and SeqLen (default min(2048, max positions)) per GPU.
	MicroBatch, SeqLen int
	// TargetLen is an encoder-decoder's decoder (label) length; SeqLen is
	// then the encoder's input length. Default: SeqLen. Ignored for
	// decoder-only and encoder-only models.
	TargetLen int
	// Checkpointing is full activation checkpointing (one input per layer kept).
	Checkpointing bool
	// ActivationOffloading moves the tensors the model's forward saves for
	// backward to pinned host memory and brings them back in backward
	// (torchtune's enable_activation_offloading, OffloadActivations in
	// pytorch/torchtune torchtune/training/_activation_offloading.py @
	// bd2a0fc; TRL's copy in trl/models/activation_offloading.py, which
	// axolotl's activation_offloading: true uses; axolotl's "legacy" moves
	// the checkpointed layer inputs only). The loss and the output
	// projection stay on the GPU, and a few tensors stay in flight
	// (offloadActivations). Training only.
	ActivationOffloading bool
	// Attention: default FlashAttention.
	Attention AttentionImpl
	// Loss: default HFDefaultLoss for decoder training (transformers'
	// unchunked loss, the largest of the three).
	Loss LossImpl
	// PrefillLogits for inference: default LastLogits (generate()).
	PrefillLogits PrefillLogits

	// KbitFP32 (QLoRA) says the unquantized parameters (embeddings, lm_head,
	// norms) are kept in fp32, as PEFT's prepare_model_for_kbit_training
	// leaves them: "cast all non INT8 parameters to fp32", every fp16/bf16
	// parameter's data becomes float32 (huggingface/peft
	// src/peft/utils/other.py, commit 012c0d5). The fp32 embedding output
	// then makes the residual stream fp32: transformers' RMSNorm returns
	// "self.weight * hidden_states.to(input_dtype)" with an fp32 weight, and
	// the 16-bit attention and MLP outputs are added onto the fp32 residual.
	// Default false: the base's unquantized parameters stay 16-bit, as
	// recipes that cast them back do: TRL's peft_module_casting_to_bf16
	// (trl/trainer/utils.py, lm_head and embed_tokens "if
	// module.weight.dtype == torch.float32: module.to(torch.bfloat16)") and
	// artidoro/qlora's get_accelerate_model (qlora.py @ 00e5ad2, the same
	// cast under --bf16).
	KbitFP32 bool

	// LoRARank (default 16) and LoRATargets (default q, k, v, o, gate, up, down;
	// also accepts q_proj-style names, w1/w2/w3, "all-linear", and names
	// under self_attn. or shared_expert., see loraPathTarget).
	LoRARank    int
	LoRATargets []string

	// WeightQuant overrides the stored weight format for inference, serving
	// and QLoRA: fp32, fp16, bf16, fp8, int8, awq, gptq, nf4, nf4-dq, mxfp4,
	// nvfp4. Empty: the checkpoint's quantization_config, else its dtype.
	WeightQuant string

	// Serving (vLLM). Zero values take vLLM's defaults (vllm.md §2-3):
	// GPUMemoryUtilization 0.9 (the default of every release through 2025;
	// the newest main uses 0.92 — pass it explicitly there), BlockSize 16, MaxModelLen = max positions,
	// MaxNumSeqs/MaxNumBatchedTokens 1024/8192 on GPUs with ≥ 70 GiB that are
	// not A100s, else 256/2048 (OpenAI server context).
	GPUMemoryUtilization float64
	MaxModelLen          int
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	BlockSize            int
	KVCacheDtype         string // auto (default), fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16
	EnforceEager         bool   // no CUDA graphs
	// DisableHybridKVCache is vLLM's --disable-hybrid-kv-cache-manager:
	// sliding-window and chunked-local layers get full-length KV blocks
	// like the others (kv_cache_utils.py unify_hybrid_kv_cache_specs).
	// Releases from v0.10.1 until vllm-project/vllm#29627 also turn the
	// manager off by default for chunked local attention (Llama 4) unless
	// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1.
	DisableHybridKVCache bool
	// VLLMVersion is the vLLM release that serves ("0.10.1", "v0.11.0",
	// "0.21"); empty means the current engine. Where the accounting
	// changed between releases the estimate follows the stated one
	// (vllm_release.go): the dummy sampler run's vocabulary sort in
	// v0.8-v0.11 (v0.11.0 and older only without FlashInfer's sampler),
	// CUDA graphs inside gpu_memory_utilization from v0.21, the capture
	// sizes before v0.11, and Llama 4's hybrid KV layout off in
	// v0.10.1-v0.12.0.
	VLLMVersion string
	// VLLMFlashInferSampler says the install samples with FlashInfer's
	// top-k/top-p kernel, which v0.8.0-v0.11.0 use by default where
	// flashinfer is importable (the vllm/vllm-openai images ship it); a
	// pip install without flashinfer sorts the vocabulary instead, which
	// those releases then do in their profiled sampler run.
	VLLMFlashInferSampler bool

	// PPO shapes a PPO workload (Kind PPO): the value and reward models
	// and the generation step. MicroBatch is the PPO backward batch and
	// SeqLen the query+response length.
	PPO PPOShape

	// CUDAContextBytes overrides the per-process CUDA context and kernel
	// footprint (default 512 MiB, see overhead constants). Set it only when
	// the setup's own measurement is known.
	CUDAContextBytes int64
}

// resolved is a Workload with defaults applied.
type resolved struct {
	Workload
	world      int
	modelShard int // TP × PP
	// shardDegree is the number of ranks ZeRO or FSDP partition over:
	// DataParallel, or the ranks of a node under HybridShard.
	shardDegree int
	targets     []string
	release     vllmRelease
}

var kindSet = map[WorkloadKind]bool{Train: true, LoRA: true, QLoRA: true, Inference: true, Serve: true, PPO: true}

var precisionSet = map[Precision]bool{FP32: true, FP16: true, BF16: true, FP8: true, AMP: true, PureBF16: true}

var optimizerSet = map[Optimizer]bool{AdamW: true, Adam8bit: true, SGD: true, Adafactor: true, AdamWForeach: true, AdamWFused: true, AdamWForLoop: true, OneState8bit: true}

var lossSet = map[LossImpl]bool{HFDefaultLoss: true, ChunkedLoss: true, FusedLoss: true}

// loraModuleAliases maps target-module spellings to canonical names.
var loraModuleAliases = map[string]string{
	"q": "q", "q_proj": "q", "query": "q", "wq": "q",
	"k": "k", "k_proj": "k", "key": "k", "wk": "k",
	"v": "v", "v_proj": "v", "value": "v", "wv": "v",
	"o": "o", "o_proj": "o", "out_proj": "o", "output_proj": "o", "wo": "o", "dense": "o",
	"gate": "gate", "gate_proj": "gate", "w1": "gate",
	"up": "up", "up_proj": "up", "w3": "up",
	"down": "down", "down_proj": "down", "w2": "down",
}

var allLoRATargets = []string{"q", "k", "v", "o", "gate", "up", "down"}

// sharedLoRATargets are the MLP projections of a MoE layer's shared
// experts alone: what a path-qualified target such as
// "shared_expert.gate_proj" adapts (loraPathTarget).
var sharedLoRATargets = []string{"shared_gate", "shared_up", "shared_down"}

// loraScopes name the module a path-qualified PEFT target reaches
// through, by the last component before the projection: attention blocks
// (Llama self_attn, GPT-NeoX and Falcon attention, Falcon self_attention)
// hold q, k, v and o; a MoE layer's shared expert (Llama 4 and Qwen2-MoE
// shared_expert, DeepSeek shared_experts) holds gate, up and down.
var loraScopes = map[string]string{
	"self_attn": "attention", "attn": "attention", "attention": "attention", "self_attention": "attention",
	"shared_expert": "shared", "shared_experts": "shared",
}

// KnownLoRATarget reports whether Workload.LoRATargets accepts s: a
// module name (q_proj, w1, ...), all-linear, or a path-qualified name
// (self_attn.q_proj, shared_expert.gate_proj).
func KnownLoRATarget(s string) bool {
	_, err := canonicalTargets([]string{s})
	return err == nil
}

// loraPathTarget reads a path-qualified target module. PEFT matches a
// string target against a module's full name when the name equals it or
// ends with "." plus it (peft/tuners/tuners_utils.py
// check_target_module_exists), so "self_attn.q_proj" adapts every
// layer's query projection, and "shared_expert.gate_proj" the shared
// expert's gate and not a routed expert's (Llama 4's routed experts are
// gate_up_proj tensors, or gate_projs.N in axolotl's linearized experts,
// src/axolotl/monkeypatch/models/llama4/modeling.py @ 102fdac). A path
// with a layer index, a regular expression or a scope not in loraScopes
// is not read (ok false).
func loraPathTarget(k string) (string, bool) {
	parts := strings.Split(k, ".")
	c, ok := loraModuleAliases[parts[len(parts)-1]]
	if !ok {
		return "", false
	}
	for _, p := range parts[:len(parts)-1] {
		if p == "" || strings.ContainsAny(p, "0123456789[]*+?()|^$\\") {
			return "", false
		}
	}
	switch loraScopes[parts[len(parts)-2]] {
	case "attention":
		if c == "q" || c == "k" || c == "v" || c == "o" {
			return c, true
		}
	case "shared":
		if c == "gate" || c == "up" || c == "down" {
			return "shared_" + c, true
		}
	}
	return "", false
}

func (w Workload) resolve(m *Model) (resolved, error) {
	r := resolved{Workload: w}
	var errs []error
	if !kindSet[w.Kind] {
		return r, fmt.Errorf("unknown workload kind %q", w.Kind)
	}
	if r.Precision == "" {
		switch {
		case isTraining(w.Kind):
			r.Precision = BF16
		case m.Dtype == "float32" && w.Kind == Inference:
			r.Precision = FP32
		case m.Dtype == "float16":
			r.Precision = FP16
		default:
			r.Precision = BF16
		}
	}
	if !precisionSet[r.Precision] {
		errs = append(errs, fmt.Errorf("unknown precision %q", r.Precision))
	}
	if r.Optimizer == "" {
		r.Optimizer = AdamW
	}
	if !optimizerSet[r.Optimizer] {
		errs = append(errs, fmt.Errorf("unknown optimizer %q", r.Optimizer))
	}
	for _, p := range []*Device{&r.OffloadOptimizer, &r.OffloadParam} {
		if *p == "" {
			*p = NoOffload
		}
		if *p != NoOffload && *p != CPU && *p != NVMe {
			errs = append(errs, fmt.Errorf("unknown offload device %q", *p))
		}
	}
	if r.Attention == "" {
		r.Attention = FlashAttention
	}
	if r.Loss == "" {
		r.Loss = HFDefaultLoss
	}
	if !lossSet[r.Loss] {
		errs = append(errs, fmt.Errorf("unknown loss implementation %q (want hf-default, chunked or fused)", r.Loss))
	}
	if r.PrefillLogits == "" {
		r.PrefillLogits = LastLogits
	}
	if r.PrefillLogits != LastLogits && r.PrefillLogits != AllLogits {
		errs = append(errs, fmt.Errorf("unknown prefill logits %q (want last or all)", r.PrefillLogits))
	}
	if r.Attention != FlashAttention && r.Attention != EagerAttention {
		errs = append(errs, fmt.Errorf("unknown attention implementation %q", r.Attention))
	}
	for _, p := range []*int{&r.DataParallel, &r.TensorParallel, &r.PipelineParallel, &r.MicroBatch} {
		if *p == 0 {
			*p = 1
		}
	}
	if r.DataParallel < 1 || r.TensorParallel < 1 || r.PipelineParallel < 1 || r.MicroBatch < 1 {
		errs = append(errs, errors.New("parallel degrees and micro batch must be at least 1"))
	}
	r.world = r.DataParallel * r.TensorParallel * r.PipelineParallel
	r.modelShard = r.TensorParallel * r.PipelineParallel
	if r.GPUsPerNode == 0 {
		r.GPUsPerNode = min(r.world, 8)
	}
	if r.GPUsPerNode < 1 {
		errs = append(errs, errors.New("gpus per node must be at least 1"))
	}
	if r.TensorParallel > 1 && m.Heads%r.TensorParallel != 0 {
		// vLLM and Megatron split attention heads evenly (vllm.md §2).
		errs = append(errs, fmt.Errorf("tensor parallel size %d does not divide %d attention heads",
			r.TensorParallel, m.Heads))
	}
	if r.PipelineParallel > m.Layers {
		errs = append(errs, fmt.Errorf("pipeline parallel size %d exceeds %d layers", r.PipelineParallel, m.Layers))
	}
	if r.SeqLen == 0 {
		r.SeqLen = min(2048, m.MaxPositions)
	}
	if r.SeqLen < 1 {
		errs = append(errs, errors.New("sequence length must be positive"))
	}
	if r.TargetLen == 0 {
		r.TargetLen = r.SeqLen
	}
	if r.TargetLen < 1 {
		errs = append(errs, errors.New("target length must be positive"))
	}
	if m.EncoderDecoder() && r.PipelineParallel > 1 {
		errs = append(errs, fmt.Errorf("%s is an encoder-decoder: pipeline parallelism over its two stacks is not modelled", m.ID))
	}
	if r.ZeroStage < 0 || r.ZeroStage > 3 {
		errs = append(errs, fmt.Errorf("zero stage %d is not 0-3", r.ZeroStage))
	}
	if r.Sharding == "" {
		r.Sharding = ZeRO
	}
	switch r.Sharding {
	case ZeRO, FSDP1, FSDP2:
	default:
		errs = append(errs, fmt.Errorf("unknown sharding framework %q (want zero, fsdp or fsdp2)", r.Sharding))
	}
	if r.Sharding.IsFSDP() && r.ZeroStage == 1 {
		errs = append(errs, errors.New("FSDP has no strategy that shards only optimizer states (ZeRO stage 1)"))
	}
	if r.Sharding.IsFSDP() {
		// FSDP's CPUOffload(offload_params=True) moves parameters and
		// gradients to the CPU and the optimizer step with them (its
		// docstring: "the optimizer step runs on CPU"); it has no
		// optimizer-only offload.
		if r.OffloadParam != NoOffload && r.OffloadOptimizer == NoOffload {
			r.OffloadOptimizer = r.OffloadParam
		}
		if r.OffloadOptimizer != NoOffload && r.OffloadParam == NoOffload {
			r.OffloadParam = r.OffloadOptimizer
		}
	}
	r.shardDegree = r.DataParallel
	if r.HybridShard {
		r.shardDegree = max(min(r.DataParallel, r.GPUsPerNode), 1)
	}
	if w.Kind == LoRA || w.Kind == QLoRA {
		if r.LoRARank == 0 {
			r.LoRARank = 16
		}
		if r.LoRARank < 0 {
			errs = append(errs, errors.New("lora rank must be positive"))
		}
		t, err := canonicalTargets(w.LoRATargets)
		if err != nil {
			errs = append(errs, err)
		}
		r.targets = t
	}
	if q := m.Quant; w.Kind == Train && q != nil && q.Method == "bitsandbytes" {
		// The checkpoint loads quantized (get_hf_quantizer), and the
		// Trainer refuses to train a quantized model without adapters
		// ("You cannot perform fine-tuning on purely quantized models":
		// huggingface/transformers Trainer, validate_quantization_for_training).
		errs = append(errs, fmt.Errorf("a checkpoint stored in bitsandbytes %d-bit cannot be fully fine-tuned: train adapters on it (lora or qlora)", q.Bits))
	}
	if w.KbitFP32 && w.Kind != QLoRA {
		errs = append(errs, errors.New("kbit fp32 upcast applies to qlora only"))
	}
	if w.ActivationOffloading && (w.Kind == Inference || w.Kind == Serve) {
		errs = append(errs, errors.New("activation offloading applies to training only"))
	}
	if w.Kind == Serve {
		if r.GPUMemoryUtilization == 0 {
			r.GPUMemoryUtilization = 0.9
		}
		if r.GPUMemoryUtilization <= 0 || r.GPUMemoryUtilization > 1 {
			errs = append(errs, fmt.Errorf("gpu memory utilization %.2f is outside (0, 1]", r.GPUMemoryUtilization))
		}
		if r.BlockSize == 0 {
			r.BlockSize = 16
		}
		if r.MaxModelLen == 0 {
			r.MaxModelLen = m.MaxPositions
		}
		if r.BlockSize < 1 || r.MaxModelLen < 1 || r.MaxNumSeqs < 0 || r.MaxNumBatchedTokens < 0 {
			errs = append(errs, errors.New("block size, max model len and batch limits must be positive"))
		}
		if m.Encoder {
			errs = append(errs, fmt.Errorf("%s is encoder-only; vLLM serving needs a decoder", m.ID))
		}
		if m.EncoderDecoder() {
			// vLLM v0.10 removed the V0 engine and with it encoder-decoder
			// serving (BART, mllama); T5 never had a vLLM implementation.
			errs = append(errs, fmt.Errorf("%s is an encoder-decoder; the serving model covers decoder-only models", m.ID))
		}
		rel, err := parseVLLMRelease(r.VLLMVersion)
		if err != nil {
			errs = append(errs, err)
		}
		r.release = rel
	} else if r.VLLMVersion != "" || r.VLLMFlashInferSampler {
		errs = append(errs, errors.New("a vllm version and sampler apply to serving only"))
	}
	if w.Kind == PPO {
		if r.PPO.GeneratedTokens < 1 || r.PPO.ForwardBatch < 0 || r.PPO.ValueClasses < 0 {
			errs = append(errs, errors.New("a PPO workload needs a positive generated-token count and non-negative forward batch and value classes"))
		}
		if r.SeqLen <= r.PPO.GeneratedTokens {
			errs = append(errs, fmt.Errorf("PPO sequence length %d must exceed the %d generated tokens (it is prompt plus response)", r.SeqLen, r.PPO.GeneratedTokens))
		}
	} else if r.PPO != (PPOShape{}) {
		errs = append(errs, errors.New("a PPO shape applies to PPO workloads only"))
	}
	if r.CUDAContextBytes < 0 {
		errs = append(errs, errors.New("cuda context bytes must not be negative"))
	}
	return r, errors.Join(errs...)
}

func canonicalTargets(in []string) ([]string, error) {
	if len(in) == 0 {
		return allLoRATargets, nil
	}
	set := map[string]bool{}
	for _, t := range in {
		k := strings.ToLower(strings.TrimSpace(t))
		if k == "all-linear" || k == "all" {
			for _, a := range allLoRATargets {
				set[a] = true
			}
			continue
		}
		c, ok := loraModuleAliases[k]
		if !ok && strings.Contains(k, ".") {
			c, ok = loraPathTarget(k)
		}
		if !ok {
			return nil, fmt.Errorf("unknown lora target module %q (known: q, k, v, o, gate, up, down, their _proj names, w1/w2/w3, all-linear, and these under self_attn. or shared_expert.)", t)
		}
		set[c] = true
	}
	var out []string
	for _, k := range append(allLoRATargets[:len(allLoRATargets):len(allLoRATargets)], sharedLoRATargets...) {
		if set[k] {
			out = append(out, k)
		}
	}
	return out, nil
}
