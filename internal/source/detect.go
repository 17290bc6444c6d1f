package source

import (
	"maps"
	"regexp"
	"slices"
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
	// KindHelm is the values file of an LLM serving Helm chart (vLLM
	// production-stack: servingEngineSpec.modelSpec; a model beside a
	// pod's resources or nodeSelector, as substratusai's vllm and TGI
	// charts take).
	KindHelm    Kind = "helm"
	KindUnknown Kind = "unknown"
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

// deepSpeedTopLevel is every top-level key DeepSpeed reads: the fields of
// #DeepSpeed in schemas/deepspeed.cue (deepspeedai/DeepSpeed
// runtime/config.py and constants.py @ edaa722); a test in
// internal/normalize holds the two together. Keys starting with "_" are
// comments by convention and count as DeepSpeed's too.
var deepSpeedTopLevel = map[string]bool{
	"activation_checkpointing": true, "aio": true, "amp": true, "autotuning": true,
	"bf16": true, "bfloat16": true, "checkpoint": true, "comet": true,
	"communication_data_type": true, "comms_config": true, "comms_logger": true,
	"compile": true, "compression_training": true, "csv_monitor": true,
	"curriculum_learning": true, "data_efficiency": true, "data_types": true,
	"dataloader_drop_last": true, "disable_allgather": true, "dump_state": true,
	"eigenvalue": true, "elasticity": true, "flops_profiler": true, "fp16": true,
	"gradient_accumulation_steps": true, "gradient_allreduce_op": true,
	"gradient_clipping": true, "gradient_predivide_factor": true,
	"graph_harvesting": true, "hybrid_engine": true,
	"managed_gradient_accumulation": true, "memory_breakdown": true,
	"monitor_config": true, "nebula": true, "optimizer": true, "pipeline": true,
	"prescale_gradients": true, "progressive_layer_drop": true,
	"quantize_training": true, "scheduler": true, "seed": true,
	"seq_parallel_comm_data_type": true, "seq_parallel_communication_data_type": true,
	"sequence_parallel_size": true, "sparse_attention": true, "sparse_gradients": true,
	"steps_per_print": true, "tensor_parallel": true, "tensorboard": true,
	"timers": true, "torch_autocast": true, "train_batch_size": true,
	"train_micro_batch_size_per_gpu": true, "use_data_before_expert_parallelism": true,
	"vocabulary_size": true, "wall_clock_breakdown": true, "wandb": true,
	"weight_quantization": true, "zero_allow_untested_optimizer": true,
	"zero_force_ds_cpu_optimizer": true, "zero_optimization": true,
}

// DeepSpeedTopLevelKeys lists the top-level keys detection takes as
// DeepSpeed's, for the test that holds them to the schema.
func DeepSpeedTopLevelKeys() []string {
	return slices.Sorted(maps.Keys(deepSpeedTopLevel))
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

// vllmWeakKeys are vLLM options whose names other configs use too (a
// Hydra or Trainer config with dtype and quantization, a model card with
// trust_remote_code): without a model named as a string they count
// towards vLLM only beside an option no other format has.
var vllmWeakKeys = map[string]bool{
	"dtype": true, "quantization": true, "trust-remote-code": true,
	"download-dir": true, "load-format": true, "block-size": true,
	"served-model-name": true, "enable-lora": true, "max-lora-rank": true,
	"max-logprobs": true, "disable-log-stats": true, "disable-log-requests": true,
}

// devicePluginFlags and devicePluginSharing are the keys of the NVIDIA
// device plugin's flags and sharing blocks (#DPFlags, #DPSharing in
// schemas/mig.cue): a "version" beside a flags map without any of them is
// some other tool's config.
var devicePluginFlags = map[string]bool{
	"migStrategy": true, "failOnInitError": true, "nvidiaDriverRoot": true,
	"mpsRoot": true, "gdsEnabled": true, "mofedEnabled": true,
	"useNodeFeatureAPI": true, "deviceDiscoveryStrategy": true, "plugin": true, "gfd": true,
}

var devicePluginSharing = map[string]bool{"timeSlicing": true, "mps": true}

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
		if k := detectDoc(d.Root, true); k != KindUnknown {
			return k
		}
	}
	return KindUnknown
}

// detectDoc classifies one document by keys only its framework has. A
// document whose keys are mostly someone else's (a Hydra model config with
// activation_checkpointing and gradient_accumulation_steps among twenty
// keys of its own) is not DeepSpeed's even if a few names overlap. strict
// is false for keys scraped from text that did not parse, where nested
// keys are mixed in with the top level and cannot count against a kind.
func detectDoc(root *Node, strict bool) Kind {
	if root == nil || root.Kind != MapNode {
		return KindUnknown
	}
	if root.Get("apiVersion") != nil && root.Get("kind") != nil {
		return KindKubernetes
	}
	if root.Get("mig-configs") != nil {
		return KindMIG
	}
	if se := root.Get("servingEngineSpec"); se != nil && se.Kind == MapNode && se.Get("modelSpec") != nil {
		return KindHelm
	}
	if nimValues(root) {
		return KindHelm
	}
	if v := root.Get("version"); v != nil && (hasAnyKey(root.Get("sharing"), devicePluginSharing) || hasAnyKey(root.Get("flags"), devicePluginFlags)) {
		return KindMIG
	}
	var ds, dsWeak, dsAll, foreign, notDS, acc, vl, vlStrong, dashed int
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
		if deepSpeedTopLevel[k] || strings.HasPrefix(k, "_") {
			dsAll++
		} else {
			foreign++
		}
		if notDeepSpeedKeys[k] {
			notDS++
		}
		if accelerateKeys[k] {
			acc++
		}
		if kk := KebabKey(k); vllmKeys[kk] {
			vl++
			if !vllmWeakKeys[kk] {
				vlStrong++
			}
		}
	}
	if root.Get("distributed_type") != nil || root.Get("compute_environment") != nil {
		return KindAccelerate
	}
	// DeepSpeed ignores top-level keys it does not know, so a real config
	// may carry a stray one or two; one whose keys are mostly foreign is
	// another tool's file that shares a few names with DeepSpeed.
	mostlyDS := !strict || foreign <= dsAll
	if notDS == 0 && dashed < 2 && (ds >= 1 || dsWeak >= 2) && acc <= 1 && mostlyDS {
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
	if model != nil && podValues(root) {
		// A serving chart's values: internal/helm reads those of the
		// charts it knows as the server they deploy.
		return KindHelm
	}
	if (vl >= 2 && vlStrong >= 1) || (vl >= 1 && model != nil) {
		if podValues(root) {
			return KindUnknown
		}
		return KindVLLM
	}
	return KindUnknown
}

// podValues reports whether a document carries a pod's scheduling keys at
// its top level: resources with limits or requests, or a nodeSelector map.
// Those are a Helm chart's values (model, dtype and quantization beside
// replicaCount, resources and nodeSelector), which the chart turns into a
// pod; `vllm serve --config` has no such options (every key becomes a
// long option, and argparse ends the server on one it does not know:
// FlexibleArgumentParser's --config loader, vllm-project/vllm
// vllm/utils/argparse_utils.py @ 00da11e, reference vllm.md §1), so no
// vLLM config file holds them.
func podValues(root *Node) bool {
	if r := root.Get("resources"); r != nil && r.Kind == MapNode && (r.Get("limits") != nil || r.Get("requests") != nil) {
		return true
	}
	ns := root.Get("nodeSelector")
	return ns != nil && ns.Kind == MapNode
}

// nimValues reports the values of NVIDIA's nim-llm chart: a NIM image
// (nvcr.io/nim/..., internal/kube NIMImage) as image.repository beside
// a pod's resources or node selector (internal/helm NIMLLM reads them).
func nimValues(root *Node) bool {
	img := root.Get("image")
	if img == nil || img.Kind != MapNode {
		return false
	}
	repo := img.Get("repository")
	return repo != nil && repo.Kind == ScalarNode && strings.HasPrefix(repo.Text, "nvcr.io/nim/") && podValues(root)
}

// hasAnyKey reports whether n is a map with at least one of keys.
func hasAnyKey(n *Node, keys map[string]bool) bool {
	if n == nil || n.Kind != MapNode {
		return false
	}
	for _, e := range n.Entries {
		if keys[e.Key.Text] {
			return true
		}
	}
	return false
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
	return detectDoc(root, false)
}
