package normalize

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/tuner"
)

func TestWorkloadTuner(t *testing.T) {
	tests := []struct {
		name string
		w    *Workload
		gpus int
		want tuner.Workload
		ok   bool
	}{
		{
			name: "DeepSpeed ZeRO-3 with optimizer offload",
			w: DeepSpeed(map[string]any{"train_micro_batch_size_per_gpu": int64(4), "bf16": map[string]any{"enabled": true},
				"zero_optimization": map[string]any{"stage": int64(3), "offload_optimizer": map[string]any{"device": "cpu"}}}),
			gpus: 8,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.BF16, ZeroStage: 3, OffloadOptimizer: tuner.CPU, OffloadParam: tuner.NoOffload,
				DataParallel: 8, MicroBatch: 4},
			ok: true,
		},
		{
			// 1e8 as JSON decodes it (float64); the bare field name is
			// DeepSpeedZeroConfig's too; "auto" leaves the default.
			name: "DeepSpeed ZeRO-3 states its gathered-parameter settings",
			w: DeepSpeed(map[string]any{"bf16": map[string]any{"enabled": true},
				"zero_optimization": map[string]any{"stage": int64(3), "stage3_max_live_parameters": 1e8,
					"prefetch_bucket_size": int64(0), "stage3_max_reuse_distance": "auto"}}),
			gpus: 8,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.BF16, ZeroStage: 3, OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload,
				ZeRO3MaxLiveParams: ptr(int64(100_000_000)), ZeRO3PrefetchBucket: ptr(int64(0)), DataParallel: 8, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate without DeepSpeed or FSDP runs AMP",
			w:    Accelerate(map[string]any{"distributed_type": "MULTI_GPU", "mixed_precision": "bf16", "num_processes": int64(2)}),
			gpus: 2,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload,
				DataParallel: 2, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP2 reshard_after_forward true is full sharding",
			w: Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "bf16", "num_processes": int64(8),
				"fsdp_config": map[string]any{"fsdp_version": int64(2), "fsdp_reshard_after_forward": true}}),
			gpus: 8,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, ZeroStage: 3, Sharding: tuner.FSDP2,
				OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload, DataParallel: 8, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP2 reshard_after_forward false shards gradients and optimizer states",
			w: Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "bf16",
				"fsdp_config": map[string]any{"fsdp_version": "2", "fsdp_reshard_after_forward": "false"}}),
			gpus: 4,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, ZeroStage: 2, Sharding: tuner.FSDP2,
				OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload, DataParallel: 4, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP1 without fsdp_config takes the plugin's FULL_SHARD default",
			w:    Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "bf16"}),
			gpus: 2,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, ZeroStage: 3, Sharding: tuner.FSDP1,
				OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload, DataParallel: 2, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP1 strategy by index with offload is full sharding on the CPU",
			w: Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "no",
				"fsdp_config": map[string]any{"fsdp_sharding_strategy": int64(1), "fsdp_offload_params": true}}),
			gpus: 2,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.FP32, ZeroStage: 3, Sharding: tuner.FSDP1,
				OffloadOptimizer: tuner.CPU, OffloadParam: tuner.CPU, DataParallel: 2, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP1 reshard_after_forward names hybrid sharding within a node",
			w: Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "bf16",
				"fsdp_config": map[string]any{"fsdp_reshard_after_forward": "HYBRID_SHARD_ZERO2"}}),
			gpus: 16,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, ZeroStage: 2, Sharding: tuner.FSDP1, HybridShard: true,
				OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload, DataParallel: 16, MicroBatch: 1},
			ok: true,
		},
		{
			name: "Accelerate FSDP1 NO_SHARD replicates like DDP",
			w: Accelerate(map[string]any{"distributed_type": "FSDP", "mixed_precision": "bf16",
				"fsdp_config": map[string]any{"fsdp_sharding_strategy": "NO_SHARD"}}),
			gpus: 2,
			want: tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, ZeroStage: 0, Sharding: tuner.FSDP1,
				OffloadOptimizer: tuner.NoOffload, OffloadParam: tuner.NoOffload, DataParallel: 2, MicroBatch: 1},
			ok: true,
		},
		{
			name: "vLLM names its quantization kernels by the weight format",
			w: VLLM(map[string]any{"model": "m", "dtype": "bfloat16", "tensor-parallel-size": int64(2), "quantization": "awq_marlin",
				"gpu-memory-utilization": 0.85, "max-model-len": int64(8192)}),
			want: tuner.Workload{Kind: tuner.Serve, Precision: tuner.BF16, TensorParallel: 2, PipelineParallel: 1, WeightQuant: "awq",
				GPUMemoryUtilization: 0.85, MaxModelLen: 8192},
			ok: true,
		},
		{
			name: "TGI's bitsandbytes-nf4 quantizes the weights to 4 bits as it loads",
			w:    TGI(map[string]any{"model": "m", "tensor-parallel-size": int64(2), "quantization": "nf4-dq", "gpu-memory-utilization": 1.0}),
			want: tuner.Workload{Kind: tuner.Serve, TensorParallel: 2, PipelineParallel: 1, WeightQuant: "nf4-dq",
				GPUMemoryUtilization: 1.0},
			ok: true,
		},
		{
			name: "TGI's bitsandbytes and eetq hold int8 weights",
			w:    TGI(map[string]any{"model": "m", "quantization": "int8"}),
			want: tuner.Workload{Kind: tuner.Serve, TensorParallel: 1, PipelineParallel: 1, WeightQuant: "int8"},
			ok:   true,
		},
		{
			name: "a fine-tuning recipe is internal/recipe's to map",
			w:    Finetune(map[string]any{"base_model": "m", "micro_batch_size": int64(1), "bf16": true}),
			ok:   false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.w.Tuner(tc.gpus)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Tuner (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
