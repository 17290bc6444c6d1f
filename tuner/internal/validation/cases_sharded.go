package validation

import "github.com/gpulint/gpulint/tuner"

// Sources of the sharded, offloaded and data-parallel training rows.
const (
	hfFSDPBlog = "huggingface/blog pytorch-fsdp.md, \"Accelerate Large Model Training using PyTorch Fully Sharded Data Parallel\" (2022-04-29, blog commit 00e67ae4): 2× TITAN RTX 24GB, Accelerate with PyTorch FSDP (nightly before 1.12), run_clm_no_trainer.py on wikitext-2, the sample config's mixed_precision 'no': https://github.com/huggingface/blog/blob/main/pytorch-fsdp.md"
	hfDSBlog   = "huggingface/blog accelerate-deepspeed.md, \"Accelerate Large Model Training using DeepSpeed\" (2022, blog commit 29b1b07d): 2× TITAN RTX 24GB, 60GB RAM, Accelerate with DeepSpeed, mixed_precision fp16: https://github.com/huggingface/blog/blob/main/accelerate-deepspeed.md"
	dsZeroTut  = "deepspeedai/DeepSpeed docs/_tutorials/zero.md (commit 0101896a), \"Zero Redundancy Optimizer\": DeepSpeed's Megatron-LM v1.1.5 GPT-2 on V100-SXM3 32GB: https://www.deepspeed.ai/tutorials/zero/"
	dsOffTut   = "deepspeedai/DeepSpeed docs/_tutorials/zero-offload.md (commit 74213e28), \"ZeRO-Offload\": DeepSpeed's Megatron-LM v1.1.5 GPT-2 on one V100-SXM3 32GB: https://www.deepspeed.ai/tutorials/zero-offload/"
	titanBench = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (commit 31a17bfd; torch 1963fc8, torchao eab345c, torchtitan 9dec370, 2024-12): FSDP2 on H100 96GB HBM2e (Grand Teton), Memory(GiB) is torchtitan's logged max_reserved_gib (torchtitan/metrics.py): https://github.com/pytorch/torchtitan/blob/main/benchmarks/llama3_h100_202412_torchtitan.md"

	gpt2XL = "openai-community/gpt2-xl"
	gpt2L  = "openai-community/gpt2-large"
	titan  = "TITAN-RTX"
	// fsdpBlogSeq: the blog's commands pass --block_size 12, but they lose
	// their line-continuation backslashes after the batch-size flag; the
	// rows take the block size as printed, which only makes "fits" easier
	// to hold than a longer one would.
	fsdpBlogSeq  = "block size 12 as the blog's command prints it; its lines lack continuation backslashes, and a published maximum batch this small needs a longer block (at 12 the estimate's largest fitting batch is far above it, at 128 it is 11 for the FULL_SHARD row against the published 5), so only the fits verdict at the published batch is checked: the batch above it is not judged"
	megatronNote = "config.json restates the tutorial's Megatron flags (testdata README); fp16, sequence 1024 and Megatron's own (materialised) softmax attention are assumptions from DeepSpeedExamples' Megatron-LM-v1.1.5-ZeRO3 launch scripts, which the tutorial edits"
	titanStandIn = "the source's H100 96GB HBM2e is not in the GPU catalog; H100-NVL (94 GB) stands in for the fits verdict only (reserved memory does not depend on capacity). FSDP2's MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) keeps fp32 sharded parameters, gradients and AdamW states with bf16 gathered parameters, which is --precision amp at --zero 3 here"
)

// fsdpBlogWorkload is the FSDP blog's fp32 run of GPT-2 under FSDP at
// stage (2 SHARD_GRAD_OP, 3 FULL_SHARD) over dp GPUs, optionally with CPU
// offload.
func fsdpBlogWorkload(stage, dp, mb int, offload bool) tuner.Workload {
	w := tuner.Workload{Kind: tuner.Train, Precision: tuner.FP32, Optimizer: tuner.AdamWForLoop, Sharding: tuner.FSDP1, ZeroStage: stage,
		DataParallel: dp, MicroBatch: mb, SeqLen: 12, Attention: tuner.EagerAttention}
	if offload {
		w.OffloadParam, w.OffloadOptimizer = tuner.CPU, tuner.CPU
	}
	return w
}

// shardedTrainingCases: published fits/OOM outcomes and peaks of
// data-parallel, ZeRO, FSDP and offloaded training.
func shardedTrainingCases() []validationCase {
	fp32FSDP := func(dp, mb int, offload bool) tuner.Workload { return fsdpBlogWorkload(3, dp, mb, offload) }
	ddp := func(p tuner.Precision, mb int) tuner.Workload {
		return tuner.Workload{Kind: tuner.Train, Precision: p, Optimizer: tuner.AdamWForLoop, DataParallel: 2, MicroBatch: mb, SeqLen: 12, Attention: tuner.EagerAttention}
	}
	return []validationCase{
		// --- HF blog, PyTorch FSDP, Table 1 (GPT-2 Large on both GPUs;
		// the two min_num_params settings share a maximum, one row each
		// for the rest).
		{id: "fsdp-blog-gpt2l-ddp", source: hfFSDPBlog, setup: "GPT-2 Large (774M) CLM, DDP on 2 GPUs, fp32, AdamW, batch 7 (the published maximum)",
			model: gpt2L, gpu: titan, metric: metricDevice, reported: "fits", workload: ddp(tuner.FP32, 7), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2l-ddp-fp16", source: hfFSDPBlog, setup: "GPT-2 Large (774M) CLM, DDP + fp16 (autocast) on 2 GPUs, AdamW, batch 7 (the published maximum)",
			model: gpt2L, gpu: titan, metric: metricDevice, reported: "fits", workload: ddp(tuner.AMP, 7), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2l-shard-grad-op", source: hfFSDPBlog, setup: "GPT-2 Large (774M) CLM, FSDP SHARD_GRAD_OP on 2 GPUs, fp32, batch 11 (the published maximum)",
			model: gpt2L, gpu: titan, metric: metricDevice, reported: "fits", workload: fsdpBlogWorkload(2, 2, 11, false), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2l-full-shard", source: hfFSDPBlog, setup: "GPT-2 Large (774M) CLM, FSDP FULL_SHARD (min_num_params 2K) on 2 GPUs, fp32, batch 15 (the published maximum)",
			model: gpt2L, gpu: titan, metric: metricDevice, reported: "fits", workload: fp32FSDP(2, 15, false), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2l-offload", source: hfFSDPBlog, setup: "GPT-2 Large (774M) CLM, FSDP FULL_SHARD (min_num_params 2K) + CPU offload on 2 GPUs, fp32, batch 22 (the published maximum)",
			model: gpt2L, gpu: titan, metric: metricDevice, reported: "fits", workload: fp32FSDP(2, 22, true), note: fsdpBlogSeq},

		// --- HF blog, PyTorch FSDP, Table 2 (GPT-2 XL). torch.optim.AdamW
		// before torch 2.0 stepped parameter by parameter (foreach off).
		{id: "fsdp-blog-gpt2xl-ddp-1gpu", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, DDP on 1 GPU, fp32, AdamW, batch 1",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "oom",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP32, Optimizer: tuner.AdamWForLoop, MicroBatch: 1, SeqLen: 12, Attention: tuner.EagerAttention},
			note:     "the blog quotes the OOM: 22.27 GiB already allocated of 23.65 GiB; " + fsdpBlogSeq},
		{id: "fsdp-blog-gpt2xl-ddp-2gpu", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, DDP on 2 GPUs, fp32, AdamW, batch 1",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "oom",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP32, Optimizer: tuner.AdamWForLoop, DataParallel: 2, MicroBatch: 1, SeqLen: 12, Attention: tuner.EagerAttention},
			note:     fsdpBlogSeq},
		{id: "fsdp-blog-gpt2xl-ddp-fp16", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, DDP + fp16 (autocast) on 1 GPU, AdamW, batch 1",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "oom",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Optimizer: tuner.AdamWForLoop, MicroBatch: 1, SeqLen: 12, Attention: tuner.EagerAttention},
			note:     fsdpBlogSeq},
		{id: "fsdp-blog-gpt2xl-full-shard", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, FSDP FULL_SHARD (min_num_params 2K) on 2 GPUs, fp32, batch 5 (the published maximum)",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "fits",
			workload: fp32FSDP(2, 5, false), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2xl-offload-1gpu", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, FSDP FULL_SHARD + CPU offload on 1 GPU, fp32, batch 10 (the published maximum)",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "fits",
			workload: fp32FSDP(1, 10, true), note: fsdpBlogSeq},
		{id: "fsdp-blog-gpt2xl-offload-2gpu", source: hfFSDPBlog, setup: "GPT-2 XL (1.5B) CLM, FSDP FULL_SHARD + CPU offload on 2 GPUs, fp32, batch 14 (the published maximum)",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "fits",
			workload: fp32FSDP(2, 14, true), note: fsdpBlogSeq},

		// --- HF blog, Accelerate + DeepSpeed, Table 3 (GPT-2 XL from its
		// config, block size 128).
		{id: "ds-blog-gpt2xl-ddp-fp16", source: hfDSBlog, setup: "GPT-2 XL (1.5B) CLM, DDP on 2 GPUs, fp16 (autocast), AdamW, batch 1, block 128",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "oom",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Optimizer: tuner.AdamWForLoop, DataParallel: 2, MicroBatch: 1, SeqLen: 128, Attention: tuner.EagerAttention},
			note:     "\"DDP will result in OOM error even with batch size 1\"; torch.optim.AdamW of 2022 (foreach off) is assumed, the smaller of its kernels"},
		{id: "ds-blog-gpt2xl-zero3-offload", source: hfDSBlog, setup: "GPT-2 XL (1.5B) CLM, ZeRO-3 with optimizer and parameters offloaded to CPU, 2 GPUs, fp16, batch 16 (the table's \"Batch Size Max\"), block 128, 60GB RAM",
			model: gpt2XL, gpu: titan, metric: metricDevice, reported: "fits", hostMemory: int64(60e9),
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP16, ZeroStage: 3, OffloadOptimizer: tuner.CPU, OffloadParam: tuner.CPU, DataParallel: 2, MicroBatch: 16, SeqLen: 128, Attention: tuner.EagerAttention},
			note:     "zero3_offload_config_accelerate.json with zero3_init_flag true; host memory is DeepSpeed's zero.Init estimator figure for the node, judged against the stated 60GB. Batch 16 is the batch that ran, not a searched maximum: the blog states a maximum only for DDP (\"the maximum batch size that DDP supports without OOM error is 8\"), every DeepSpeed entry of its \"Batch Size Max\" columns equals the printed command's --per_device_train_batch_size, and the text says \"we can train with a batch size of 16\"; so larger batches are not judged (the estimate fits up to 33)"},

		// --- DeepSpeed ZeRO tutorial: Megatron GPT-2 1.5B on 8 V100s,
		// batch 1 per device; 10B with activation checkpointing on 32.
		{id: "ds-tut-gpt2-1.5b-no-zero", source: dsZeroTut, setup: "Megatron GPT-2 1.5B (48 layers, hidden 1600, 16 heads), 8 GPUs, batch 1, no ZeRO",
			model: "megatron-gpt2-1.5b", gpu: "V100-32GB", metric: metricDevice, reported: "oom",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP16, DataParallel: 8, MicroBatch: 1, SeqLen: 1024, Checkpointing: true, Attention: tuner.EagerAttention},
			note:     "\"Training this model without ZeRO fails with an out-of-memory (OOM) error\"; activation checkpointing, which the tutorial does not state for this run, is assumed on, the smaller-memory choice; " + megatronNote},
		{id: "ds-tut-gpt2-1.5b-zero1", source: dsZeroTut, setup: "Megatron GPT-2 1.5B, 8 GPUs, batch 1, ZeRO-1 (reduce_bucket_size 5e8)",
			model: "megatron-gpt2-1.5b", gpu: "V100-32GB", metric: metricDevice, reported: "fits",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP16, ZeroStage: 1, DataParallel: 8, MicroBatch: 1, SeqLen: 1024, Attention: tuner.EagerAttention},
			note:     "\"the model can now train smoothly on 8 GPUs\"; no activation checkpointing is assumed, the larger-memory choice; " + megatronNote},
		{id: "ds-tut-gpt2-10b-zero2", source: dsZeroTut, setup: "Megatron GPT-2 10B (50 layers, hidden 4096, 32 heads), 32 GPUs, batch 1, checkpointing, ZeRO-2",
			model: "megatron-gpt2-10b", gpu: "V100-32GB", metric: metricDevice, reported: "fits",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP16, ZeroStage: 2, DataParallel: 32, MicroBatch: 1, SeqLen: 1024, Checkpointing: true, Attention: tuner.EagerAttention},
			note:     megatronNote},
		{id: "ds-tut-gpt2-10b-offload", source: dsOffTut, setup: "Megatron GPT-2 10B, 1 GPU, batch 10, checkpointing, ZeRO-2 with the optimizer offloaded to CPU",
			model: "megatron-gpt2-10b", gpu: "V100-32GB", metric: metricDevice, reported: "fits",
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP16, ZeroStage: 2, OffloadOptimizer: tuner.CPU, MicroBatch: 10, SeqLen: 1024, Checkpointing: true, Attention: tuner.EagerAttention},
			note:     megatronNote},

		// --- torchtitan FSDP2 benchmark, Table 2, the row without context
		// parallelism; torchtitan's loss upcasts the logits to fp32
		// (cross_entropy_loss: pred.flatten(0, 1).float()).
		{id: "titan-llama31-8b-fsdp8-32k", source: titanBench, setup: "Llama 3.1 8B, FSDP2 over 8 GPUs, local batch 1, seq 32768, full activation checkpointing, torch.compile + Float8",
			model: "meta-llama/Llama-3.1-8B", gpu: "H100-NVL", metric: metricReserved, measured: gibf(83.9), unit: "GiB", reported: "fits", maxErr: 15,
			workload: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Sharding: tuner.FSDP2, ZeroStage: 3, DataParallel: 8, MicroBatch: 1, SeqLen: 32768, Checkpointing: true},
			note:     titanStandIn + "; Float8 linears (torchao) are not modelled: under full checkpointing they change only the recomputed layer"},
	}
}
