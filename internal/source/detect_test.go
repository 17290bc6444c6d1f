package source

import "testing"

// TestDetectNearMisses holds detection to keys only each framework has: a
// file that shares a few key names with a kind, among many of its own, is
// unknown; the kind's own files with a stray key stay that kind.
func TestDetectNearMisses(t *testing.T) {
	tests := []struct {
		name, text string
		want       Kind
	}{
		{"hydra model config sharing two deepspeed names", "name_or_path: m\ntokenizer_name_or_path: null\npolicy_dtype: bfloat16\n" +
			"reference_dtype: bfloat16\nmax_length: 1024\nbatch_size: 32\nactivation_checkpointing: true\ngradient_accumulation_steps: 1\n", KindUnknown},
		{"training script config with a deepspeed-style optimizer block", "optimizer:\n  lr: 0.001\nscheduler:\n  name: cosine\nepochs: 10\ndata_dir: /data\nlog_every: 50\n", KindUnknown},
		{"deepspeed config with one stray key", "{\"train_micro_batch_size_per_gpu\": 4, \"zero_optimization\": {\"stage\": 2}, \"my_note\": \"x\"}", KindDeepSpeed},
		{"deepspeed config with comment keys", "{\"_comment\": \"a\", \"_source\": \"b\", \"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3}}", KindDeepSpeed},
		{"hydra config with dtype and quantization is not vllm", "dtype: bfloat16\nquantization: null\nlearning_rate: 0.0001\n", KindUnknown},
		{"vllm config with only shared names and a model", "model: m\ndtype: bfloat16\n", KindVLLM},
		{"vllm config with its own options", "tensor_parallel_size: 2\ndtype: bfloat16\n", KindVLLM},
		{"vllm chart values with a model, quantization and a pod's resources", "model: org/m-AWQ\nquantization: awq\ndtype: half\nmaxModelLen: 8192\nreplicaCount: 1\n" +
			"resources:\n  limits:\n    nvidia.com/gpu: 2\n", KindHelm},
		{"vllm chart values with a model and a node selector", "model: org/m\ndtype: half\nnodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n", KindHelm},
		{"vllm config with a scalar resources-like option stays vllm", "model: org/m\ntensor_parallel_size: 2\n", KindVLLM},
		{"version and flags of another tool are not a device plugin", "version: 2\nflags:\n  verbose: true\nsharing:\n  enabled: true\n", KindUnknown},
		{"device plugin config", "version: v1\nflags:\n  migStrategy: single\n", KindMIG},
		{"device plugin sharing config", "version: v1\nsharing:\n  timeSlicing:\n    resources: []\n", KindMIG},
		{"production-stack values", "servingEngineSpec:\n  modelSpec:\n  - name: m\n    modelURL: org/m\n", KindHelm},
		{"another chart's servingEngineSpec without models", "servingEngineSpec:\n  enableEngine: false\n", KindUnknown},
		{"nim-llm chart values", "image:\n  repository: nvcr.io/nim/meta/llama-3.1-8b-instruct\n  tag: 1.3.3\nmodel:\n  ngcAPISecret: ngc-api\n" +
			"resources:\n  limits:\n    nvidia.com/gpu: 1\n", KindHelm},
		{"another image's chart values with a model map stay unknown", "image:\n  repository: ghcr.io/org/app\nmodel:\n  name: m\n" +
			"resources:\n  limits:\n    nvidia.com/gpu: 1\n", KindUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(tc.text), DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(f); got != tc.want {
				t.Errorf("Detect = %s, want %s", got, tc.want)
			}
		})
	}
}
