package tuner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Plan settings, in the order Plan.Choices lists them. A plan holds the
// subset that applies to its workload kind: training and fine-tuning use
// precision through checkpointing; serving uses precision, tensor_parallel,
// gpu_memory_utilization, max_model_len, max_num_seqs and, when MIG slices
// were considered, mig_profile; plain inference uses precision, micro_batch
// and mig_profile.
const (
	SettingPrecision            = "precision"
	SettingZeroStage            = "zero_stage"
	SettingOffloadOptimizer     = "offload_optimizer"
	SettingOffloadParam         = "offload_param"
	SettingMicroBatch           = "micro_batch"
	SettingGradAccumulation     = "gradient_accumulation"
	SettingCheckpointing        = "checkpointing"
	SettingTensorParallel       = "tensor_parallel"
	SettingGPUMemoryUtilization = "gpu_memory_utilization"
	SettingMaxModelLen          = "max_model_len"
	SettingMaxNumSeqs           = "max_num_seqs"
	SettingMIGProfile           = "mig_profile"
	// SettingFSDPSharding and SettingFSDPOffload replace zero_stage and the
	// two offload settings when the workload shards with FSDP
	// (Workload.Sharding): a strategy name (NO_SHARD, SHARD_GRAD_OP,
	// FULL_SHARD, HYBRID_SHARD, _HYBRID_SHARD_ZERO2) and CPU offload on/off.
	SettingFSDPSharding = "fsdp_sharding"
	SettingFSDPOffload  = "fsdp_offload"
)

// Headroom bounds for PlanRequest.Headroom. The default leaves 15 % of a
// GPU free for what the memory model does not see: allocator fragmentation
// (the ZeRO paper, §3.2, reports OOMs "with over 30 % of memory still
// available"), NCCL growth and other processes; validation (docs/validation.md)
// puts most training estimates within ±20 % of measurements. A project may
// ask for less (a dedicated, well-measured GPU) or more (a GPU shared with
// other work) within the bounds.
const (
	DefaultPlanHeadroom = 0.15
	MinPlanHeadroom     = 0.05
	MaxPlanHeadroom     = 0.50
)

// underPrediction is, per workload kind, the largest share by which the
// memory model has under-predicted a measured peak in docs/validation.md
// (tuner/internal/validation's TestErrorBandCoversValidation fails when a
// row under-predicts by more, so the table cannot drift below the data):
// training -12.0 % (hf-bert-adam8bit-bs4), LoRA none, QLoRA -14.0 %
// (litgpt-llama2-7b-qlora-nf4dq), inference -6.0 % (litgpt-llama2-7b-generate-nf4).
var underPrediction = map[WorkloadKind]float64{Train: 0.12, LoRA: 0, QLoRA: 0.14, Inference: 0.06}

// kvOverPrediction is the largest share by which the memory model has
// over-predicted vLLM's KV cache ("GPU KV cache size: N tokens") in
// docs/validation.md: +16.0 % (vllm-llama31-8b-3090-default-len, an
// early-2025 vLLM on an RTX 3090). A reduced max_model_len keeps that
// margin (kvHolds), since vLLM refuses to start when one request does not
// fit its real cache; tuner/internal/validation's
// TestErrorBandCoversValidation fails when a row over-predicts by more.
const kvOverPrediction = 0.16

// KVOverPrediction returns the validated over-prediction band of vLLM's KV
// cache size.
func KVOverPrediction() float64 { return kvOverPrediction }

// UnderPrediction returns the validated under-prediction band of kind.
func UnderPrediction(kind WorkloadKind) float64 { return underPrediction[kind] }

// bandLimit is the memory a "largest micro batch that fits" may plan for:
// the headroom limit, or less where the model's validated error band needs
// more margin than the headroom leaves (capacity / (1 + band)), so that a
// run that needs band more than estimated still fits. The second result
// says whether the band set the limit.
func bandLimit(limit, capacity int64, kind WorkloadKind) (int64, bool) {
	b := int64(float64(capacity) / (1 + underPrediction[kind]))
	if b < limit {
		return b, true
	}
	return limit, false
}

// planMaxMicroBatch caps the micro-batch search: DeepSpeed's autotuner uses
// the same ceiling, max_train_micro_batch_size_per_gpu = 1024
// (memory-model.md §7).
const planMaxMicroBatch = 1024

// PlanRequest is the input of MakePlan.
type PlanRequest struct {
	Model *Model
	GPU   *GPU // the whole GPUs the job runs on
	// GPUs is the total number of GPUs available to the job; Nodes (optional)
	// the number of nodes they are spread over, which must divide GPUs.
	GPUs  int
	Nodes int
	// Current is what the configuration says today. Its Kind (train, lora,
	// qlora, serve or inference) is kept; zero values mean unset and take
	// EstimateMemory's defaults. Settings the planner does not decide
	// (sequence length, optimizer, LoRA rank, tensor and pipeline degrees
	// for training, ...) are copied into the plan unchanged.
	Current Workload
	// GradientAccumulation is the configured gradient_accumulation_steps
	// (0 = unset, which DeepSpeed treats as 1); Workload has no such field.
	// A stated accumulation fixes the global batch even where GlobalBatch
	// is 0: today it is Current's micro batch × accumulation × data-parallel
	// degree, and the plan keeps that product.
	GradientAccumulation int
	// GlobalBatch is the configured global batch to keep (0 = not set):
	// global = micro batch × gradient accumulation × data-parallel degree.
	GlobalBatch int
	// Headroom is the fraction of capacity to leave free: 0 means
	// DefaultPlanHeadroom; otherwise it must lie in [MinPlanHeadroom, MaxPlanHeadroom].
	Headroom float64
	// MIGProfiles asks the planner to consider a MIG slice instead of a
	// whole GPU for serving and inference on a MIG-capable GPU.
	MIGProfiles bool
	// CurrentMIG is the MIG slice of GPU the job is given today, nil for
	// whole GPUs. It only names the current value of the mig_profile
	// choice; the planner picks the slice afresh.
	CurrentMIG *MIGProfile
}

// currentMIGName is the mig_profile choice's current value.
func (req PlanRequest) currentMIGName() string {
	if req.CurrentMIG == nil {
		return "none"
	}
	return req.CurrentMIG.Name
}

// Plan is MakePlan's proposal.
type Plan struct {
	// Workload is the proposed configuration; Estimate is its estimate on
	// the proposed target (the MIG slice when MIG is set).
	Workload Workload
	MIG      *MIGProfile // the proposed MIG slice; nil means a whole GPU
	Estimate Estimate
	// GradientAccumulation and GlobalBatch are the proposed accumulation
	// steps and the global batch they give (training kinds; 0 otherwise).
	GradientAccumulation int
	GlobalBatch          int
	// Choices has one entry per decision, in the order of the Setting
	// constants, including settings the plan keeps.
	Choices []Choice
	// Fits reports that Need ≤ Limit (and, for serving, that vLLM starts and
	// its CUDA graphs fit outside gpu_memory_utilization).
	Fits bool
	// Headroom is the headroom fraction applied; Limit is capacity × (1 −
	// Headroom) of the proposed target, in bytes.
	Headroom float64
	Limit    int64
	// Need is the bytes held against Limit. Training and inference: the
	// estimate's per-GPU total. Serving: everything except the KV-cache pool
	// beyond one max_model_len request, i.e. weights, the profiled activation
	// peak, non-torch memory, CUDA context and graphs, plus one full-length
	// request's KV blocks. The remaining budget is vLLM's preallocated KV
	// pool, which never grows and whose exhaustion preempts requests instead
	// of failing; its size is reported in Estimate.Serve.
	Need int64
	// Verdict is one line saying whether the plan fits and, when it does
	// not, why and what would help.
	Verdict string
	// Notes are remarks that belong to no single choice.
	Notes []string
	// Held are choices the plan would make but does not, because they
	// would change the run's optimisation: a larger micro batch that fits
	// but that no accumulation keeps at the stated global batch. Their
	// Reason says how the global batch would change. They are advice,
	// never in Workload.
	Held []Choice
}

// Choice is one decision of a plan.
type Choice struct {
	Setting string // one of the Setting constants
	// From is the current effective value (defaults applied), To the
	// proposed one; they are equal when the plan keeps the setting.
	From, To string
	// Reason gives the numbers behind the decision.
	Reason string
}

// Changed reports whether the choice proposes a different value.
func (c Choice) Changed() bool { return c.From != c.To }

// Choice returns the plan's choice for setting, if it has one.
func (p Plan) Choice(setting string) (Choice, bool) {
	for _, c := range p.Choices {
		if c.Setting == setting {
			return c, true
		}
	}
	return Choice{}, false
}

// MakePlan proposes settings for req.Current on req.GPUs GPUs of req.GPU:
// for training, the precision, the lowest ZeRO stage that fits (offloading
// only when no stage fits), the largest micro batch under the headroom,
// gradient accumulation that keeps the global batch and activation
// checkpointing only when it is needed; for serving, the smallest tensor
// parallel degree, gpu_memory_utilization, max_model_len, max_num_seqs and
// optionally a MIG slice. The workload kind is kept. It is deterministic:
// the same request yields the same plan. When nothing fits, the plan holds
// the most memory-saving settings with Fits false and a Verdict saying why;
// an error means the request itself is invalid.
func MakePlan(req PlanRequest) (Plan, error) {
	h, err := req.validate()
	if err != nil {
		return Plan{}, fmt.Errorf("make plan: %w", err)
	}
	// The current workload must be one the memory model accepts.
	if _, err := req.Current.resolve(req.Model); err != nil {
		return Plan{}, fmt.Errorf("make plan: current workload: %w", err)
	}
	var p Plan
	switch req.Current.Kind {
	case Train, LoRA, QLoRA:
		p, err = planTraining(req, h)
	case Serve:
		p, err = planServing(req, h)
	case Inference:
		p, err = planInference(req, h)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("make plan: %w", err)
	}
	p.Headroom = h
	return p, nil
}

func (req PlanRequest) validate() (float64, error) {
	var errs []error
	if req.Model == nil {
		errs = append(errs, errors.New("no model"))
	}
	if req.GPU == nil {
		errs = append(errs, errors.New("no gpu"))
	} else if req.GPU.UsableBytes <= 0 {
		errs = append(errs, fmt.Errorf("gpu %s has no capacity", req.GPU.Name))
	}
	if req.GPUs < 1 {
		errs = append(errs, fmt.Errorf("gpus must be at least 1, got %d", req.GPUs))
	}
	if req.Nodes < 0 {
		errs = append(errs, fmt.Errorf("nodes must not be negative, got %d", req.Nodes))
	} else if req.Nodes > 0 && req.GPUs >= 1 && req.GPUs%req.Nodes != 0 {
		errs = append(errs, fmt.Errorf("%d gpus do not divide evenly over %d nodes", req.GPUs, req.Nodes))
	}
	if req.Current.Kind == "" {
		errs = append(errs, errors.New("current workload has no kind"))
	}
	if req.GlobalBatch < 0 || req.GradientAccumulation < 0 {
		errs = append(errs, errors.New("global batch and gradient accumulation must not be negative"))
	}
	h := req.Headroom
	if h == 0 {
		h = DefaultPlanHeadroom
	}
	if h < MinPlanHeadroom || h > MaxPlanHeadroom {
		errs = append(errs, fmt.Errorf("headroom %.2f is outside %.2f-%.2f", h, MinPlanHeadroom, MaxPlanHeadroom))
	}
	return h, errors.Join(errs...)
}

// gpusPerNode is GPUs / Nodes when nodes are given, else 0 (the estimator's
// default, min(world size, 8)).
func (req PlanRequest) gpusPerNode() int {
	if req.Nodes > 0 {
		return req.GPUs / req.Nodes
	}
	return 0
}

// planLimit is capacity × (1 − headroom), rounded down to a byte.
func planLimit(capacity int64, headroom float64) int64 {
	return int64(float64(capacity) * (1 - headroom))
}

// choosePrecision applies the precision rule: bf16 where the GPU supports
// it, else fp16; never fp32 compute; fp8 kept when chosen and supported;
// AMP (autocast) and pure bf16 kept where their compute type is supported.
//
// train selects the wording: training keeps fp32 master weights and scales
// the fp16 loss; serving only computes in 16 bits.
func choosePrecision(g *GPU, cur Precision, train bool) (Precision, string) {
	half, halfWhy := BF16, fmt.Sprintf("%s has bf16 tensor cores (%s)", g.Name, gpuArch(g))
	if !g.SupportsBF16() {
		halfWhy = fmt.Sprintf("%s has no bf16 tensor cores (%s): fp16", g.Name, gpuArch(g))
		if train {
			halfWhy += " with loss scaling"
		}
		half = FP16
	}
	never := "never fp32 compute: vLLM and generate run 16-bit weights; "
	if train {
		never = "never fp32 compute: 16-bit mixed precision keeps fp32 master weights; "
	}
	switch cur {
	case FP8:
		if g.SupportsFP8() {
			return FP8, fmt.Sprintf("fp8 kept: %s has fp8 tensor cores (%s)", g.Name, gpuArch(g))
		}
		return half, fmt.Sprintf("%s has no fp8 tensor cores (%s; fp8 needs 8.9+); %s", g.Name, gpuArch(g), halfWhy)
	case FP32:
		return half, never + halfWhy
	case AMP:
		return AMP, fmt.Sprintf("amp kept: autocast computes in 16 bits (%s on %s)", half, g.Name)
	case PureBF16:
		if g.SupportsBF16() {
			return PureBF16, "pure bf16 kept: " + halfWhy
		}
		return FP16, halfWhy + "; fp16 mixed precision adds fp32 master weights and optimizer states"
	case FP16:
		if half == BF16 {
			return BF16, halfWhy + ": bf16 keeps fp32's exponent range and needs no loss scaling, same memory as fp16"
		}
		return FP16, "fp16 kept: " + halfWhy
	}
	return half, halfWhy
}

// gpuArch names the feature level a precision rule rests on.
func gpuArch(g *GPU) string {
	if g.Vendor == "amd" {
		return g.GFX
	}
	return "compute capability " + g.CC.String()
}

// gibs formats bytes as GiB with two decimals and no unit.
func gibs(b int64) string { return strconv.FormatFloat(float64(b)/float64(GiB), 'f', 2, 64) }

// limitPhrase describes a limit: "67.24 GiB limit (79.11 GiB less 15%)".
func limitPhrase(limit, capacity int64, headroom float64) string {
	return fmt.Sprintf("%s GiB limit (%s GiB less %d%%)", gibs(limit), gibs(capacity), int(headroom*100+0.5))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func deviceString(d Device) string {
	if d == "" {
		return string(NoOffload)
	}
	return string(d)
}

// joinReasons joins non-empty clauses with "; ".
func joinReasons(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}
