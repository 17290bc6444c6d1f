package normalize

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// schemaCase is a document (YAML; JSON is YAML too) and the violations it
// should produce, each as `path [severity] message` (see renderPath).
type schemaCase struct {
	name   string
	schema string
	doc    string
	want   []string
}

func parseYAML(t testing.TB, src string) any {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("bad test document: %v", err)
	}
	return doc
}

func renderViolations(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s [%s] %s", renderPath(v.Path), v.Severity, v.Message))
	}
	return out
}

func runSchemaCases(t *testing.T, cases []schemaCase) {
	t.Helper()
	v := newTestValidator(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Validate(tc.schema, parseYAML(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, renderViolations(got)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateDeepSpeed(t *testing.T) {
	runSchemaCases(t, deepSpeedCases())
}

func deepSpeedCases() []schemaCase {
	return []schemaCase{
		{name: "HF template with auto values is clean", schema: "deepspeed", doc: `{
			"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
			"gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
			"fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16},
			"bf16": {"enabled": "auto"},
			"optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
			"scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto"}},
			"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
				"stage3_param_persistence_threshold": "auto", "stage3_gather_16bit_weights_on_model_save": true,
				"offload_optimizer": {"device": "cpu", "pin_memory": true}, "sub_group_size": 1e9},
			"_comment": "keys starting with _ are comments"}`},
		{name: "stage out of range", schema: "deepspeed", doc: `{"zero_optimization": {"stage": 4}}`,
			want: []string{`zero_optimization.stage [error] stage is 4; allowed 0..3 or "auto"`}},
		{name: "unknown key in a closed block with did-you-mean", schema: "deepspeed",
			doc:  `{"zero_optimization": {"stage": 3, "stage3_prefetch_bucket": 5e7}}`,
			want: []string{`zero_optimization.stage3_prefetch_bucket [error] unknown key "stage3_prefetch_bucket" in zero_optimization (did you mean "stage3_prefetch_bucket_size"?); DeepSpeed rejects unknown keys in zero_optimization (pydantic extra=forbid)`}},
		{name: "unknown key in fp16", schema: "deepspeed", doc: `{"fp16": {"enabled": true, "loss_scale_windows": 500}}`,
			want: []string{`fp16.loss_scale_windows [error] unknown key "loss_scale_windows" in fp16 (did you mean "loss_scale_window"?); DeepSpeed rejects unknown keys in fp16 (pydantic extra=forbid)`}},
		{name: "unknown top-level key is a warning", schema: "deepspeed", doc: `{"train_batch_size": 32, "cuda_visible_devices": "0,1"}`,
			want: []string{`cuda_visible_devices [warning] unknown top-level key "cuda_visible_devices"; DeepSpeed does not read unknown top-level keys and ignores them`}},
		{name: "top-level typo gets a suggestion", schema: "deepspeed", doc: `{"train_micro_batch_size_per_gpus": 4}`,
			want: []string{`train_micro_batch_size_per_gpus [warning] unknown top-level key "train_micro_batch_size_per_gpus" (did you mean "train_micro_batch_size_per_gpu"?); DeepSpeed does not read unknown top-level keys and ignores them`}},
		{name: "auto that nothing resolves inside a pydantic block is dropped", schema: "deepspeed",
			doc: `{"fp16": {"enabled": true, "hysteresis": "auto"}, "zero_optimization": {"prefetch_bucket_size": "auto"}}`,
			want: []string{
				`fp16.hysteresis [warning] hysteresis is "auto", which neither the HF Trainer nor Accelerate fills in here; DeepSpeed drops "auto" inside fp16 and uses its default (allowed an integer)`,
				`zero_optimization.prefetch_bucket_size [warning] prefetch_bucket_size is "auto", which neither the HF Trainer nor Accelerate fills in here; DeepSpeed drops "auto" inside zero_optimization and uses its default (allowed an integer >= 0)`,
			}},
		{name: "auto that nothing resolves at top level", schema: "deepspeed", doc: `{"steps_per_print": "auto"}`,
			want: []string{`steps_per_print [error] steps_per_print is "auto", which neither the HF Trainer nor Accelerate fills in; allowed an integer >= 0 or null`}},
		{name: "batch sizes must be positive integers", schema: "deepspeed",
			doc: `{"train_batch_size": 0, "train_micro_batch_size_per_gpu": 2.5, "gradient_accumulation_steps": "4"}`,
			want: []string{
				`gradient_accumulation_steps [error] gradient_accumulation_steps is "4"; allowed an integer > 0 or "auto"`,
				`train_batch_size [error] train_batch_size is 0; allowed an integer > 0 or "auto"`,
				`train_micro_batch_size_per_gpu [error] train_micro_batch_size_per_gpu is 2.5; allowed an integer > 0 or "auto"`,
			}},
		{name: "scientific notation counts as an integer", schema: "deepspeed",
			doc: `{"zero_optimization": {"stage": 2, "allgather_bucket_size": 5e8, "reduce_bucket_size": 2e8}}`},
		{name: "ranges: loss_scale, ratio", schema: "deepspeed",
			doc: `{"fp16": {"enabled": true, "loss_scale": -1}, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 1.5}}}`,
			want: []string{
				`fp16.loss_scale [error] loss_scale is -1; allowed a number >= 0 (0 = dynamic loss scaling)`,
				`zero_optimization.offload_optimizer.ratio [error] ratio is 1.5; allowed a number >= 0 and <= 1`,
			}},
		{name: "offload device enum with did-you-mean", schema: "deepspeed",
			doc:  `{"zero_optimization": {"stage": 3, "offload_param": {"device": "CPU"}}}`,
			want: []string{`zero_optimization.offload_param.device [error] device is "CPU"; allowed one of "none", "cpu", "nvme", "auto" (did you mean "cpu"?)`}},
		{name: "deprecated aliases are info", schema: "deepspeed",
			doc: `{"bfloat16": {"enabled": true}, "zero_optimization": {"stage": 2, "cpu_offload": true, "stage3_gather_fp16_weights_on_model_save": false}}`,
			want: []string{
				`bfloat16 [info] bfloat16 is deprecated: use bf16`,
				`zero_optimization.cpu_offload [info] cpu_offload is deprecated: use offload_optimizer: {device: cpu}`,
				`zero_optimization.stage3_gather_fp16_weights_on_model_save [info] stage3_gather_fp16_weights_on_model_save is deprecated: use stage3_gather_16bit_weights_on_model_save`,
			}},
		{name: "bool zero_optimization is the deprecated form", schema: "deepspeed", doc: `{"zero_optimization": true}`,
			want: []string{`zero_optimization [info] zero_optimization is deprecated: use a zero_optimization block with "stage"`}},
		{name: "zero_optimization of the wrong type", schema: "deepspeed", doc: `{"zero_optimization": "yes"}`,
			want: []string{`zero_optimization [error] zero_optimization is "yes"; allowed true or false or a mapping`}},
		{name: "aliases without the stage3_ prefix", schema: "deepspeed",
			doc: `{"zero_optimization": {"stage": 3, "prefetch_bucket_size": 5e7, "param_persistence_threshold": 1e5, "max_live_parameters": 1e9, "gather_16bit_weights_on_model_save": true}}`},
		{name: "optimizer names: any case for DeepSpeed's own, exact torch names, unknown is a warning", schema: "deepspeed",
			doc:  `{"optimizer": {"type": "OnebitAdam"}, "scheduler": {"type": "WarmupLr"}}`,
			want: []string{`scheduler.type [warning] type is "WarmupLr"; allowed one of "WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR" (did you mean "WarmupLR"?)`}},
		{name: "unknown optimizer", schema: "deepspeed", doc: `{"optimizer": {"type": "AdamX", "params": {"lr": 1e-4}}}`,
			want: []string{`optimizer.type [warning] type is "AdamX"; allowed a DeepSpeed optimizer (Adam, AdamW, Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Adagrad, Lion, Muon, MuAdam, MuAdamW, MuSGD; any case) or a torch.optim class name (did you mean "Adamax"?)`}},
		{name: "dtype spellings", schema: "deepspeed",
			doc:  `{"torch_autocast": {"enabled": true, "dtype": "torch.bfloat16"}, "communication_data_type": "bfloat16"}`,
			want: []string{`communication_data_type [error] communication_data_type is "bfloat16"; allowed one of "fp32", "fp16", "bf16", null`}},
		{name: "document is not a mapping", schema: "deepspeed", doc: `[1, 2]`,
			want: []string{`(root) [error] document is a list; allowed a mapping`}},
	}
}

func TestValidateAccelerate(t *testing.T) {
	runSchemaCases(t, accelerateCases())
}

func accelerateCases() []schemaCase {
	return []schemaCase{
		{name: "deepspeed plugin config is clean", schema: "accelerate", doc: `
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_multinode_launcher: standard
  gradient_accumulation_steps: 1
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: true
  zero3_save_16bit_model: true
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
machine_rank: 0
main_process_ip: null
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 8
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
`},
		{name: "YAML 1.1 NO read as false", schema: "accelerate", doc: `{distributed_type: false, mixed_precision: false}`,
			want: []string{
				`distributed_type [error] distributed_type is false because PyYAML (YAML 1.1) reads an unquoted NO as false; quote it: distributed_type: "NO"`,
				`mixed_precision [error] mixed_precision is false because PyYAML (YAML 1.1) reads an unquoted no as false; quote it: mixed_precision: "no"`,
			}},
		{name: "distributed_type is required", schema: "accelerate", doc: `{num_processes: 2}`,
			want: []string{`(root) [error] missing required key "distributed_type"`}},
		{name: "unknown top-level keys are errors", schema: "accelerate",
			doc: `{distributed_type: MULTI_GPU, num_process: 2, invalid_key: invalid_value}`,
			want: []string{
				`invalid_key [error] unknown top-level key "invalid_key"; Accelerate rejects a config file with unknown keys`,
				`num_process [error] unknown top-level key "num_process" (did you mean "num_processes"?); Accelerate rejects a config file with unknown keys`,
			}},
		{name: "enums", schema: "accelerate", doc: `{distributed_type: MULTI_GPUS, mixed_precision: bf17, num_processes: 0}`,
			want: []string{
				`distributed_type [error] distributed_type is "MULTI_GPUS"; allowed one of "NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "MEGATRON_LM" (did you mean "MULTI_GPU"?)`,
				`mixed_precision [error] mixed_precision is "bf17"; allowed one of "no", "fp16", "bf16", "fp8", null (did you mean "bf16"?)`,
				`num_processes [error] num_processes is 0; allowed an integer >= 1, -1 or null`,
			}},
		{name: "num_processes -1 is allowed", schema: "accelerate", doc: `{distributed_type: MULTI_GPU, num_processes: -1}`},
		// accelerate launch takes null counts from its command line (or
		// fills them in without a config file): cluster templates rely on it.
		{name: "null process and machine counts are allowed", schema: "accelerate",
			doc: `{distributed_type: MULTI_GPU, num_machines: null, num_processes: null, machine_rank: null}`},
		{name: "keys inside fsdp_config are warnings, with or without the fsdp_ prefix", schema: "accelerate", doc: `
distributed_type: FSDP
fsdp_config:
  fsdp_version: 2
  reshard_after_forward: true
  fsdp_offload_param: true
  fsdp_state_dict_type: SHARDED_STATE_DICT
`,
			want: []string{`fsdp_config.fsdp_offload_param [warning] unknown key "fsdp_offload_param" in fsdp_config (did you mean "fsdp_offload_params"?); Accelerate does not check keys in this block and ignores ones it does not know`}},
		{name: "values inside blocks are still checked", schema: "accelerate",
			doc: `{distributed_type: DEEPSPEED, deepspeed_config: {zero_stage: 4, offload_optimizer_device: gpu}}`,
			want: []string{
				`deepspeed_config.offload_optimizer_device [error] offload_optimizer_device is "gpu"; allowed one of "none", "cpu", "nvme" (did you mean "cpu"?)`,
				`deepspeed_config.zero_stage [error] zero_stage is 4; allowed 0..3`,
			}},
		{name: "sagemaker config has its own keys", schema: "accelerate", doc: `
compute_environment: AMAZON_SAGEMAKER
distributed_type: DATA_PARALLEL
ec2_instance_type: ml.p3.16xlarge
iam_role_name: MY_ROLE
mixed_precision: fp16
num_machines: 1
region: us-east-1
`},
		{name: "sagemaker config needs its required keys", schema: "accelerate",
			doc:  `{compute_environment: AMAZON_SAGEMAKER, distributed_type: "NO", ec2_instance_type: x}`,
			want: []string{`(root) [error] missing required key "iam_role_name" (required when compute_environment is "AMAZON_SAGEMAKER")`}},
		{name: "unknown compute environment", schema: "accelerate", doc: `{compute_environment: AZURE, distributed_type: "NO"}`,
			want: []string{`compute_environment [error] compute_environment is "AZURE"; allowed one of "LOCAL_MACHINE", "AMAZON_SAGEMAKER"`}},
		{name: "legacy keys are accepted with a note", schema: "accelerate", doc: `{distributed_type: "NO", dynamo_backend: "NO", fp16: true}`,
			want: []string{
				`dynamo_backend [info] dynamo_backend is deprecated: use dynamo_config.dynamo_backend`,
				`fp16 [info] fp16 is deprecated: use mixed_precision: fp16`,
			}},
	}
}

func TestValidateVLLM(t *testing.T) {
	runSchemaCases(t, vllmCases())
}

func vllmCases() []schemaCase {
	return []schemaCase{
		{name: "recipe config is clean", schema: "vllm", doc: `
kv-cache-dtype: fp8
compilation-config: '{"pass_config":{"fuse_allreduce_rms":true}}'
async-scheduling: true
no-enable-prefix-caching: true
max-num-batched-tokens: 8192
`},
		{name: "numeric strings are accepted", schema: "vllm",
			doc: `{gpu-memory-utilization: "0.8", tensor-parallel-size: "2", max-model-len: "32k", max-num-seqs: "256", port: "8000"}`},
		{name: "max-model-len forms", schema: "vllm", doc: `{max-model-len: -1}`},
		{name: "max-model-len auto", schema: "vllm", doc: `{max-model-len: auto, max-num-batched-tokens: 8k}`},
		{name: "ranges", schema: "vllm",
			doc: `{gpu-memory-utilization: 1.5, tensor-parallel-size: 0, max-model-len: lots, block-size: "16x"}`,
			want: []string{
				`block-size [error] block-size is "16x"; allowed an integer > 0 or a string matching ^\+?0*[1-9][0-9]*$`,
				`gpu-memory-utilization [error] gpu-memory-utilization is 1.5; allowed a number in (0, 1]`,
				`max-model-len [error] max-model-len is "lots"; allowed a positive integer, a size such as 32k, "auto" or -1`,
				`tensor-parallel-size [error] tensor-parallel-size is 0; allowed an integer > 0 or a string matching ^\+?0*[1-9][0-9]*$`,
			}},
		{name: "quoted utilization out of range", schema: "vllm", doc: `{gpu-memory-utilization: "1.2"}`,
			want: []string{`gpu-memory-utilization [error] gpu-memory-utilization is "1.2"; allowed a number in (0, 1]`}},
		{name: "dtype is strict, kv-cache-dtype and quantization lists are warnings", schema: "vllm",
			doc: `{dtype: bf16, kv-cache-dtype: fp8_e4m4, quantization: awq_marlinn}`,
			want: []string{
				`dtype [error] dtype is "bf16"; allowed one of "auto", "half", "float16", "bfloat16", "float", "float32"`,
				`kv-cache-dtype [warning] kv-cache-dtype is "fp8_e4m4"; allowed one of "auto", "fp8", "fp8_e5m2", "fp8_e4m3", "bfloat16", "float16", "fp8_inc", "fp8_ds_mla", "nvfp4", "nvfp4_4over6", "nvfp4_ds_mla", "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc" (did you mean "fp8_e4m3"?)`,
				`quantization [warning] quantization is "awq_marlinn"; allowed one of "aqlm", "awq", "awq_marlin", "deepspeedfp", "tpu_int8", "fp8", "ptpc_fp8", "fbgemm_fp8", "deepgemm_fp8", "modelopt", "modelopt_fp4", "marlin", "bitblas", "gguf", "gptq", "gptq_marlin", "gptq_marlin_24", "gptq_bitblas", "compressed-tensors", "bitsandbytes", "qqq", "hqq", "experts_int8", "neuron_quant", "ipex", "quark", "moe_wna16", "torchao", "auto-round", "mxfp4", "inc", "fp_quant", "petit_nvfp4", "rtn", null (did you mean "awq_marlin"?)`,
			}},
		{name: "unknown option with did-you-mean", schema: "vllm", doc: `{tensor-paralel-size: 2, enable-prefix-cache: true}`,
			want: []string{
				`enable-prefix-cache [warning] unknown top-level key "enable-prefix-cache" (did you mean "enable-prefix-caching"?); vLLM exits with "unrecognized arguments" on options it does not know (the list here may lag behind new releases)`,
				`tensor-paralel-size [warning] unknown top-level key "tensor-paralel-size" (did you mean "tensor-parallel-size"?); vLLM exits with "unrecognized arguments" on options it does not know (the list here may lag behind new releases)`,
			}},
		{name: "removed options name the version", schema: "vllm",
			doc: `{swap-space: 4, max-seq-len-to-capture: 8192, disable-log-requests: true}`,
			want: []string{
				`disable-log-requests [warning] disable-log-requests was removed in vLLM v0.12 (#29402); requests are no longer logged by default (enable-log-requests turns logging on)`,
				`max-seq-len-to-capture [warning] max-seq-len-to-capture was removed in vLLM v0.11 (#25543); use max-cudagraph-capture-size on newer versions`,
				`swap-space [warning] swap-space was removed in vLLM v0.18 (#36216; unused since the V1 engine); newer versions exit with "unrecognized arguments"`,
			}},
		{name: "booleans are booleans", schema: "vllm", doc: `{enforce-eager: "yes", trust-remote-code: true, model: org/model}`,
			want: []string{`enforce-eager [error] enforce-eager is "yes"; allowed true or false`}},
	}
}

func TestValidateKubernetes(t *testing.T) {
	runSchemaCases(t, kubernetesCases())
}

func kubernetesCases() []schemaCase {
	return []schemaCase{
		{name: "deployment with GPU limits is clean", schema: "kubernetes", doc: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
        - name: main
          resources:
            limits: {nvidia.com/gpu: 2, memory: 64Gi}
            requests: {nvidia.com/gpu: "2", cpu: "8"}
`},
		// GPU quantities are checked by the gpu-resource-invalid rule
		// (policies/k8s/k8s001), which sees custom resources too; the schema
		// leaves them alone so a problem is reported once.
		{name: "GPU quantities are left to gpu-resource-invalid", schema: "kubernetes", doc: `
apiVersion: batch/v1
kind: CronJob
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - resources: {requests: {nvidia.com/gpu: 1}}
            - resources: {limits: {nvidia.com/gpu: 0.5}}
            - resources: {limits: {nvidia.com/gpu: 500m, amd.com/gpu: 0.5, cpu: 0.5}}
`},
		{name: "null counts as absent", schema: "kubernetes", doc: `
apiVersion: v1
kind: Pod
spec:
  initContainers: null
  containers:
    - resources: null
    - resources: {limits: null, requests: {cpu: "1"}}
    - resources: {limits: {nvidia.com/gpu: 1}, requests: null}
    - resources: {limits: null, requests: {nvidia.com/gpu: 1}}
`},
		{name: "other kinds and fields are not checked", schema: "kubernetes", doc: `
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec: {ports: [{port: 80}], selector: {app: x}}
`},
	}
}

func TestValidateMIG(t *testing.T) {
	runSchemaCases(t, migCases())
}

func migCases() []schemaCase {
	return []schemaCase{
		{name: "profiles with suffixes and compute-instance prefixes", schema: "mig-parted", doc: `
version: v1
mig-configs:
  mixed:
    - device-filter: "0x2BB510DE"
      devices: all
      mig-enabled: true
      mig-devices: {"1g.24gb+me.all": 1, "1g.24gb-me": 1, "1g.24gb+gfx": 1, "1c.3g.20gb": 1, "1g.5gb+me": 1}
    - devices: [0, 1]
      mig-enabled: false
      mig-devices: {}
`},
		{name: "mig-enabled true without mig-devices", schema: "mig-parted",
			doc:  `{version: v1, mig-configs: {a: [{devices: all, mig-enabled: true}]}}`,
			want: []string{`mig-configs.a[0] [error] missing required key "mig-devices" in a[0] (required when mig-enabled is true)`}},
		{name: "mig-enabled false with devices", schema: "mig-parted",
			doc:  `{version: v1, mig-configs: {a: [{devices: all, mig-enabled: false, mig-devices: {"1g.5gb": 7}}]}}`,
			want: []string{`mig-configs.a[0].mig-devices."1g.5gb" [error] unknown key "1g.5gb" in mig-devices; mig-parted rejects MIG devices when mig-enabled is false`}},
		{name: "malformed profile, unknown field, bad devices", schema: "mig-parted", doc: `
version: v1
mig-configs:
  a:
    - devices: some
      mig-enabled: true
      mig-device: {}
      mig-devices: {"3g.20": 1, "1g.10gb": -1}
`,
			want: []string{
				`mig-configs.a[0].devices [error] devices is "some"; allowed "all" or a list`,
				`mig-configs.a[0].mig-device [error] unknown key "mig-device" in a[0] (did you mean "mig-devices"?); mig-parted rejects unexpected fields`,
				`mig-configs.a[0].mig-devices."1g.10gb" [error] 1g.10gb is -1; allowed an integer >= 0`,
				`mig-configs.a[0].mig-devices."3g.20" [error] unknown key "3g.20" in mig-devices; not a MIG profile name ([<C>c.]<G>g.<M>gb[+me|+me.all|-me|+gfx], e.g. 1g.10gb or 1g.5gb+me)`,
			}},
		{name: "version and entries", schema: "mig-parted", doc: `{version: v2, mig-configs: {empty: []}}`,
			want: []string{
				`mig-configs.empty [error] empty has 0 entries; at least 1 required`,
				`version [error] version is "v2"; allowed "v1"`,
			}},
		{name: "mig-enabled must be a bool", schema: "mig-parted",
			doc:  `{version: v1, mig-configs: {a: [{devices: all, mig-enabled: "yes"}]}}`,
			want: []string{`mig-configs.a[0].mig-enabled [error] mig-enabled is "yes"; allowed one of true, false`}},
		{name: "device plugin time-slicing is clean", schema: "device-plugin", doc: `
version: v1
flags: {migStrategy: none}
sharing:
  timeSlicing:
    renameByDefault: false
    resources: [{name: nvidia.com/gpu, replicas: 10}]
`},
		{name: "replicas below 2 and a bad strategy", schema: "device-plugin", doc: `
version: v1
flags: {migStrategy: mix, failOnInitErr: true}
sharing:
  timeSlicing:
    resources: [{name: nvidia.com/gpu, replicas: 1}, {name: amd.com/gpu, replicas: 2}]
`,
			want: []string{
				`flags.failOnInitErr [warning] unknown key "failOnInitErr" in flags (did you mean "failOnInitError"?); the device plugin ignores it`,
				`flags.migStrategy [error] migStrategy is "mix"; allowed one of "none", "single", "mixed"`,
				`sharing.timeSlicing.resources[0].replicas [error] replicas is 1; the device plugin requires replicas >= 2`,
				`sharing.timeSlicing.resources[1].name [error] name is "amd.com/gpu"; allowed an nvidia.com/ resource name of at most 63 characters`,
			}},
		{name: "time-slicing and MPS together", schema: "device-plugin", doc: `
version: v1
sharing:
  timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}
  mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}
`,
			want: []string{`sharing.mps [error] timeSlicing and mps are mutually exclusive; configure only one sharing method`}},
	}
}

func TestValidateProjectAndModel(t *testing.T) {
	runSchemaCases(t, projectCases())
}

func projectCases() []schemaCase {
	return []schemaCase{
		{name: "documented project file is clean", schema: "gpulint-config", doc: `
targets:
  - paths: ["train/**", "*.json"]
    gpu: H100-80GB
    gpus: 8
    nodes: 1
    model: meta-llama/Llama-3.1-8B
rules:
  fp32-where-bf16: off
  DS001: warning
  vram-overcommit: {severity: warning, params: {headroom: 0.15}}
ignore:
  - {path: "configs/legacy/*.json", rule: fp32-where-bf16, reason: "V100 cluster"}
policies: ["./policies"]
fail-on: error
limits: {max-file-bytes: 10485760, timeout: "30s"}
`},
		{name: "typos at every level", schema: "gpulint-config", doc: `
target: []
targets: [{paths: [], gpu: H100, gpu_count: 8}]
rules: {x: of, y: {severity: warning, parms: {}}}
ignore: [{path: "*.json"}]
fail-on: err
limits: {timeout: "30"}
`,
			want: []string{
				`fail-on [error] fail-on is "err"; allowed one of "error", "warning", "warn", "info", "never", "none"`,
				`ignore[0] [error] missing required key "reason" in ignore[0]`,
				`ignore[0] [error] missing required key "rule" in ignore[0]`,
				`limits.timeout [error] timeout is "30"; allowed a duration such as "30s" or "2m"`,
				`rules.x [error] x is "of"; allowed true or false or one of "off", "error", "warning", "info" or a mapping (did you mean "off"?)`,
				`rules.y.parms [error] unknown key "parms" in y (did you mean "params"?); gpulint does not read it`,
				`target [error] unknown top-level key "target" (did you mean "targets"?); gpulint does not read it`,
				`targets[0].gpu_count [error] unknown key "gpu_count" in targets[0]; gpulint does not read it`,
				`targets[0].paths [error] paths has 0 entries; at least 1 required`,
			}},
		{name: "workload model", schema: "workload", doc: `
kind: vllm
framework: vllm
role: serve
precision: auto
gpu: {count: 2, resource: nvidia.com/gpu}
serve: {dtype: auto, gpu_memory_utilization: 0.9, max_model_len: 32768, enforce_eager: false}
model: meta-llama/Llama-3.1-8B-Instruct
`},
		{name: "workload model is closed", schema: "workload",
			doc: `{kind: vllm, framework: vllm, role: serving, zero: {stage: 3}, seqlen: 4096}`,
			want: []string{
				`role [error] role is "serving"; allowed one of "train", "serve", "unknown"`,
				`seqlen [error] unknown top-level key "seqlen" (did you mean "seq_len"?); the workload model has no such field`,
				`zero [error] missing required key "offload_optimizer" in zero`,
				`zero [error] missing required key "offload_param" in zero`,
			}},
	}
}
