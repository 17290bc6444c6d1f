package source

import (
	"regexp"
	"strings"
	"sync"
)

// Kind is what a file configures. It is decided by content, not by name.
type Kind string

// Kinds gpulint reads. KindUnknown files are listed and skipped.
const (
	KindDeepSpeed  Kind = "deepspeed"
	KindAccelerate Kind = "accelerate"
	KindVLLM       Kind = "vllm"
	KindKubernetes Kind = "kubernetes"
	KindMIG        Kind = "mig"
	// KindFinetune is a fine-tuning recipe: Hugging Face Trainer
	// arguments (TRL, alignment-handbook), axolotl, LLaMA-Factory,
	// torchtune or gpt-neox.
	KindFinetune Kind = "finetune"
	KindUnknown  Kind = "unknown"
)

// deepSpeedKeys are top-level keys only a DeepSpeed config has
// (reference: deepspeed.md §2–§6).
var deepSpeedKeys = map[string]bool{
	"train_batch_size": true, "train_micro_batch_size_per_gpu": true,
	"zero_optimization": true, "zero_allow_untested_optimizer": true,
	"zero_force_ds_cpu_optimizer": true, "steps_per_print": true,
	"wall_clock_breakdown": true, "gradient_clipping": true,
	"prescale_gradients": true, "gradient_predivide_factor": true,
	"activation_checkpointing": true, "flops_profiler": true,
	"communication_data_type": true, "elasticity": true, "autotuning": true,
	"compression_training": true, "data_efficiency": true, "amp": true,
	"sparse_gradients": true, "memory_breakdown": true, "tensorboard": true,
	"aio": true, "checkpoint": true, "torch_autocast": true,
}

// deepSpeedWeakKeys appear in DeepSpeed configs and elsewhere too.
var deepSpeedWeakKeys = map[string]bool{
	"fp16": true, "bf16": true, "bfloat16": true, "optimizer": true,
	"scheduler": true, "gradient_accumulation_steps": true,
}

// notDeepSpeedKeys mark model-definition configs (gpt-neox, Megatron) that
// embed DeepSpeed blocks among their own keys; they are a different kind.
var notDeepSpeedKeys = map[string]bool{
	"num_layers": true, "hidden_size": true, "num_attention_heads": true,
	"pipe_parallel_size": true, "model_parallel_size": true, "base_model": true,
	"model_name_or_path": true, "per_device_train_batch_size": true,
	// torchtune and other recipe formats: DeepSpeed configs never name a
	// model, dataset or tokenizer.
	"model": true, "dataset": true, "tokenizer": true, "dtype": true,
	"output_dir": true, "checkpointer": true,
}

// accelerateKeys are top-level keys written by `accelerate config`
// (reference: accelerate.md §2).
var accelerateKeys = map[string]bool{
	"distributed_type": true, "compute_environment": true,
	"main_training_function": true, "downcast_bf16": true,
	"deepspeed_config": true, "fsdp_config": true, "use_cpu": true,
	"machine_rank": true, "num_machines": true, "rdzv_backend": true,
	"same_network": true, "tpu_use_cluster": true, "dynamo_config": true,
	"main_process_port": true, "main_process_ip": true, "gpu_ids": true,
	"mixed_precision": true, "num_processes": true, "enable_cpu_affinity": true,
}

// vllmKeys are `vllm serve` option names in kebab-case; a vLLM --config
// file uses them as keys, with dashes or underscores (reference: vllm.md §1).
var vllmKeys = map[string]bool{
	"tensor-parallel-size": true, "pipeline-parallel-size": true,
	"data-parallel-size": true, "gpu-memory-utilization": true,
	"max-model-len": true, "max-num-seqs": true, "max-num-batched-tokens": true,
	"kv-cache-dtype": true, "enable-prefix-caching": true,
	"no-enable-prefix-caching": true, "enable-chunked-prefill": true,
	"enforce-eager": true, "served-model-name": true, "trust-remote-code": true,
	"quantization": true, "block-size": true, "swap-space": true,
	"cpu-offload-gb": true, "async-scheduling": true, "max-logprobs": true,
	"enable-expert-parallel": true, "speculative-config": true,
	"compilation-config": true, "distributed-executor-backend": true,
	"download-dir": true, "load-format": true,
	"dtype": true, "disable-log-requests": true,
	"disable-log-stats": true, "max-seq-len-to-capture": true,
	"kv-transfer-config": true, "enable-lora": true, "max-lora-rank": true,
}

// KebabKey turns a snake_case or camelCase option name into the kebab-case
// long option name vLLM's argument parser uses.
func KebabKey(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '_':
			b.WriteByte('-')
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Detect decides a file's kind from its documents' content.
func Detect(f *File) Kind {
	for _, d := range f.Docs {
		if k := detectDoc(d.Root); k != KindUnknown {
			return k
		}
	}
	return KindUnknown
}

func detectDoc(root *Node) Kind {
	if root == nil || root.Kind != MapNode {
		return KindUnknown
	}
	if root.Get("apiVersion") != nil && root.Get("kind") != nil {
		return KindKubernetes
	}
	if root.Get("mig-configs") != nil {
		return KindMIG
	}
	if v := root.Get("version"); v != nil && (root.Get("sharing") != nil || root.Get("flags") != nil) {
		return KindMIG
	}
	var ds, dsWeak, notDS, acc, vl, dashed int
	for _, e := range root.Entries {
		k := e.Key.Text
		if strings.Contains(k, "-") {
			dashed++ // gpt-neox writes num-layers; DeepSpeed keys are snake_case
		}
		switch {
		case deepSpeedKeys[k]:
			ds++
		case deepSpeedWeakKeys[k]:
			dsWeak++
		}
		if notDeepSpeedKeys[k] {
			notDS++
		}
		if accelerateKeys[k] {
			acc++
		}
		if vllmKeys[KebabKey(k)] {
			vl++
		}
	}
	if root.Get("distributed_type") != nil || root.Get("compute_environment") != nil {
		return KindAccelerate
	}
	if notDS == 0 && dashed < 2 && (ds >= 1 || dsWeak >= 2) && acc <= 1 {
		return KindDeepSpeed
	}
	if isRecipe(root) {
		return KindFinetune
	}
	// A vLLM config names its model as a string; recipe formats such as
	// torchtune's give a component map instead.
	model := root.Get("model")
	if model != nil && model.Kind != ScalarNode {
		return KindUnknown
	}
	if vl >= 2 || (vl >= 1 && model != nil) {
		return KindVLLM
	}
	return KindUnknown
}

// keyPattern finds keys in text that does not parse: "key": in JSON and
// key: at the start of a YAML line.
var keyPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)"([A-Za-z_][A-Za-z0-9_.-]*)"\s*:|^([A-Za-z_][A-Za-z0-9_.-]*):`)
})

// DetectText classifies a file that did not parse from the keys its text
// mentions, so a broken DeepSpeed template is still reported as one.
func DetectText(data []byte) Kind {
	if len(data) > 1<<20 {
		data = data[:1<<20]
	}
	root := &Node{Kind: MapNode}
	seen := map[string]bool{}
	for _, m := range keyPattern().FindAllSubmatch(data, 2000) {
		k := string(m[1])
		if k == "" {
			k = string(m[2])
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		root.Entries = append(root.Entries, Entry{
			Key:   &Node{Kind: ScalarNode, Tag: "str", Text: k, Value: k},
			Value: &Node{Kind: ScalarNode, Tag: "null"},
		})
	}
	return detectDoc(root)
}
