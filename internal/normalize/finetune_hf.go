package normalize

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
)

// hfAdapter reads the adapter, its rank and targets, and how the base
// model is quantized.
func hfAdapter(w *Workload, doc any, flavour string) {
	adapter, adapterAt := "none", p()
	switch flavour {
	case RecipeAxolotl:
		if s, ok := valueOr(doc, "adapter").(string); ok && s != "" {
			adapter, adapterAt = strings.ToLower(s), p("adapter")
		}
	case RecipeLlamaFactory:
		adapter = "lora" // FinetuningArguments.finetuning_type default
		if s, ok := valueOr(doc, "finetuning_type").(string); ok && s != "" {
			adapterAt = p("finetuning_type")
			switch strings.ToLower(s) {
			case "full":
				adapter = "none"
			case "freeze":
				adapter = "freeze"
			default:
				adapter = strings.ToLower(s)
			}
		}
	default:
		if truthy(doc, "use_peft") {
			adapter, adapterAt = "lora", p("use_peft")
		}
	}

	// Quantized base: bitsandbytes 4/8-bit loading, LLaMA-Factory
	// quantization_bit, axolotl gptq.
	bits, bitsAt, method := int64(0), []any(nil), "bitsandbytes"
	switch {
	case truthy(doc, "load_in_4bit"):
		bits, bitsAt = 4, p("load_in_4bit")
	case truthy(doc, "load_in_8bit"):
		bits, bitsAt = 8, p("load_in_8bit")
	}
	if n, ok := value.Int(valueOr(doc, "quantization_bit")); ok && (n == 4 || n == 8) {
		bits, bitsAt = n, p("quantization_bit")
		if s, ok := valueOr(doc, "quantization_method").(string); ok && s != "" {
			method = strings.ToLower(s)
		}
	}
	if flavour == RecipeAxolotl && truthy(doc, "gptq") {
		bits, bitsAt, method = 4, p("gptq"), "gptq"
	}
	if adapter == "qlora" && bits == 0 {
		bits, bitsAt = 4, adapterAt // axolotl's qlora loads the base in 4 bits
	}
	if bits > 0 {
		w.set("quantization.bits", bits, bitsAt)
		w.set("quantization.method", method, bitsAt)
	}
	switch {
	case adapter == "lora" && bits == 4:
		adapter = "qlora"
	case adapter == "qlora" && bits == 8:
		adapter = "lora"
	}
	switch adapter {
	case "none", "lora", "qlora", "freeze":
	default:
		adapter = "other" // e.g. axolotl's llama-adapter, LLaMA-Factory's oft
	}
	w.set("adapter.type", adapter, adapterAt)
	if adapter != "lora" && adapter != "qlora" {
		return
	}
	rankKey := "lora_r"
	if flavour == RecipeLlamaFactory {
		rankKey = "lora_rank"
	}
	if !w.setInt("adapter.rank", doc, rankKey) {
		def := map[string]int64{RecipeLlamaFactory: 8, RecipeTrainer: 16}[flavour]
		if def > 0 {
			w.set("adapter.rank", def, p())
		}
	}
	switch flavour {
	case RecipeLlamaFactory:
		if s, ok := valueOr(doc, "lora_target").(string); ok && s != "" {
			w.set("adapter.targets", splitTargets(s), p("lora_target"))
		}
	default:
		if truthy(doc, "lora_target_linear") {
			w.set("adapter.targets", []any{"all-linear"}, p("lora_target_linear"))
		} else if t := stringList(valueOr(doc, "lora_target_modules")); len(t) > 0 {
			w.set("adapter.targets", t, p("lora_target_modules"))
		}
	}
}

// splitTargets reads LLaMA-Factory's comma-separated lora_target ("all"
// means every linear layer).
func splitTargets(s string) []any {
	var out []any
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if strings.EqualFold(t, "all") {
			t = "all-linear"
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// stringList reads a list of strings, or one string, as []any.
func stringList(v any) []any {
	switch t := v.(type) {
	case string:
		if t != "" {
			return []any{t}
		}
	case []any:
		var out []any
		for _, x := range t {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// hfFSDP reads TrainingArguments' fsdp ("full_shard auto_wrap offload" or
// a list) and axolotl's fsdp_config / fsdp_version.
func hfFSDP(w *Workload, doc any) {
	var opts []string
	at := p()
	if v, ok := lookup(doc, "fsdp"); ok {
		at = p("fsdp")
		switch t := v.(type) {
		case string:
			opts = strings.Fields(strings.ToLower(t))
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					opts = append(opts, strings.Fields(strings.ToLower(s))...)
				}
			}
		case bool:
			if t {
				opts = []string{"full_shard"}
			}
		}
	}
	cfg, hasCfg := lookup(doc, "fsdp_config")
	if _, ok := lookup(doc, "fsdp_version"); ok && hasCfg {
		if len(opts) == 0 {
			opts, at = []string{"full_shard"}, p("fsdp_version")
		}
	}
	if len(opts) == 0 {
		return
	}
	shard := "full_shard"
	for _, o := range opts {
		if o == "shard_grad_op" || o == "no_shard" || o == "hybrid_shard" || o == "hybrid_shard_zero2" {
			shard = o
		}
	}
	offload := false
	offloadAt := at
	for _, o := range opts {
		if o == "offload" {
			offload = true
		}
	}
	for _, k := range []string{"fsdp_offload_params", "offload_params", "cpu_offload"} {
		if v, ok := lookup(cfg, k); ok {
			if b, ok := asBool(v); ok {
				offload, offloadAt = b, p("fsdp_config", k)
			}
		}
	}
	if v, ok := lookup(cfg, "fsdp_sharding_strategy"); ok {
		if s, ok := v.(string); ok {
			shard = strings.ToLower(s)
		}
	}
	version, versionAt := fsdpVersion(doc)
	for _, k := range []string{"fsdp_reshard_after_forward", "reshard_after_forward"} {
		v, ok := lookup(cfg, k)
		if !ok {
			continue
		}
		if b, ok := asBool(v); ok && version == 2 {
			// FSDP2's reshard_after_forward: true reshards parameters
			// after forward (FULL_SHARD), false keeps them gathered
			// until backward (SHARD_GRAD_OP).
			shard, at = map[bool]string{true: "full_shard", false: "shard_grad_op"}[b], p("fsdp_config", k)
		} else if s, ok := v.(string); ok && version != 2 && s != "" {
			// FSDP1 takes a ShardingStrategy name in it.
			shard, at = strings.ToLower(s), p("fsdp_config", k)
		}
	}
	w.set("fsdp.sharding", shard, at)
	w.set("fsdp.cpu_offload", offload, offloadAt)
	if version > 0 {
		w.set("fsdp.version", version, versionAt)
	}
}

// fsdpVersion is the FSDP version a recipe states: axolotl's top-level
// fsdp_version, else fsdp_config's fsdp_version or version. Transformers
// strips the fsdp_ prefix from fsdp_config's keys and reads "version"
// (huggingface/transformers 00349ae src/transformers/training_args.py:
// "if k.startswith("fsdp_")", fsdp_plugin_args["fsdp_version"]); axolotl
// accepts either spelling (axolotl-ai-cloud/axolotl 067b021
// src/axolotl/utils/schemas/fsdp.py FSDPConfig.fsdp_version,
// AliasChoices("fsdp_version", "version")) and its top-level key wins
// (utils/schemas/validation.py _resolve_fsdp_version). 0 when none is
// stated: the default depends on the library's version (transformers 4
// and accelerate's plugin 1, transformers 5 2), so nothing is assumed.
func fsdpVersion(doc any) (int64, []any) {
	try := func(keys ...string) (int64, []any, bool) {
		v, ok := lookup(doc, keys...)
		if !ok {
			return 0, nil, false
		}
		n, ok := value.Int(v)
		return n, pathOf(keys), ok && (n == 1 || n == 2)
	}
	for _, keys := range [][]string{{"fsdp_version"}, {"fsdp_config", "fsdp_version"}, {"fsdp_config", "version"}} {
		if n, at, ok := try(keys...); ok {
			return n, at
		}
	}
	return 0, nil
}
