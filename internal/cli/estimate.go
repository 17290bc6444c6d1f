package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/internal/cmdline"
	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/tuner"
)

// EstimateOptions are `gpulint estimate`'s flags.
type EstimateOptions struct {
	Factory *Factory

	Model, GPU, Workload, Precision, Optimizer string
	Params, GPUMemory, HostMemory              string
	GPUs, Zero, MicroBatch, SeqLen, LoRARank   int
	TP, PP, MaxModelLen, MaxNumSeqs            int
	MaxNumBatchedTokens, CUDAContextMiB        int
	TargetLen                                  int
	OffloadOptimizer, OffloadParam, KVCache    string
	Sharding                                   string
	Attention, Loss, LoRATargets, Weights      string
	PrefillLogits                              string
	MIG, FSDP                                  string
	VLLMVersion                                string
	Config, TargetPath                         string
	Checkpointing, OptimizerInBackward         bool
	ActivationOffloading                       bool
	KbitFP32                                   bool
	EnforceEager                               bool
	DisableHybridKVCache                       bool
	FlashInferSampler                          bool
	GPUMemoryUtilization                       float64
	Format                                     string
	ListGPUs, ListModels                       bool

	// ZeRO-3 gathering settings in elements (stage3_max_live_parameters,
	// stage3_prefetch_bucket_size, stage3_max_reuse_distance); used only
	// when given.
	Zero3MaxLive, Zero3PrefetchBucket, Zero3ReuseDistance float64

	params, gpuMemory, hostMemory int64 // parsed --params, --gpu-memory and --host-memory

	// given reports whether a flag was set on the command line (cobra's
	// Changed), so the output can mark each input given or assumed.
	given func(name string) bool
	// fromProject maps a flag name to "project file PATH:LINE" for each
	// input the --config project file's target stated (estimate_project.go).
	fromProject map[string]string
}

// fsdpStrategies are --fsdp's values: FSDP ShardingStrategy names.
var fsdpStrategies = []string{"full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2"}

var attentionFlags = map[string]tuner.AttentionImpl{
	"eager": tuner.EagerAttention, "sdpa": tuner.FlashAttention, "flash": tuner.FlashAttention,
}

// NewCmdEstimate builds `gpulint estimate`.
func NewCmdEstimate(f *Factory, runF func(*EstimateOptions) error) *cobra.Command {
	o := &EstimateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "estimate --model ID|DIR --gpu NAME [flags]",
		Short: "Estimate per-GPU memory for a training or serving setup",
		Long: `Estimate per-GPU memory - weights, gradients, optimizer states, activations,
KV cache and overhead - for a model on a GPU, with the same memory model the
lint rules use. docs/validation.md compares it with published measurements.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			o.given = cmd.Flags().Changed
			if runF != nil {
				return runF(o)
			}
			return runEstimate(o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Model, "model", "", "model: catalog id, an id in the local Hugging Face cache, or a directory with a Hugging Face config.json")
	fl.StringVar(&o.Params, "params", "", "parameter count when there is no model, as 7.5B, 7.5e9 or 7500000000 (the architecture of the catalog model of nearest size is used for activations)")
	fl.StringVar(&o.GPU, "gpu", "", "target GPU (catalog name or node label)")
	fl.StringVar(&o.GPUMemory, "gpu-memory", "", "memory one process can allocate on a GPU that is not in the catalog, as 24GiB, 24GB or 24576MiB")
	fl.StringVar(&o.HostMemory, "host-memory", "", "CPU RAM of one node, as 512GiB or 1TB: offloading that needs more does not fit (default: host memory is not judged)")
	fl.StringVar(&o.MIG, "mig", "", "estimate against one MIG slice of the GPU (e.g. 3g.40gb)")
	fl.IntVar(&o.GPUs, "gpus", 1, "GPUs in the job (data parallel degree for training)")
	fl.StringVar(&o.Workload, "workload", "train", "train, lora, qlora, inference or serve")
	fl.StringVar(&o.Precision, "precision", "", "fp32, fp16, bf16, fp8, amp or pure-bf16 (default: bf16 for training, the checkpoint dtype otherwise)")
	fl.StringVar(&o.Optimizer, "optimizer", "", "adamw (the framework's default kernel), adamw-foreach, adamw-fused, adamw-forloop, adam8bit, paged-adamw (bitsandbytes' 32-bit PagedAdamW: fp32 states even under pure-bf16), paged-adamw8bit, sgd, adafactor, or galore-adamw, galore-adamw8bit, galore-adafactor (sized as the optimizer they wrap, an upper bound) (default adamw)")
	fl.StringVar(&o.FSDP, "fsdp", "", "FSDP sharding strategy instead of ZeRO: full_shard, shard_grad_op, no_shard, hybrid_shard or hybrid_shard_zero2")
	fl.StringVar(&o.Config, "config", "", "project file (.gpulint.yaml) whose target states the inputs no flag sets")
	fl.StringVar(&o.TargetPath, "target-path", "", "with --config: the file path whose target applies (default: the first target)")
	fl.BoolVar(&o.OptimizerInBackward, "optimizer-in-backward", false, "the optimizer steps inside backward (torchtune optimizer_in_bwd)")
	fl.StringVar(&o.Attention, "attention", "", "attention implementation: eager, sdpa or flash (default sdpa/flash)")
	fl.StringVar(&o.Loss, "loss", "", "loss implementation: hf-default (transformers, fp32 logits), chunked (torchtune, LitGPT) or fused (Liger) (default hf-default)")
	fl.StringVar(&o.LoRATargets, "lora-targets", "", "LoRA target modules, comma-separated: q,k,v,o,gate,up,down, their _proj names or all-linear (default all-linear)")
	fl.IntVar(&o.CUDAContextMiB, "cuda-context", 0, "CUDA context and kernels per process in MiB, when measured (default 686 for training, 512 otherwise)")
	fl.StringVar(&o.PrefillLogits, "prefill-logits", "", "inference: logits for the last prompt position (last, as generate() does) or all (default last)")
	fl.StringVar(&o.Weights, "weights", "", "stored weight format for inference, serving and QLoRA: fp32, fp16, bf16, fp8, int8, awq, gptq, nf4, nf4-dq, mxfp4, nvfp4 (default: the checkpoint's)")
	fl.IntVar(&o.Zero, "zero", 0, "DeepSpeed ZeRO stage 0-3")
	fl.StringVar(&o.Sharding, "sharding", "", "framework that shards the model states: zero (DeepSpeed), fsdp or fsdp2; under FSDP --zero 2 is SHARD_GRAD_OP and 3 FULL_SHARD, and --offload-param cpu is CPUOffload (default zero)")
	fl.StringVar(&o.OffloadOptimizer, "offload-optimizer", "none", "none, cpu or nvme")
	fl.StringVar(&o.OffloadParam, "offload-param", "none", "none, cpu or nvme")
	fl.Float64Var(&o.Zero3MaxLive, "zero3-max-live", 0, "ZeRO-3: the DeepSpeed config's stage3_max_live_parameters in elements, as 1e8 (default DeepSpeed's 1e9)")
	fl.Float64Var(&o.Zero3PrefetchBucket, "zero3-prefetch-bucket", 0, "ZeRO-3: stage3_prefetch_bucket_size in elements; 0 turns prefetch off (default DeepSpeed's 5e7)")
	fl.Float64Var(&o.Zero3ReuseDistance, "zero3-reuse-distance", 0, "ZeRO-3: stage3_max_reuse_distance in elements (default DeepSpeed's 1e9)")
	fl.IntVar(&o.MicroBatch, "micro-batch", 1, "micro batch per GPU")
	fl.IntVar(&o.SeqLen, "seq-len", 0, "sequence length (default min(2048, max positions))")
	fl.IntVar(&o.TargetLen, "target-len", 0, "encoder-decoder (T5): decoder target length; --seq-len is then the encoder input (default: --seq-len)")
	fl.BoolVar(&o.Checkpointing, "checkpointing", false, "full activation checkpointing")
	fl.BoolVar(&o.ActivationOffloading, "activation-offloading", false, "training: saved activations go to pinned host memory and come back in backward (torchtune enable_activation_offloading, axolotl activation_offloading); the GPU keeps the tensors in flight, the output projection's input and the loss, and host memory counts the rest")
	fl.IntVar(&o.LoRARank, "lora-rank", 0, "LoRA rank (default 16)")
	fl.BoolVar(&o.KbitFP32, "kbit-fp32", false, "qlora: the embeddings, lm_head and norms stay in fp32, as PEFT's prepare_model_for_kbit_training leaves them (default: 16-bit, as TRL and qlora.py cast them back)")
	fl.IntVar(&o.TP, "tp", 1, "tensor-parallel degree")
	fl.IntVar(&o.PP, "pp", 1, "pipeline-parallel degree")
	fl.Float64Var(&o.GPUMemoryUtilization, "gpu-memory-utilization", 0, "vLLM gpu_memory_utilization (default 0.9)")
	fl.IntVar(&o.MaxModelLen, "max-model-len", 0, "vLLM max_model_len (default: the model's max positions)")
	fl.IntVar(&o.MaxNumSeqs, "max-num-seqs", 0, "vLLM max_num_seqs (default by GPU)")
	fl.StringVar(&o.KVCache, "kv-cache-dtype", "", "vLLM kv_cache_dtype: auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16")
	fl.IntVar(&o.MaxNumBatchedTokens, "max-num-batched-tokens", 0, "vLLM max_num_batched_tokens (default by GPU)")
	fl.BoolVar(&o.EnforceEager, "enforce-eager", false, "vLLM enforce_eager: no CUDA graphs")
	fl.BoolVar(&o.DisableHybridKVCache, "disable-hybrid-kv-cache-manager", false, "vLLM --disable-hybrid-kv-cache-manager: sliding-window and chunked-local layers hold full-length KV")
	fl.StringVar(&o.VLLMVersion, "vllm-version", "", "the vLLM release that serves (X.Y.Z): its profiled sampler, CUDA-graph and KV-layout accounting (default: the current engine)")
	fl.BoolVar(&o.FlashInferSampler, "flashinfer-sampler", false, "vLLM samples with FlashInfer's kernel (v0.8.0-v0.11.0 where flashinfer is installed, as in the vllm/vllm-openai images): no vocabulary sort in the profiled sampler run")
	fl.StringVar(&o.Format, "format", "text", "output format: text or json")
	fl.BoolVar(&o.ListGPUs, "list-gpus", false, "list the GPU catalog and exit")
	fl.BoolVar(&o.ListModels, "list-models", false, "list the model catalog and exit")
	return cmd
}

func (o *EstimateOptions) validate() error {
	if o.ListGPUs || o.ListModels {
		return nil
	}
	bad := func(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }
	if o.Params != "" {
		n, err := parseCount(o.Params)
		if err != nil {
			return bad("--params: %v", err)
		}
		o.params = n
	}
	if o.GPUMemory != "" {
		n, err := parseBytes(o.GPUMemory)
		if err != nil {
			return bad("--gpu-memory: %v", err)
		}
		o.gpuMemory = n
	}
	if o.HostMemory != "" {
		n, err := parseBytes(o.HostMemory)
		if err != nil {
			return bad("--host-memory: %v", err)
		}
		o.hostMemory = n
	}
	if _, ok := tuner.OptimizerByName(o.Optimizer); o.Optimizer != "" && !ok {
		return bad("unknown --optimizer %q (want %s)", o.Optimizer, strings.Join(tuner.OptimizerNames(), ", "))
	}
	if o.FSDP != "" && !slices.Contains(fsdpStrategies, o.FSDP) {
		return bad("unknown --fsdp %q (want %s)", o.FSDP, strings.Join(fsdpStrategies, ", "))
	}
	if o.FSDP != "" && o.Zero > 0 {
		return bad("--fsdp and --zero are mutually exclusive")
	}
	if o.TargetPath != "" && o.Config == "" {
		return bad("--target-path needs --config")
	}
	if o.Config != "" && o.fromProject == nil {
		// The project file fills the inputs in run, after which validate runs again.
		return nil
	}
	if _, ok := attentionFlags[o.Attention]; o.Attention != "" && !ok {
		return bad("unknown --attention %q (want eager, sdpa or flash)", o.Attention)
	}
	switch {
	case o.Model == "" && o.params <= 0:
		return bad("give --model ID|DIR or --params N")
	case o.Model != "" && o.params > 0:
		return bad("--model and --params are mutually exclusive")
	case o.GPU == "" && o.gpuMemory == 0:
		return bad("give --gpu NAME or --gpu-memory SIZE")
	case o.CUDAContextMiB < 0 || o.MaxNumBatchedTokens < 0:
		return bad("--cuda-context and --max-num-batched-tokens must not be negative")
	case !slices.Contains([]string{"train", "lora", "qlora", "inference", "serve"}, o.Workload):
		return bad("unknown --workload %q (want train, lora, qlora, inference or serve)", o.Workload)
	case o.Zero < 0 || o.Zero > 3:
		return bad("--zero must be 0..3")
	case !slices.Contains([]string{"", "zero", "fsdp", "fsdp2"}, o.Sharding):
		return bad("unknown --sharding %q (want zero, fsdp or fsdp2)", o.Sharding)
	case o.Format != "text" && o.Format != "json":
		return bad("unknown --format %q (want text or json)", o.Format)
	case o.GPUs < 1 || o.MicroBatch < 1 || o.TP < 1 || o.PP < 1:
		return bad("--gpus, --micro-batch, --tp and --pp must be at least 1")
	case o.GPUMemoryUtilization < 0 || o.GPUMemoryUtilization > 1:
		return bad("--gpu-memory-utilization must be in (0, 1]")
	}
	for _, d := range []string{o.OffloadOptimizer, o.OffloadParam} {
		if d != "none" && d != "cpu" && d != "nvme" {
			return bad("unknown offload device %q (want none, cpu or nvme)", d)
		}
	}
	return nil
}

func runEstimate(o *EstimateOptions) error {
	deps, err := o.Factory.Deps()
	if err != nil {
		return err
	}
	cat := deps.Targets.Catalog()
	ios := o.Factory.IO
	if o.ListGPUs || o.ListModels {
		return listCatalog(ios.Out, cat, o.ListGPUs)
	}
	if o.Config != "" {
		if err := o.applyProject(deps, cat); err != nil {
			return err
		}
	}
	target, err := o.target(deps.Targets, cat)
	if err != nil {
		return err
	}
	if o.MIG != "" {
		g := target.GPU
		if g == nil {
			return &usageError{errors.New("--mig needs a catalog --gpu")}
		}
		p, ok := g.MIGProfile(o.MIG)
		if !ok {
			return &usageError{fmt.Errorf("%s has no MIG profile %q", g.Name, o.MIG)}
		}
		target = g.MIGTarget(p)
	}
	target.HostMemory = o.hostMemory
	m, src, err := o.model(deps.Targets.ModelWithSource, cat)
	if err != nil {
		return &usageError{err}
	}
	opt, _ := tuner.OptimizerByName(o.Optimizer)
	var targets []string
	if o.LoRATargets != "" {
		targets = strings.Split(o.LoRATargets, ",")
	}
	w := tuner.Workload{
		Kind: tuner.WorkloadKind(o.Workload), Precision: tuner.Precision(o.Precision),
		OptimizerInBackward: o.OptimizerInBackward, KbitFP32: o.KbitFP32,
		Attention: attentionFlags[o.Attention], Loss: tuner.LossImpl(o.Loss), LoRATargets: targets,
		PrefillLogits: tuner.PrefillLogits(o.PrefillLogits), WeightQuant: o.Weights,
		CUDAContextBytes: int64(o.CUDAContextMiB) * tuner.MiB, MaxNumBatchedTokens: o.MaxNumBatchedTokens,
		EnforceEager: o.EnforceEager, DisableHybridKVCache: o.DisableHybridKVCache, ZeroStage: o.Zero, Sharding: tuner.Sharding(o.Sharding),
		OffloadOptimizer: tuner.Device(o.OffloadOptimizer), OffloadParam: tuner.Device(o.OffloadParam),
		DataParallel: max(o.GPUs/(o.TP*o.PP), 1), TensorParallel: o.TP, PipelineParallel: o.PP,
		MicroBatch: o.MicroBatch, SeqLen: o.SeqLen, TargetLen: o.TargetLen, Checkpointing: o.Checkpointing, ActivationOffloading: o.ActivationOffloading, LoRARank: o.LoRARank,
		GPUMemoryUtilization: o.GPUMemoryUtilization, MaxModelLen: o.MaxModelLen, MaxNumSeqs: o.MaxNumSeqs,
		KVCacheDtype: o.KVCache, VLLMVersion: o.VLLMVersion, VLLMFlashInferSampler: o.FlashInferSampler,
	}
	opt.Set(&w)
	if o.FSDP != "" {
		normalize.FSDPStrategy(&w, o.FSDP, false)
	}
	given := o.given
	if given == nil {
		given = func(string) bool { return false }
	}
	for _, z := range []struct {
		flag string
		v    float64
		to   **int64
	}{{"zero3-max-live", o.Zero3MaxLive, &w.ZeRO3MaxLiveParams}, {"zero3-prefetch-bucket", o.Zero3PrefetchBucket, &w.ZeRO3PrefetchBucket},
		{"zero3-reuse-distance", o.Zero3ReuseDistance, &w.ZeRO3MaxReuseDistance}} {
		if !given(z.flag) {
			continue
		}
		if z.v < 0 || z.v != math.Trunc(z.v) {
			return &usageError{fmt.Errorf("--%s %g: want a whole number of elements, 0 or more", z.flag, z.v)}
		}
		n := int64(z.v)
		*z.to = &n
	}
	e, err := tuner.EstimateMemory(m, target, w)
	if err != nil {
		return &usageError{err}
	}
	e.Model = o.modelSource(m, src, cat)
	e.Inputs = o.estimateInputs(e, m, given)
	if w.Kind == tuner.Serve {
		// The release's own model list (cmdline.Dropped), as the linter's
		// model-dropped-by-release reads it.
		v := cmdline.StatedRelease(w.VLLMVersion, "--vllm-version")
		if d, ok := cmdline.Dropped(strings.ToLower(m.ModelType), v); ok {
			e.Refuse(fmt.Sprintf("vLLM %s no longer serves %s (%s was the last release to serve it), the server refuses the model",
				v, d.Architecture, d.Last))
		}
	}
	if o.Format == "json" {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	return tuner.RenderEstimateText(ios.Out, e, tuner.RenderOptions{Color: ios.ColorEnabled(), Bar: ios.IsTTY()})
}

// target resolves --gpu and --gpu-memory: a catalog GPU (its capacity
// replaced when --gpu-memory is given too), or a bare capacity for a GPU the
// catalog lacks.
func (o *EstimateOptions) target(r interface{ CheckFlags(gpu, model string) error }, cat *tuner.Catalog) (tuner.Target, error) {
	if o.gpuMemory > 0 {
		if err := r.CheckFlags("", o.Model); err != nil {
			return tuner.Target{}, &usageError{err}
		}
		name := o.GPU
		if name == "" {
			name = fmt.Sprintf("GPU with %s", o.GPUMemory)
		}
		if g, ok := cat.GPU(o.GPU); ok {
			t := g.Target()
			t.Capacity = o.gpuMemory
			return t, nil
		}
		return tuner.CapacityTarget(name, o.gpuMemory), nil
	}
	if err := r.CheckFlags(o.GPU, o.Model); err != nil {
		return tuner.Target{}, &usageError{err}
	}
	g, ok := cat.GPU(o.GPU)
	if !ok {
		pl, _ := cat.ParseProductLabel(o.GPU)
		g = pl.GPU
	}
	return g.Target(), nil
}

// parseCount reads a count written as an integer, in e-notation (7.5e9) or
// with a K, M, B or T suffix (7.5B).
func parseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if t != "" {
		switch strings.ToUpper(t[len(t)-1:]) {
		case "K":
			mult = 1e3
		case "M":
			mult = 1e6
		case "B", "G":
			mult = 1e9
		case "T":
			mult = 1e12
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a positive count (want 7.5B, 7.5e9 or 7500000000)", s)
	}
	return int64(math.Round(v * mult)), nil
}

// parseBytes reads a memory size with a unit: KiB, MiB, GiB, TiB (powers of
// 1024) or KB, MB, GB, TB (powers of 1000).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}}
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSpace(t[:len(t)-len(u.suffix)]), 64)
			if err != nil || v <= 0 || v*u.mult > math.MaxInt64/2 {
				break
			}
			return int64(v * u.mult), nil
		}
	}
	return 0, fmt.Errorf("%q is not a memory size (want 24GiB, 24GB or 24576MiB)", s)
}

// model resolves --model or --params.
func (o *EstimateOptions) model(byID func(string, bool) (*tuner.Model, string, error), cat *tuner.Catalog) (*tuner.Model, string, error) {
	if o.Model != "" {
		return byID(o.Model, true)
	}
	var best *tuner.Model
	for _, m := range cat.Models() {
		if m.Encoder || m.MoE != nil {
			continue
		}
		if best == nil || math.Abs(math.Log(float64(m.Params())/float64(o.params))) < math.Abs(math.Log(float64(best.Params())/float64(o.params))) {
			best = m
		}
	}
	if best == nil {
		return nil, "", errors.New("no catalog model to take an architecture from")
	}
	cp := *best
	cp.ID = fmt.Sprintf("%d params (architecture of %s)", o.params, best.ID)
	cp.ExactParams = o.params
	return &cp, "", nil
}

func listCatalog(w interface{ Write([]byte) (int, error) }, cat *tuner.Catalog, gpus bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if gpus {
		fmt.Fprintln(tw, "NAME\tMEMORY\tCC\tBF16\tFP8\tMIG PROFILES")
		for _, g := range cat.GPUs() {
			var profs []string
			for _, p := range g.MIGProfiles() {
				profs = append(profs, p.Name)
			}
			cc := g.CC.String()
			if g.Vendor == "amd" {
				cc = g.GFX
			}
			fmt.Fprintf(tw, "%s\t%.1f GiB\t%s\t%v\t%v\t%s\n", g.Name, float64(g.UsableBytes)/(1<<30), cc, g.SupportsBF16(), g.SupportsFP8(), strings.Join(profs, " "))
		}
	} else {
		fmt.Fprintln(tw, "ID\tPARAMS\tLAYERS\tHEADS/KV\tMAX POSITIONS")
		for _, m := range cat.Models() {
			fmt.Fprintf(tw, "%s\t%.2fB\t%d\t%d/%d\t%d\n", m.ID, float64(m.Params())/1e9, m.Layers, m.Heads, m.KVHeads, m.MaxPositions)
		}
	}
	return tw.Flush()
}
