package tuner

import (
	"fmt"
	"strings"
)

// stateBytes is what one trainable parameter costs in each model-state
// category before any partitioning.
type stateBytes struct {
	weight, grad, optimizer float64
	// gathered is the size of a parameter gathered for compute under ZeRO-3.
	gathered float64
}

// trainStateBytes returns the per-parameter bytes of a regime:
//   - mixed precision (FP16, BF16, FP8 recipes): 16-bit weights and grads,
//     fp32 master weights (4), an fp32 gradient copy for the step (4, as
//     DeepSpeed's estimator and autotuner count it: 18 = 2 + 4 + 4 + 8 for
//     ZeRO-2, 16 optimizer bytes in autotuner.py; memory-model.md §2.1, §2.5)
//     and the optimizer states in fp32. With Adam that is 2 + 2 + 16 = 20;
//     the ZeRO paper's 16 (K = 12) leaves out the fp32 gradient copy (§1).
//   - AMP (autocast): fp32 weights and grads (4 + 4) + fp32 optimizer states
//     (memory-model.md §3.2; precision.md §2.2).
//   - FP32: 4 + 4 + fp32 optimizer states.
//   - PureBF16: 2 + 2 + bf16 optimizer states (torchtune; memory-model.md §6.3).
//
// Optimizer states: AdamW two states; SGD one (momentum); 8-bit Adam two
// 1-byte states (bitsandbytes; memory-model.md §3.2: 2 B/param); an 8-bit
// one-state optimizer one 1-byte state; Adafactor
// factored second moments, a row and a column vector per weight matrix and a
// full vector for the rest, no first moment (HF Adafactor default beta1=None),
// as factoredFraction elements per parameter (transformers' Adafactor
// defaults; the HF single-GPU guide: "stores aggregated information (row and
// column-wise sums of the rolling averages)", perf_train_gpu_one.md).
func trainStateBytes(p Precision, o Optimizer, factoredFraction float64) stateBytes {
	var s stateBytes
	stateElem := 4.0
	switch p {
	case FP16, BF16, FP8:
		s = stateBytes{weight: 2, grad: 2, optimizer: 4 + 4, gathered: 2}
	case AMP:
		s = stateBytes{weight: 4, grad: 4, gathered: 2}
	case FP32:
		s = stateBytes{weight: 4, grad: 4, gathered: 4}
	case PureBF16:
		s = stateBytes{weight: 2, grad: 2, gathered: 2}
		stateElem = 2
	}
	switch o {
	case AdamW, AdamWForeach, AdamWFused, AdamWForLoop:
		s.optimizer += 2 * stateElem
	case SGD:
		s.optimizer += stateElem
	case Adam8bit:
		s.optimizer += 2
	case OneState8bit:
		s.optimizer++
	case Adafactor:
		s.optimizer += factoredFraction * stateElem
	}
	return s
}

// withFP32States gives a pure-bf16 regime's optimizer fp32 states when the
// optimizer keeps them whatever the parameters' dtype
// (Workload.FP32OptimizerStates); other regimes' states are fp32 already.
func withFP32States(sb stateBytes, r resolved, o Optimizer, factoredFraction float64) stateBytes {
	if r.FP32OptimizerStates && r.Precision == PureBF16 {
		sb.optimizer = trainStateBytes(FP32, o, factoredFraction).optimizer
	}
	return sb
}

// adapterStateBytes is the regime for LoRA adapters: PEFT keeps adapters in
// fp32 under mixed precision (memory-model.md §6.1: "With AdamW in fp32 that
// is 16 B per trainable param"); pure-bf16 recipes keep them in bf16.
func adapterStateBytes(p Precision, o Optimizer) stateBytes {
	if p == PureBF16 {
		return trainStateBytes(PureBF16, o, 1)
	}
	return trainStateBytes(FP32, o, 1)
}

// factoredFraction is Adafactor's state elements per parameter: rows + cols
// for each weight matrix, full size for embeddings' rows/cols likewise, and
// one element per vector parameter.
func factoredFraction(m *Model) float64 {
	h, H, kv, hd := float64(m.Hidden), float64(m.Heads), float64(m.KVHeads), float64(m.HeadDim)
	i := float64(m.Intermediate)
	attn := (h + H*hd) + 2*(h+kv*hd) + (H*hd + h)
	var mlp float64
	if m.Gated() {
		mlp = 3 * (h + i)
	} else {
		mlp = 2 * (h + i)
	}
	if e := m.MoE; e != nil {
		mlp = float64(e.Experts) * 3 * (h + float64(e.Intermediate))
	}
	vectors := float64(m.NormsPerLayer) * h
	elems := float64(m.Layers)*(attn+mlp+vectors) + 2*(float64(m.Vocab)+h)
	elems += float64(m.DecoderLayers) * (2*attn + mlp + vectors + h) // decoder: cross-attention and its norm
	return elems / float64(m.Params())
}

// loraParams counts adapter parameters: r·(d_in + d_out) per targeted matrix
// per layer (memory-model.md §6.1); gate/up/down on MoE layers are adapted in
// every routed and shared expert.
func loraParams(m *Model, rank int, targets []string) int64 {
	h, H, kv, hd := int64(m.Hidden), int64(m.Heads), int64(m.KVHeads), int64(m.HeadDim)
	r := int64(rank)
	dims := map[string][2]int64{
		"q": {h, H * hd}, "k": {h, kv * hd}, "v": {h, kv * hd}, "o": {H * hd, h},
	}
	var perAttn, perDense, perMoE int64
	for _, t := range targets {
		if d, ok := dims[t]; ok {
			perAttn += r * (d[0] + d[1])
			continue
		}
		if strings.HasPrefix(t, "shared_") {
			// The shared experts' projection alone, in MoE layers only.
			if e := m.MoE; e != nil {
				perMoE += int64(e.SharedExperts) * r * (h + int64(e.Intermediate))
				if e.SharedIntermediate > 0 {
					perMoE += r * (h + int64(e.SharedIntermediate))
				}
			}
			continue
		}
		perDense += r * (h + int64(m.Intermediate))
		if e := m.MoE; e != nil {
			experts := int64(e.Experts + e.SharedExperts)
			perMoE += experts * r * (h + int64(e.Intermediate))
			if e.SharedIntermediate > 0 {
				perMoE += r * (h + int64(e.SharedIntermediate))
			}
		}
	}
	dense := int64(m.Layers - m.moeLayers())
	// An encoder-decoder's decoder blocks hold two attention layers (PEFT
	// matches "q" and "v" in SelfAttention and EncDecAttention alike) and
	// one MLP.
	dec := int64(m.DecoderLayers)
	return int64(m.Layers)*perAttn + dense*perDense + int64(m.moeLayers())*perMoE + dec*(2*perAttn+perDense)
}

func estimateTraining(e *Estimate, m *Model, t Target, r resolved) error {
	P := m.Params()
	shard := int64(r.modelShard)
	n := float64(r.shardDegree)
	stage := r.ZeroStage
	largest := m.LargestLayerParams()

	var trainable int64 // trainable parameters per model-parallel rank
	var base float64    // frozen base weights per model-parallel rank (LoRA, QLoRA)
	var sb stateBytes
	gatheredElem := 0.0 // bytes per gathered parameter under ZeRO-3; 0: the regime's
	switch r.Kind {
	case Train:
		trainable = P / shard
		sb = withFP32States(trainStateBytes(r.Precision, r.Optimizer, factoredFraction(m)), r, r.Optimizer, factoredFraction(m))
	case LoRA, QLoRA:
		trainable = loraParams(m, r.LoRARank, r.targets) / shard
		sb = withFP32States(adapterStateBytes(r.Precision, r.Optimizer), r, r.Optimizer, 1)
		f := weightFormats["bf16"]
		if r.Precision == FP32 || r.Precision == AMP {
			f = weightFormats["fp32"]
		}
		if q := m.Quant; r.Kind == LoRA && q != nil && q.Method == "bitsandbytes" {
			// A checkpoint stored in bitsandbytes loads quantized whatever
			// the recipe asks (transformers get_hf_quantizer: a config.json
			// with a quantization_config is pre-quantized), so LoRA on it
			// keeps the base in the stored format, as QLoRA would.
			if cf, ok := checkpointFormat(q); ok {
				f = cf
				e.Notes = append(e.Notes, fmt.Sprintf("the checkpoint is stored in bitsandbytes %d-bit, which loads as such: the frozen base is sized in %s", q.Bits, f.name))
			}
		}
		if r.Kind == QLoRA {
			// QLoRA default: NF4 with double quantization (memory-model.md §6.1).
			name := "nf4-dq"
			if r.WeightQuant != "" {
				name = r.WeightQuant
			}
			var err error
			if f, err = lookupWeightFormat(name); err != nil {
				return err
			}
			if r.KbitFP32 {
				f.otherBytes = 4 // PEFT's fp32 upcast (Workload.KbitFP32)
			}
		}
		base = float64(weightBytes(m, f)) / float64(shard)
		gatheredElem = float64(weightBytes(m, f)) / float64(P) // the frozen base is gathered in its own format
		e.Notes = append(e.Notes, fmt.Sprintf("%s trainable adapter parameters (rank %d on %s)",
			thousands(loraParams(m, r.LoRARank, r.targets)), r.LoRARank, strings.Join(r.targets, ", ")))
	}
	tp := float64(trainable)
	weights, grads, optim := base+sb.weight*tp, sb.grad*tp, sb.optimizer*tp

	// ZeRO partitioning over the data-parallel degree (ZeRO paper §5,
	// memory-model.md §1): stage ≥ 1 optimizer states, ≥ 2 gradients,
	// 3 parameters; ZeRO-3 keeps the largest layer's gathered parameters and
	// gradients live (4·L in DeepSpeed's estimator, memory-model.md §2.2).
	if stage >= 1 {
		optim /= n
	}
	if stage >= 2 {
		grads /= n
	}
	live := sb.gathered * float64(largest) / float64(r.TensorParallel)
	if stage == 3 {
		weights = weights/n + live
		if r.Kind == Train {
			grads += live // a frozen base has no gradients to gather
		}
	}
	if r.Precision == AMP && stage < 3 && r.Kind == Train {
		// autocast caches 16-bit copies of the weights for the forward pass.
		weights += 2 * tp
	}
	if r.Sharding.IsFSDP() && stage < 3 && r.OffloadParam != NoOffload {
		// Our model offloads under FSDP only with full sharding, the
		// configuration the planner proposes; elsewhere the states are
		// counted on the GPU, an upper bound.
		e.Notes = append(e.Notes, "FSDP CPU offload is modelled only with full sharding; counted on the GPU")
	} else if r.OffloadOptimizer != NoOffload {
		if stage == 0 {
			e.Notes = append(e.Notes, "offload_optimizer needs ZeRO stage ≥ 1; ignored at stage 0")
		} else {
			optim = 0
			grads = 0 // gradient partitions go to host memory as they are reduced
			if stage == 3 && r.Kind == Train {
				grads = live // a frozen base has no gradients to gather
			}
		}
	}
	if r.OffloadParam != NoOffload && !(r.Sharding.IsFSDP() && stage < 3) {
		if stage == 3 {
			weights = live
		} else {
			e.Notes = append(e.Notes, "offload_param needs ZeRO-3; ignored")
		}
	}
	if r.OptimizerInBackward {
		grads = sb.grad * float64(min(largest, trainable))
	}
	if r.PagedOptimizer {
		// bitsandbytes allocates a paged optimizer's state in CUDA unified
		// memory (bitsandbytes/optim/optimizer.py get_state_buffer →
		// functional.py get_paged → cget_managed_ptr, for tensors of 1e5
		// elements or more) and prefetches it to the GPU before each
		// update (prefetch_state → prefetch_tensor), commit 06029dd6. The
		// state stays on the GPU until memory pressure pages it out, so a
		// peak without it would rest on that paging: it is counted like
		// the non-paged optimizer's.
		e.Notes = append(e.Notes, fmt.Sprintf("paged optimizer: %s of optimizer state counted on the GPU; under memory pressure paging can spill it to host at a speed cost",
			formatGiB(int64(optim))))
	}
	act, actHost := trainActivationsSplit(m, r)
	e.PerGPU = Breakdown{Weights: int64(weights), Gradients: int64(grads), OptimizerStates: int64(optim), Activations: act}

	e.addOverhead("CUDA context", contextBytes(r))
	// The optimizer step runs after backward has freed the activations (and
	// autocast's weight copies), so the peak is the larger of the two phases,
	// not their sum: the step's temporaries count only where they exceed what
	// forward and backward hold beyond the model states.
	if tmp := stepTemporaries(r, tp); tmp > 0 {
		fwdBwd := float64(act)
		if r.Precision == AMP && stage < 3 && r.Kind == Train {
			fwdBwd += 2 * tp
		}
		if extra := int64(tmp - fwdBwd); extra > 0 {
			e.addOverhead("optimizer step temporaries (foreach AdamW, beyond the freed activations)", extra)
		}
	}
	reservePct := int64(allocatorPercent)
	if r.Checkpointing {
		reservePct = allocatorPercentCheckpointed
	}
	e.addOverhead(fmt.Sprintf("allocator reserve (%d%% of activations)", reservePct), act*reservePct/100)
	e.Notes = append(e.Notes, reserveBandNote(r.Checkpointing))
	switch {
	case r.TensorParallel > 1:
		e.addOverhead("NCCL / tensor-parallel buffers", tpCommBytes)
	case r.world > 1:
		e.addOverhead("NCCL buffers", ncclBytes)
	}
	if r.DataParallel > 1 && stage == 0 && !r.Sharding.IsFSDP() {
		// PyTorch DDP copies gradients into all-reduce buckets unless
		// gradient_as_bucket_view=True ("the saved memory size will be equal
		// to the total gradients size", torch.nn.parallel.DistributedDataParallel docs).
		e.addOverhead("DDP gradient buckets", int64(sb.grad*tp))
	}
	if r.Sharding.IsFSDP() {
		if r.shardDegree > 1 && stage == 3 {
			// FSDP prefetches the next unit's parameters during backward
			// (BACKWARD_PRE, the default): a second gathered layer.
			e.addOverhead("FSDP prefetch of the next unit's parameters", int64(live))
		}
	} else {
		if r.DataParallel > 1 && stage >= 1 {
			e.addOverhead("ZeRO reduce bucket (reduce_bucket_size 5e8)", 2*min(zeroReduceBucketElems, trainable))
		}
		// ZeRO-3 gathers parameters on the GPU whenever they are partitioned
		// across ranks or offloaded to the host (one GPU included).
		if stage == 3 && (r.DataParallel > 1 || r.OffloadParam != NoOffload) {
			if gatheredElem == 0 {
				gatheredElem = sb.gathered
			}
			c, stated := zeroParamCacheOf(r.Workload)
			extra, by := c.gathered(m, P/shard, r.TensorParallel)
			if !stated {
				by += ", DeepSpeed's defaults"
			}
			e.addOverhead("ZeRO-3 gathered parameters ("+by+")", int64(gatheredElem*float64(extra)))
		}
	}
	if r.Kind == QLoRA {
		// bitsandbytes dequantizes a whole 4-bit matrix to 16 bits for each
		// matmul with more than one token (our reading of MatMul4Bit in
		// bitsandbytes/autograd/_functions.py): one largest layer of scratch.
		e.addOverhead("4-bit dequantization buffer", 2*m.LargestLinearParams()/int64(r.TensorParallel))
	}
	e.Host = hostBytes(e, m, r)
	if r.ActivationOffloading {
		e.Host += activationHostBytes(e, r, actHost)
	}
	return nil
}

// activationHostBytes is the node's pinned host memory for offloaded
// activations: each of the node's ranks offloads its own (torchtune's
// OffloadActivations allocates "torch.empty_like(activation,
// pin_memory=self.use_pin_memory, device="cpu")", use_pin_memory default
// True), and notes what the GPU figure keeps and what moved.
func activationHostBytes(e *Estimate, r resolved, perRank int64) int64 {
	if r.PipelineParallel > 1 {
		e.Notes = append(e.Notes, "activation offloading with pipeline parallelism is not modelled: activations counted on the GPU")
		return 0
	}
	ranks := int64(min(r.GPUsPerNode, r.world))
	kept := fmt.Sprintf("the last %d offloaded layer inputs in flight", offloadStash)
	if !r.Checkpointing {
		kept = "one layer's saved tensors in flight"
	}
	e.Notes = append(e.Notes, fmt.Sprintf("activation offloading: %s per rank moved to pinned host memory (× %d ranks on a node); the GPU keeps %s, the output projection's input and the loss",
		formatGiB(perRank), ranks, kept))
	return perRank * ranks
}

// stepTemporaries is the optimizer step's transient memory. torch's foreach
// AdamW (torch/optim/adam.py _multi_tensor_adam, which AdamW runs) computes
// "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)" for every
// parameter of a device and dtype group at once, then divides and adds eps in
// place: one temporary the size of exp_avg_sq (4 bytes per trainable
// parameter, 2 when the states are bf16). bench/gpu measured the step at 20
// bytes/param under AMP and 10 under pure bf16 against 16 and 8 with
// fused=True. The fused kernel (adamw-fused, DeepSpeed's FusedAdam under its
// master-weight recipes), 8-bit, paged, offloaded and in-backward steps
// update tensor by tensor without it.
func stepTemporaries(r resolved, trainable float64) float64 {
	if r.OffloadOptimizer != NoOffload || r.PagedOptimizer || r.OptimizerInBackward {
		return 0
	}
	foreach := r.Optimizer == AdamWForeach
	if r.Optimizer == AdamW {
		switch {
		case r.Kind == LoRA || r.Kind == QLoRA:
			foreach = true // PEFT adapters train under torch.optim
		case r.Precision == AMP || r.Precision == PureBF16 || r.Precision == FP32:
			foreach = true
		}
	}
	if !foreach {
		return 0
	}
	elem := 4.0
	if r.Precision == PureBF16 {
		elem = 2
	}
	if r.ZeroStage >= 1 {
		trainable /= float64(r.shardDegree)
	}
	return elem * trainable
}

// hostBytes is CPU RAM per node from DeepSpeed's estimators (memory-model.md §2.1-2.2).
func hostBytes(e *Estimate, m *Model, r resolved) int64 {
	if r.Sharding.IsFSDP() {
		return fsdpHostBytes(e, m, r)
	}
	if r.ZeroStage == 0 && r.OffloadOptimizer == NoOffload {
		return 0
	}
	gpn := r.GPUsPerNode
	nodes := (r.world + gpn - 1) / gpn
	P := m.Params()
	if r.Kind != Train {
		P = loraParams(m, r.LoRARank, r.targets)
		e.Notes = append(e.Notes, "host memory covers the adapters' states only")
	}
	offOpt, offParam := r.OffloadOptimizer != NoOffload, r.OffloadParam != NoOffload
	if offOpt && (r.OffloadOptimizer == NVMe || r.OffloadParam == NVMe) {
		e.Notes = append(e.Notes, "NVMe offload keeps states on disk; DeepSpeed has no NVMe host formula, so host memory is the CPU-offload figure (an upper bound)")
	}
	if r.ZeroStage == 3 {
		_, cpu := DeepSpeedZero3Estimate(P, m.LargestLayerParams(), gpn, nodes, offOpt, offParam, true, deepSpeedBufferFactor)
		return cpu
	}
	_, cpu := DeepSpeedZero2Estimate(P, gpn, nodes, offOpt, deepSpeedBufferFactor)
	return cpu
}

// fsdpHostBytes is the host memory per node of FSDP's CPU offload: each of
// the node's ranks keeps its shard of the parameters, gradients and
// optimizer states in CPU RAM (torch.distributed.fsdp CPUOffload; the
// optimizer step runs there), in the regime's bytes per parameter. Without
// offload FSDP keeps nothing on the host beyond loading (not modelled).
func fsdpHostBytes(e *Estimate, m *Model, r resolved) int64 {
	if r.OffloadParam == NoOffload || r.ZeroStage < 3 {
		return 0
	}
	P := m.Params()
	sb := withFP32States(trainStateBytes(r.Precision, r.Optimizer, factoredFraction(m)), r, r.Optimizer, factoredFraction(m))
	if r.Kind != Train {
		P = loraParams(m, r.LoRARank, r.targets)
		sb = withFP32States(adapterStateBytes(r.Precision, r.Optimizer), r, r.Optimizer, 1)
		e.Notes = append(e.Notes, "host memory covers the adapters' states only")
	}
	ranks := min(r.GPUsPerNode, r.world)
	perRank := float64(P) / float64(r.modelShard) / float64(r.shardDegree)
	return int64((sb.weight + sb.grad + sb.optimizer) * perRank * float64(ranks))
}

// reserveBandNote states how far PyTorch's caching allocator held memory
// beyond what tensors used in bench/gpu's training runs (H200, torch 2.11;
// bench/gpu/README.md finding 3, docs/validation.md "The allocator
// reserve"): reserved minus allocated as a share of allocated, by whether
// activation checkpointing recomputed layers, and the term the estimate
// counts for that class. With checkpointing, 20 % of activations predicted
// reserved memory best (TestCheckpointedReserveTermPredictsBest); without,
// the estimate keeps 5 % of activations, below the measured gap, because the
// class's allocated prediction already runs over (see the doc section).
func reserveBandNote(checkpointing bool) string {
	if checkpointing {
		return fmt.Sprintf("allocator reserve: with checkpointing, PyTorch held 0-42%% beyond allocated memory in bench/gpu (median 20%%); the estimate counts %d%% of activations", allocatorPercentCheckpointed)
	}
	return fmt.Sprintf("allocator reserve: PyTorch held 1-25%% beyond allocated memory in bench/gpu training runs without checkpointing (median 8%%); the estimate counts %d%% of activations", allocatorPercent)
}
