package normalize

import (
	"regexp"
	"strings"
	"sync"

	"github.com/gpulint/gpulint/internal/value"
)

// torchtuneModels maps the size part of a torchtune model builder
// (torchtune.models.<family>.[lora_|qlora_]<name>) to the Hugging Face
// repo id of the same architecture in gpulint's model catalog.
var torchtuneModels = map[string]string{
	"llama2_7b":     "meta-llama/Llama-2-7b-hf",
	"llama2_13b":    "meta-llama/Llama-2-13b-hf",
	"llama2_70b":    "meta-llama/Llama-2-70b-hf",
	"llama3_8b":     "meta-llama/Meta-Llama-3-8B",
	"llama3_70b":    "meta-llama/Meta-Llama-3-70B",
	"llama3_1_8b":   "meta-llama/Llama-3.1-8B",
	"llama3_1_70b":  "meta-llama/Llama-3.1-70B",
	"llama3_1_405b": "meta-llama/Llama-3.1-405B",
	"llama3_2_1b":   "meta-llama/Llama-3.2-1B",
	"llama3_2_3b":   "meta-llama/Llama-3.2-3B",
	"llama3_3_70b":  "meta-llama/Llama-3.3-70B-Instruct",
	"mistral_7b":    "mistralai/Mistral-7B-v0.1",
	"qwen2_5_0_5b":  "Qwen/Qwen2.5-0.5B",
	"qwen2_5_1_5b":  "Qwen/Qwen2.5-1.5B",
	"qwen2_5_3b":    "Qwen/Qwen2.5-3B",
	"qwen2_5_7b":    "Qwen/Qwen2.5-7B",
	"qwen2_5_14b":   "Qwen/Qwen2.5-14B",
	"qwen2_5_32b":   "Qwen/Qwen2.5-32B",
	"qwen2_5_72b":   "Qwen/Qwen2.5-72B",
	"gemma2_9b":     "google/gemma-2-9b",
	"gemma2_27b":    "google/gemma-2-27b",
	"phi3_mini":     "microsoft/Phi-3-mini-4k-instruct",
	// Llama 4's builders (pytorch/torchtune torchtune/models/llama4/
	// _model_builders.py at bd2a0fc: llama4_scout_17b_16e, 16 experts;
	// llama4_maverick_17b_128e, 128 experts on every second layer; both
	// 48 layers, embed 5120, with the vision encoder) build the
	// architectures of these checkpoints.
	"llama4_scout_17b_16e":     "meta-llama/Llama-4-Scout-17B-16E",
	"llama4_maverick_17b_128e": "meta-llama/Llama-4-Maverick-17B-128E",
}

// TorchtuneModel maps a torchtune model builder such as
// torchtune.models.llama3_1.lora_llama3_1_8b to a catalog model id, its
// adapter ("lora", "qlora" or "none") and whether the builder was known.
func TorchtuneModel(component string) (id, adapter string, ok bool) {
	name := component[strings.LastIndexByte(component, '.')+1:]
	adapter = "none"
	switch {
	case strings.HasPrefix(name, "qlora_"):
		adapter, name = "qlora", strings.TrimPrefix(name, "qlora_")
	case strings.HasPrefix(name, "lora_"):
		adapter, name = "lora", strings.TrimPrefix(name, "lora_")
	}
	name = strings.TrimSuffix(name, "_instruct")
	id, ok = torchtuneModels[name]
	return id, adapter, ok
}

// torchtuneRecipe reads a torchtune recipe config.
func torchtuneRecipe(w *Workload, doc any) {
	adapter := "none"
	if _, ok := lookup(doc, "policy_model", "_component_"); ok {
		torchtunePPO(w, doc)
		return
	}
	if c, ok := lookup(doc, "model", "_component_"); ok {
		if s, ok := c.(string); ok {
			var id string
			var known bool
			id, adapter, known = TorchtuneModel(s)
			if known {
				w.set("model", id, p("model", "_component_"))
			}
		}
	}
	w.set("adapter.type", adapter, p("model", "_component_"))
	if adapter != "none" {
		w.setInt("adapter.rank", doc, "model", "lora_rank")
		var targets []any
		for _, t := range stringList(valueOr(valueOr(doc, "model"), "lora_attn_modules")) {
			targets = append(targets, t)
		}
		if b, _ := asBool(valueOr(valueOr(doc, "model"), "apply_lora_to_mlp")); b {
			targets = append(targets, "w1", "w2", "w3")
		}
		if len(targets) > 0 {
			w.set("adapter.targets", targets, p("model", "lora_attn_modules"))
		}
		if adapter == "qlora" {
			w.set("quantization.bits", int64(4), p("model", "_component_"))
			w.set("quantization.method", "nf4", p("model", "_component_"))
		}
	}
	// torchtune trains in dtype throughout (no fp32 master weights,
	// memory-model.md §6.3); training.get_dtype(None) is fp32.
	if v, ok := lookup(doc, "dtype"); ok {
		w.set("precision", dtypeName(v), p("dtype"))
	} else {
		w.set("precision", "fp32", p())
	}
	if !w.setInt("batch.micro", doc, "batch_size") {
		w.set("batch.micro", int64(1), p())
	}
	if !w.setInt("batch.accumulation", doc, "gradient_accumulation_steps") {
		w.set("batch.accumulation", int64(1), p())
	}
	if _, ok := w.setBool("checkpointing", doc, "enable_activation_checkpointing"); !ok {
		w.set("checkpointing", false, p())
	}
	w.setBool("activation_offloading", doc, "enable_activation_offloading")
	w.setInt("seq_len", doc, "tokenizer", "max_seq_len")
	w.setBool("packing", doc, "dataset", "packed")
	if v, ok := lookup(doc, "optimizer", "_component_"); ok {
		if s, ok := v.(string); ok {
			w.set("optimizer", strings.ToLower(s), p("optimizer", "_component_"))
		}
	}
	w.setBool("optimizer_in_backward", doc, "optimizer_in_bwd")
	// Distributed recipes shard with FSDP; their configs carry fsdp_*
	// keys or a tensor-parallel plan.
	switch {
	case has(asMap(doc), "fsdp_cpu_offload"):
		w.set("fsdp.sharding", "full_shard", p("fsdp_cpu_offload"))
		w.setBool("fsdp.cpu_offload", doc, "fsdp_cpu_offload")
	case has(asMap(doc), "fsdp"):
		w.set("fsdp.sharding", "full_shard", p("fsdp"))
		if _, ok := w.setBool("fsdp.cpu_offload", doc, "fsdp", "cpu_offload"); !ok {
			w.set("fsdp.cpu_offload", false, p("fsdp"))
		}
	case has(asMap(doc), "custom_sharded_layers"):
		w.set("fsdp.sharding", "full_shard", p("custom_sharded_layers"))
		w.set("fsdp.cpu_offload", false, p("custom_sharded_layers"))
	}
	if _, ok := w.Get("fsdp.sharding"); ok {
		// torchtune shards with FSDP2 (training.shard_model calls
		// fully_shard with reshard_after_forward, which the distributed
		// recipes read from fsdp_reshard_after_forward, default True:
		// meta-pytorch/torchtune recipes/full_finetune_distributed.py).
		w.set("fsdp.version", int64(2), w.Paths["fsdp.sharding"])
		if v, ok := lookup(doc, "fsdp_reshard_after_forward"); ok {
			if b, ok := asBool(v); ok && !b {
				w.set("fsdp.sharding", "shard_grad_op", p("fsdp_reshard_after_forward"))
			}
		}
	}
	w.setIntPositive("parallel.tp", doc, "tensor_parallel_dim")
}

// torchtunePPO reads a torchtune PPO recipe config, the one
// recipes/ppo_full_finetune_single_device.py runs (pytorch/torchtune @
// bd2a0fc; recipes/configs/mistral/7B_full_ppo_low_memory.yaml):
//   - policy_model builds the policy and its frozen reference copy;
//     reward_and_value_model (a torchtune.modules.classifier_model over
//     base_model_path, num_classes outputs) builds the value model, which
//     trains, and the frozen reward model (_setup_models);
//   - all four are built in dtype (training.set_default_dtype), trained
//     with optimizer (over the policy's and the value model's parameters,
//     in backward when optimizer_in_bwd) and checkpointed per layer when
//     enable_activation_checkpointing (policy and value model only);
//   - each PPO backward runs ppo_batch_size / gradient_accumulation_steps
//     sequences (_ppo_backward_batch_size); the rollout generates
//     max_generated_tokens for forward_batch_size prompts at a time
//     (generate_trajectory_batched), with a KV cache when enable_kv_cache;
//   - the prompt is truncated to tokenizer.max_seq_len, and padded to the
//     batch's longest prompt, so max_seq_len bounds the prompt.
//
// The recipe is single-device: it has no FSDP keys.
func torchtunePPO(w *Workload, doc any) {
	if c, ok := lookup(doc, "policy_model", "_component_"); ok {
		if s, ok := c.(string); ok {
			if id, adapter, known := TorchtuneModel(s); known && adapter == "none" {
				w.set("model", id, p("policy_model", "_component_"))
			}
		}
	}
	// The policy is fully fine-tuned (the recipe has no LoRA variant at
	// bd2a0fc).
	w.set("adapter.type", "none", p("policy_model", "_component_"))
	if c, ok := lookup(doc, "reward_and_value_model", "base_model_path"); ok {
		if s, ok := c.(string); ok {
			if id, adapter, known := TorchtuneModel(s); known && adapter == "none" {
				w.set("ppo.value_model", id, p("reward_and_value_model", "base_model_path"))
			}
		}
	}
	if v, ok := lookup(doc, "reward_and_value_model", "num_classes"); ok {
		if n, ok := value.Int(v); ok && n >= 1 {
			w.set("ppo.value_classes", n, p("reward_and_value_model", "num_classes"))
		}
	}
	if v, ok := lookup(doc, "dtype"); ok {
		w.set("precision", dtypeName(v), p("dtype"))
	} else {
		w.set("precision", "fp32", p())
	}
	accum := int64(1)
	if w.setInt("batch.accumulation", doc, "gradient_accumulation_steps") {
		accum, _ = w.Model["batch"].(map[string]any)["accumulation"].(int64)
	} else {
		w.set("batch.accumulation", int64(1), p())
	}
	if v, ok := lookup(doc, "ppo_batch_size"); ok {
		if n, ok := value.Int(v); ok && accum >= 1 && n >= accum && n%accum == 0 {
			w.set("batch.micro", n/accum, p("ppo_batch_size"))
		}
	}
	w.setIntPositive("ppo.forward_batch", doc, "forward_batch_size")
	w.setIntPositive("ppo.max_generated_tokens", doc, "max_generated_tokens")
	if _, ok := w.setBool("ppo.kv_cache", doc, "enable_kv_cache"); !ok {
		w.set("ppo.kv_cache", false, p())
	}
	if _, ok := w.setBool("checkpointing", doc, "enable_activation_checkpointing"); !ok {
		w.set("checkpointing", false, p())
	}
	w.setInt("seq_len", doc, "tokenizer", "max_seq_len")
	if v, ok := lookup(doc, "optimizer", "_component_"); ok {
		if s, ok := v.(string); ok {
			w.set("optimizer", strings.ToLower(s), p("optimizer", "_component_"))
		}
	}
	w.setBool("optimizer_in_backward", doc, "optimizer_in_bwd")
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// neoxKey finds a gpt-neox key written with dashes or underscores.
func neoxKey(doc any, key string) (string, any, bool) {
	m := asMap(doc)
	if v, ok := m[key]; ok {
		return key, v, true
	}
	dashed := strings.ReplaceAll(key, "_", "-")
	if v, ok := m[dashed]; ok {
		return dashed, v, true
	}
	return "", nil, false
}

// neoxPrecision is gpt-neox's "precision" key: fp16, bfloat16 or fp32.
var neoxPrecision = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(fp16|float16|half|bf16|bfloat16|fp32|float32|float)$`)
})

// neoxRecipe reads a gpt-neox config: the embedded DeepSpeed blocks
// (batch, fp16/bf16, zero_optimization) and its own model and
// parallelism keys.
func neoxRecipe(w *Workload, doc any) {
	ds := DeepSpeed(doc)
	for _, f := range []string{"precision", "batch.micro", "batch.accumulation", "batch.global",
		"zero.stage", "zero.offload_optimizer", "zero.offload_param",
		"zero.max_live_parameters", "zero.prefetch_bucket_size", "zero.max_reuse_distance"} {
		if v, ok := ds.Get(f); ok {
			w.set(f, v, ds.Paths[f])
		}
	}
	if k, v, ok := neoxKey(doc, "precision"); ok {
		if s, ok := v.(string); ok && neoxPrecision().MatchString(strings.ToLower(s)) {
			w.set("precision", dtypeName(s), p(k))
		}
	}
	for _, f := range []struct{ field, key string }{
		{"seq_len", "seq_length"},
		{"parallel.pp", "pipe_parallel_size"},
		{"parallel.tp", "model_parallel_size"},
	} {
		if k, v, ok := neoxKey(doc, f.key); ok {
			if n, ok := value.Int(v); ok && n > 0 {
				w.set(f.field, n, p(k))
			}
		}
	}
	if k, v, ok := neoxKey(doc, "checkpoint_activations"); ok {
		if b, ok := asBool(v); ok {
			w.set("checkpointing", b, p(k))
		}
	}
	w.set("adapter.type", "none", p())
}
