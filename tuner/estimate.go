package tuner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Overhead constants. Each is a documented assumption; docs/validation.md
// checks the totals they feed against published measurements.
const (
	// cudaContextBytes is the CUDA context plus loaded kernels of one process
	// before any tensor: 0.51 GiB in vLLM v0.19's worker-init snapshot on an
	// H100 with CUDA 12 and lazy module loading (llm-d-incubation/llm-d-planner
	// accuracy/results/v0.19.0/logs, "cuda_memory=0.51GiB"). Older stacks
	// without lazy loading measured 1343 MB on a V100 (transformers
	// model_memory_anatomy.md); Workload.CUDAContextBytes overrides it.
	cudaContextBytes = 512 * MiB
	// trainContextBytes replaces cudaContextBytes for training: a training
	// step loads backward and optimizer kernels (cuBLAS, SDPA backward, the
	// foreach/fused AdamW kernels) that vLLM's init snapshot has not yet
	// loaded. bench/gpu measured NVML's per-process memory minus
	// torch.cuda.max_memory_reserved at the end of every training setup at
	// 686-758 MiB (bench/gpu/README.md, "What is recorded", and finding 7;
	// H200, CUDA 13.0, torch 2.11 with lazy module loading); the smallest is
	// taken so no training run measured there held less.
	trainContextBytes = 686 * MiB
	// allocatorPercent of activation bytes is reserved for PyTorch caching
	// allocator rounding and fragmentation of transient tensors. Our
	// assumption: the allocator rounds large blocks to 2 MiB and keeps split
	// blocks cached; the ZeRO paper (§3.2) reports OOMs with over 30 % free
	// from fragmentation, so this is a floor, not a bound.
	allocatorPercent = 5
	// allocatorPercentCheckpointed replaces allocatorPercent when activation
	// checkpointing recomputes layers: each layer's backward frees and
	// re-allocates a layer-sized working set around the loss's large blocks,
	// and the caching allocator keeps the split blocks. Chosen as the class's
	// best predictor of torch.cuda.max_memory_reserved over the 23
	// checkpointed training rows of bench/gpu (H200, torch 2.11): median
	// |error| 4.7 % at 20 % of activations against 6.3 % at 5 %, and 4.8 % for
	// the best share of allocated memory (docs/validation.md "The allocator
	// reserve"; TestCheckpointedReserveTermPredictsBest).
	allocatorPercentCheckpointed = 20
	// ncclBytes covers NCCL communicator buffers when more than one rank
	// takes part (NCCL's default 4 MiB buffers per channel and peer, plus
	// workspaces). Our assumption for data/pipeline parallelism.
	ncclBytes = 512 * MiB
	// tpCommBytes is the non-torch memory vLLM measures at TP ≥ 2 (NCCL and
	// custom all-reduce buffers): 2.07-2.17 GiB per GPU for TP 2-4 in vLLM
	// v0.19 logs (llm-d-incubation/llm-d-planner accuracy_report.md). Used for
	// tensor parallelism in training as well.
	tpCommBytes = 2150 * MiB
	// vllmNonTorchBytes is vLLM's "non-torch forward increase" at TP = 1:
	// 0.24-0.25 GiB in the same v0.19 logs.
	vllmNonTorchBytes = 256 * MiB
	// vLLM's CUDA-graph pool, captured after the KV cache is sized, scales
	// with the model and the captured sizes: see cudagraph.go.
)

// Target is what an estimate is checked against: a whole GPU, a MIG slice,
// or a bare capacity.
type Target struct {
	Name     string      // for messages, e.g. "H100-80GB" or "H100-80GB MIG 1g.10gb"
	GPU      *GPU        // nil for a bare capacity
	MIG      *MIGProfile // non-nil for a MIG slice
	Capacity int64       // bytes one process can allocate in total
	// HostMemory is the CPU RAM of one node in bytes, when known; an
	// estimate whose Host exceeds it does not fit. Zero leaves host memory
	// unjudged.
	HostMemory int64
}

// Target returns the whole-GPU target for g.
func (g *GPU) Target() Target {
	return Target{Name: g.Name, GPU: g, Capacity: g.UsableBytes}
}

// MIGTarget returns the target for one MIG instance of profile p on g.
func (g *GPU) MIGTarget(p *MIGProfile) Target {
	return Target{Name: g.Name + " MIG " + p.Name, GPU: g, MIG: p, Capacity: p.MemoryBytes}
}

// CapacityTarget is a target known only by its usable bytes.
func CapacityTarget(name string, capacity int64) Target {
	return Target{Name: name, Capacity: capacity}
}

// Breakdown is per-GPU memory in bytes.
type Breakdown struct {
	Weights         int64 `json:"weights"`
	Gradients       int64 `json:"gradients"`
	OptimizerStates int64 `json:"optimizer_states"`
	Activations     int64 `json:"activations"`
	KVCache         int64 `json:"kv_cache"`
	Overhead        int64 `json:"overhead"`
	Total           int64 `json:"total"`
}

func (b *Breakdown) sum() {
	b.Total = b.Weights + b.Gradients + b.OptimizerStates + b.Activations + b.KVCache + b.Overhead
}

// OverheadItem is one named part of Breakdown.Overhead.
type OverheadItem struct {
	Name  string
	Bytes int64
}

// ServeEstimate holds the vLLM-specific numbers.
type ServeEstimate struct {
	KVBytesPerToken int64   // per GPU, all its layers
	KVCacheTokens   int64   // "GPU KV cache size: N tokens"
	NumBlocks       int64   // KV blocks of BlockSize tokens
	MaxConcurrency  float64 // blocks / blocks per max_model_len request
	// RequestBlocks is the pool blocks one max_model_len request needs over
	// all KV cache groups; OneRequestKVBytes their bytes on one GPU, what
	// vLLM's start-up check compares with the memory left for the cache.
	// Sliding-window and chunked-local layers hold only their span.
	RequestBlocks     int64
	OneRequestKVBytes int64
	KVCacheBytes      int64 // bytes left for the KV cache inside the budget
	Budget            int64 // gpu_memory_utilization × capacity

	// GraphHeadroom is (1 − util) × capacity − (CUDA context + CUDA graphs):
	// CUDA graphs are captured after the KV cache is allocated and must fit
	// outside the utilization budget (memory-model.md §5.2). Negative means
	// capture will run out of memory.
	GraphHeadroom int64
	// GraphsInBudget is set when the stated release takes the CUDA graphs
	// out of gpu_memory_utilization's budget (v0.21 and later): the KV
	// cache is smaller by Graphs.Bytes and GraphHeadroom counts the CUDA
	// context only.
	GraphsInBudget bool
	// Graphs is the CUDA-graph pool's estimate and bounds (zero with
	// enforce_eager).
	Graphs CUDAGraphs

	// Resolved settings.
	GPUMemoryUtilization float64
	MaxModelLen          int
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	BlockSize            int
}

// Estimate is the result of EstimateMemory.
type Estimate struct {
	Target    string
	PerGPU    Breakdown
	Overheads []OverheadItem // parts of PerGPU.Overhead, in a fixed order
	Capacity  int64
	Fits      bool
	Headroom  int64 // Capacity − PerGPU.Total; negative when it does not fit
	// Host is the CPU RAM per node that offloading (or DeepSpeed's fp32 model
	// build at start-up) needs, from DeepSpeed's estimator formulas
	// (memory-model.md §2); 0 when not applicable.
	Host int64
	// HostCapacity is the node RAM Host was judged against (Target's
	// HostMemory); 0 when Host was not judged.
	HostCapacity int64
	Serve        *ServeEstimate // non-nil for Serve workloads
	PPO          *PPOParts      // non-nil for PPO workloads: the per-model parts
	Notes        []string
	// Refused, when set, says why the framework refuses the workload at
	// start-up whatever the memory (a vLLM release that no longer serves
	// the model); the verdict is then "does not start", the figures are
	// the need had it started. Use Refuse to set it.
	Refused string

	// Workload is the workload as estimated, every default filled in.
	Workload Workload
	// Model names the model and where it came from; Inputs lists what the
	// estimate rests on. The caller that knows how each input was stated
	// (the CLI's flags) fills both; EstimateMemory leaves them empty.
	Model  ModelSource
	Inputs []EstimateInput
}

// Refuse marks the estimate as refused at start-up for reason: it no
// longer fits, whatever its memory.
func (e *Estimate) Refuse(reason string) {
	e.Refused = reason
	e.Fits = false
}

// ModelSource is the resolved model of an estimate: its id and where it
// came from ("catalog", "model directory DIR", "--params, architecture of ID").
type ModelSource struct {
	ID, From string
}

// EstimateInput is one input an estimate rests on: its name (the flag that
// states it), its value, and whether it was given or assumed; an assumed
// input names the default's basis.
type EstimateInput struct {
	Name    string
	Value   any // string, int, float64 or bool
	Assumed bool
	Basis   string // for an assumed input: where the default comes from
	// From is where a stated input comes from when it is not the command
	// line: "project file PATH:LINE". Empty for a flag.
	From string
}

// EstimateMemory estimates per-GPU memory of workload w for model m on target t.
func EstimateMemory(m *Model, t Target, w Workload) (Estimate, error) {
	if m == nil {
		return Estimate{}, errors.New("estimate memory: no model")
	}
	if t.Capacity <= 0 {
		return Estimate{}, fmt.Errorf("estimate memory: target %q has no capacity", t.Name)
	}
	r, err := w.resolve(m)
	if err != nil {
		return Estimate{}, fmt.Errorf("estimate memory: %w", err)
	}
	e := Estimate{Target: t.Name, Capacity: t.Capacity, Workload: r.Workload}
	switch r.Kind {
	case Train, LoRA, QLoRA:
		err = estimateTraining(&e, m, t, r)
	case Inference:
		err = estimateInference(&e, m, t, r)
	case Serve:
		err = estimateServe(&e, m, t, r)
	case PPO:
		err = estimatePPO(&e, m, t, r)
	}
	if err != nil {
		return Estimate{}, fmt.Errorf("estimate memory: %w", err)
	}
	e.PerGPU.Overhead = 0
	for _, o := range e.Overheads {
		e.PerGPU.Overhead += o.Bytes
	}
	e.PerGPU.sum()
	e.Headroom = e.Capacity - e.PerGPU.Total
	if e.Serve == nil {
		e.Fits = e.Headroom >= 0
	} else {
		e.Fits = e.Fits && e.Headroom >= 0
	}
	if e.Host > 0 && t.HostMemory > 0 {
		// A node that cannot hold what is offloaded to it fails the run as
		// surely as a GPU: the verdict says so (RenderEstimateText, host).
		e.HostCapacity = t.HostMemory
		if e.Host > t.HostMemory {
			e.Fits = false
		}
	}
	if t.MIG != nil && r.world > 1 {
		e.Notes = append(e.Notes, "MIG instances have no NVLink or CUDA IPC between them; multi-GPU jobs across MIG slices fall back to host memory (gpus.md §2.1)")
	}
	if t.GPU != nil {
		e.Notes = append(e.Notes, precisionNotes(t.GPU, r)...)
	}
	return e, nil
}

func precisionNotes(g *GPU, r resolved) []string {
	var notes []string
	if (r.Precision == BF16 || r.Precision == PureBF16) && !g.SupportsBF16() {
		notes = append(notes, fmt.Sprintf("%s has no BF16 tensor cores (compute capability %s); use fp16", g.Name, g.CC))
	}
	if r.Precision == FP8 && !g.SupportsFP8() {
		notes = append(notes, fmt.Sprintf("%s has no FP8 tensor cores", g.Name))
	}
	return notes
}

func (e *Estimate) addOverhead(name string, b int64) {
	if b > 0 {
		e.Overheads = append(e.Overheads, OverheadItem{Name: name, Bytes: b})
	}
}

func contextBytes(r resolved) int64 {
	if r.CUDAContextBytes > 0 {
		return r.CUDAContextBytes
	}
	if isTraining(r.Kind) {
		return trainContextBytes
	}
	return cudaContextBytes
}

// isTraining reports whether k runs a backward pass and an optimizer step.
func isTraining(k WorkloadKind) bool { return k == Train || k == LoRA || k == QLoRA || k == PPO }

// managedBytes is the GPU memory held outside PyTorch's caching allocator
// in CUDA unified memory: a paged optimizer's state, which bitsandbytes
// allocates with cudaMallocManaged (functional.py get_paged), so torch's
// counters never see it.
func (e Estimate) managedBytes() int64 {
	if e.Workload.PagedOptimizer {
		return e.PerGPU.OptimizerStates
	}
	return 0
}

// PagedBytes is the optimizer state a paged optimizer keeps in CUDA
// unified memory, which the per-GPU total counts on the GPU and the driver
// pages to host memory when the GPU fills; 0 without a paged optimizer.
func (e Estimate) PagedBytes() int64 { return e.managedBytes() }

// Allocated is the part of the per-GPU total that PyTorch's caching
// allocator hands out (torch.cuda.max_memory_allocated): the total less the
// CUDA context, the allocator's reserve and memory outside PyTorch (NCCL,
// vLLM's non-torch memory, CUDA graphs) and a paged optimizer's state.
func (e Estimate) Allocated() int64 {
	v := e.PerGPU.Total - e.managedBytes()
	for _, o := range e.Overheads {
		if isAllocatorReserve(o.Name) || outsideTorch(o.Name) {
			v -= o.Bytes
		}
	}
	return v
}

// Reserved is what the caching allocator holds
// (torch.cuda.max_memory_reserved): Allocated plus the allocator's reserve.
func (e Estimate) Reserved() int64 {
	v := e.PerGPU.Total - e.managedBytes()
	for _, o := range e.Overheads {
		if outsideTorch(o.Name) {
			v -= o.Bytes
		}
	}
	return v
}

func isAllocatorReserve(name string) bool { return strings.HasPrefix(name, "allocator") }

func outsideTorch(name string) bool {
	return name == "CUDA context" || strings.HasPrefix(name, "NCCL") || name == "vLLM non-torch memory" || name == "CUDA graphs"
}

// estimateJSON is the stable `gpulint estimate --format json` shape.
type estimateJSON struct {
	PerGPU   Breakdown  `json:"per_gpu"`
	Capacity int64      `json:"capacity"`
	Fits     bool       `json:"fits"`
	Headroom int64      `json:"headroom"`
	Serve    *serveJSON `json:"serve,omitempty"`
	// Added fields (the contract only grows): what torch's allocator would
	// report, and the named parts of per_gpu.overhead.
	Allocated int64          `json:"allocated"`
	Reserved  int64          `json:"reserved"`
	Overheads []overheadJSON `json:"overheads"`
	// Added with the inputs: the resolved model, every input keyed by its
	// flag name, and host memory when the workload needs any.
	Model  *modelJSON           `json:"model,omitempty"`
	Inputs map[string]inputJSON `json:"inputs,omitempty"`
	Host   *hostJSON            `json:"host,omitempty"`
	// Added with the release check: why the framework refuses the
	// workload at start-up (fits is then false).
	Refused string `json:"refused,omitempty"`
}

type modelJSON struct {
	ID   string `json:"id"`
	From string `json:"from"`
}

// inputJSON is one input: its value, "given" or "assumed", and for an
// assumed one the default's basis.
type inputJSON struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
	Basis  string `json:"basis,omitempty"`
	From   string `json:"from,omitempty"`
}

// hostJSON is the host RAM per node: the need, and when judged the node's
// RAM and whether the need fits it.
type hostJSON struct {
	Need     int64 `json:"need"`
	Judged   bool  `json:"judged"`
	Capacity int64 `json:"capacity,omitempty"`
	Fits     *bool `json:"fits,omitempty"`
}

type overheadJSON struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

type serveJSON struct {
	KVBytesPerToken int64   `json:"kv_bytes_per_token"`
	KVCacheTokens   int64   `json:"kv_cache_tokens"`
	MaxConcurrency  float64 `json:"max_concurrency"`
}

// MarshalJSON writes the stable JSON contract: per_gpu (weights, gradients,
// optimizer_states, activations, kv_cache, overhead, total), capacity, fits,
// headroom and, for serving only, serve (kv_bytes_per_token,
// kv_cache_tokens, max_concurrency rounded to two decimals); then the added
// allocated, reserved and overheads (name, bytes); then, when set, model
// (id, from), inputs (name -> value, source given, project or assumed,
// basis, from: the project file's line) and
// host (need, judged, capacity, fits; only when the workload needs host
// memory); refused, when the framework refuses the workload at start-up.
// fits is false when a judged host need exceeds the node's RAM or the
// workload is refused.
// All memory is in bytes.
func (e Estimate) MarshalJSON() ([]byte, error) {
	out := estimateJSON{PerGPU: e.PerGPU, Capacity: e.Capacity, Fits: e.Fits, Headroom: e.Headroom,
		Allocated: e.Allocated(), Reserved: e.Reserved(), Overheads: []overheadJSON{}, Refused: e.Refused}
	for _, o := range e.Overheads {
		out.Overheads = append(out.Overheads, overheadJSON{Name: o.Name, Bytes: o.Bytes})
	}
	if s := e.Serve; s != nil {
		out.Serve = &serveJSON{KVBytesPerToken: s.KVBytesPerToken, KVCacheTokens: s.KVCacheTokens,
			MaxConcurrency: math.Round(s.MaxConcurrency*100) / 100}
	}
	if e.Model.ID != "" {
		out.Model = &modelJSON{ID: e.Model.ID, From: e.Model.From}
	}
	if len(e.Inputs) > 0 {
		out.Inputs = map[string]inputJSON{}
		for _, x := range e.Inputs {
			src := "given"
			switch {
			case x.Assumed:
				src = "assumed"
			case x.From != "":
				src = "project"
			}
			out.Inputs[x.Name] = inputJSON{Value: x.Value, Source: src, Basis: x.Basis, From: x.From}
		}
	}
	if e.Host > 0 {
		out.Host = &hostJSON{Need: e.Host, Judged: e.HostCapacity > 0, Capacity: e.HostCapacity}
		if out.Host.Judged {
			fits := !e.HostShort()
			out.Host.Fits = &fits
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// HostShort reports whether host memory was judged and a node has less RAM
// than Host.
func (e Estimate) HostShort() bool { return e.HostCapacity > 0 && e.Host > e.HostCapacity }

// DefaultCUDAContextMiB is the CUDA context per process, in MiB, that an
// inference or serving estimate assumes when Workload.CUDAContextBytes is
// zero; DefaultTrainCUDAContextMiB is the training estimate's.
const (
	DefaultCUDAContextMiB      = cudaContextBytes / MiB
	DefaultTrainCUDAContextMiB = trainContextBytes / MiB
)
