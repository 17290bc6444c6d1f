package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpulint/gpulint/tuner"
)

// EstimateOptions are `gpulint estimate`'s flags.
type EstimateOptions struct {
	Factory *Factory

	Model, GPU, Workload, Precision, Optimizer string
	Params                                     int64
	GPUs, Zero, MicroBatch, SeqLen, LoRARank   int
	TP, PP, MaxModelLen, MaxNumSeqs            int
	OffloadOptimizer, OffloadParam, KVCache    string
	MIG                                        string
	Checkpointing                              bool
	GPUMemoryUtilization                       float64
	Format                                     string
	ListGPUs, ListModels                       bool
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
			if runF != nil {
				return runF(o)
			}
			return runEstimate(o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Model, "model", "", "model: catalog id or a directory with a Hugging Face config.json")
	fl.Int64Var(&o.Params, "params", 0, "parameter count, when there is no model (the architecture of the catalog model of nearest size is used for activations)")
	fl.StringVar(&o.GPU, "gpu", "", "target GPU (catalog name or node label)")
	fl.StringVar(&o.MIG, "mig", "", "estimate against one MIG slice of the GPU (e.g. 3g.40gb)")
	fl.IntVar(&o.GPUs, "gpus", 1, "GPUs in the job (data parallel degree for training)")
	fl.StringVar(&o.Workload, "workload", "train", "train, lora, qlora, inference or serve")
	fl.StringVar(&o.Precision, "precision", "", "fp32, fp16, bf16, fp8, amp or pure-bf16 (default: bf16 for training, the checkpoint dtype otherwise)")
	fl.StringVar(&o.Optimizer, "optimizer", "", "adamw, adam8bit, sgd or adafactor (default adamw)")
	fl.IntVar(&o.Zero, "zero", 0, "DeepSpeed ZeRO stage 0-3")
	fl.StringVar(&o.OffloadOptimizer, "offload-optimizer", "none", "none, cpu or nvme")
	fl.StringVar(&o.OffloadParam, "offload-param", "none", "none, cpu or nvme")
	fl.IntVar(&o.MicroBatch, "micro-batch", 1, "micro batch per GPU")
	fl.IntVar(&o.SeqLen, "seq-len", 0, "sequence length (default min(2048, max positions))")
	fl.BoolVar(&o.Checkpointing, "checkpointing", false, "full activation checkpointing")
	fl.IntVar(&o.LoRARank, "lora-rank", 0, "LoRA rank (default 16)")
	fl.IntVar(&o.TP, "tp", 1, "tensor-parallel degree")
	fl.IntVar(&o.PP, "pp", 1, "pipeline-parallel degree")
	fl.Float64Var(&o.GPUMemoryUtilization, "gpu-memory-utilization", 0, "vLLM gpu_memory_utilization (default 0.9)")
	fl.IntVar(&o.MaxModelLen, "max-model-len", 0, "vLLM max_model_len (default: the model's max positions)")
	fl.IntVar(&o.MaxNumSeqs, "max-num-seqs", 0, "vLLM max_num_seqs (default by GPU)")
	fl.StringVar(&o.KVCache, "kv-cache-dtype", "", "vLLM kv_cache_dtype: auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16")
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
	switch {
	case o.Model == "" && o.Params <= 0:
		return bad("give --model ID|DIR or --params N")
	case o.Model != "" && o.Params > 0:
		return bad("--model and --params are mutually exclusive")
	case o.GPU == "":
		return bad("--gpu is required")
	case !slices.Contains([]string{"train", "lora", "qlora", "inference", "serve"}, o.Workload):
		return bad("unknown --workload %q (want train, lora, qlora, inference or serve)", o.Workload)
	case o.Zero < 0 || o.Zero > 3:
		return bad("--zero must be 0..3")
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
	if err := deps.Targets.CheckFlags(o.GPU, o.Model); err != nil {
		return &usageError{err}
	}
	g, ok := cat.GPU(o.GPU)
	if !ok {
		pl, _ := cat.ParseProductLabel(o.GPU)
		g = pl.GPU
	}
	target := g.Target()
	if o.MIG != "" {
		p, ok := g.MIGProfile(o.MIG)
		if !ok {
			return &usageError{fmt.Errorf("%s has no MIG profile %q", g.Name, o.MIG)}
		}
		target = g.MIGTarget(p)
	}
	m, err := o.model(deps.Targets.Model, cat)
	if err != nil {
		return &usageError{err}
	}
	w := tuner.Workload{
		Kind: tuner.WorkloadKind(o.Workload), Precision: tuner.Precision(o.Precision),
		Optimizer: tuner.Optimizer(o.Optimizer), ZeroStage: o.Zero,
		OffloadOptimizer: tuner.Device(o.OffloadOptimizer), OffloadParam: tuner.Device(o.OffloadParam),
		DataParallel: max(o.GPUs/(o.TP*o.PP), 1), TensorParallel: o.TP, PipelineParallel: o.PP,
		MicroBatch: o.MicroBatch, SeqLen: o.SeqLen, Checkpointing: o.Checkpointing, LoRARank: o.LoRARank,
		GPUMemoryUtilization: o.GPUMemoryUtilization, MaxModelLen: o.MaxModelLen, MaxNumSeqs: o.MaxNumSeqs,
		KVCacheDtype: o.KVCache,
	}
	e, err := tuner.EstimateMemory(m, target, w)
	if err != nil {
		return &usageError{err}
	}
	if o.Format == "json" {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	return tuner.RenderEstimateText(ios.Out, e, tuner.RenderOptions{Color: ios.ColorEnabled()})
}

// model resolves --model or --params.
func (o *EstimateOptions) model(byID func(string, bool) (*tuner.Model, error), cat *tuner.Catalog) (*tuner.Model, error) {
	if o.Model != "" {
		return byID(o.Model, true)
	}
	var best *tuner.Model
	for _, m := range cat.Models() {
		if m.Encoder || m.MoE != nil {
			continue
		}
		if best == nil || math.Abs(math.Log(float64(m.Params())/float64(o.Params))) < math.Abs(math.Log(float64(best.Params())/float64(o.Params))) {
			best = m
		}
	}
	if best == nil {
		return nil, errors.New("no catalog model to take an architecture from")
	}
	cp := *best
	cp.ID = fmt.Sprintf("%d params (architecture of %s)", o.Params, best.ID)
	cp.ExactParams = o.Params
	return &cp, nil
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
