package normalize

import (
	"strings"

	"github.com/gpulint/gpulint/internal/value"
	"github.com/gpulint/gpulint/tuner"
)

// DeepSpeed maps a DeepSpeed config (reference: deepspeed.md §2–§4).
func DeepSpeed(doc any) *Workload {
	w := newWorkload("deepspeed", "deepspeed", "train")
	w.set("precision", "fp32", p())
	dsPrecision(w, doc)

	for _, b := range []struct{ field, key string }{
		{"batch.micro", "train_micro_batch_size_per_gpu"},
		{"batch.accumulation", "gradient_accumulation_steps"},
		{"batch.global", "train_batch_size"},
	} {
		if v, ok := lookup(doc, b.key); ok {
			if n, ok := intOrAuto(v); ok {
				w.set(b.field, n, p(b.key))
			}
		}
	}

	zero, hasZero := lookup(doc, "zero_optimization")
	stage := int64(0)
	stagePath := p()
	if hasZero {
		stagePath = p("zero_optimization")
		if b, ok := zero.(bool); ok { // legacy bool form: true is stage 1
			if b {
				stage = 1
			}
		} else if v, ok := lookup(zero, "stage"); ok {
			if n, ok := value.Int(v); ok {
				stage = n
				stagePath = p("zero_optimization", "stage")
			}
		}
	}
	w.set("zero.stage", stage, stagePath)
	w.set("zero.offload_optimizer", "none", stagePath[:min(len(stagePath), 1)])
	w.set("zero.offload_param", "none", stagePath[:min(len(stagePath), 1)])
	for _, o := range []struct{ field, block, legacy string }{
		{"zero.offload_optimizer", "offload_optimizer", "cpu_offload"},
		{"zero.offload_param", "offload_param", "cpu_offload_param"},
	} {
		if v, ok := lookup(zero, o.block, "device"); ok {
			if s, ok := v.(string); ok && !isAuto(s) {
				w.set(o.field, strings.ToLower(s), p("zero_optimization", o.block, "device"))
			}
		} else if v, ok := lookup(zero, o.legacy); ok {
			if b, _ := asBool(v); b {
				w.set(o.field, "cpu", p("zero_optimization", o.legacy))
			}
		}
	}
	// ZeRO-3's gathered-parameter settings, under the stage3_ aliases or
	// the field names DeepSpeedZeroConfig also accepts
	// (deepspeed/runtime/zero/config.py @ edaa7221: max_live_parameters
	// alias stage3_max_live_parameters, prefetch_bucket_size alias
	// stage3_prefetch_bucket_size, max_reuse_distance alias
	// stage3_max_reuse_distance; ge=0). "auto" is left to the defaults.
	for _, c := range []struct{ field, alias, name string }{
		{"zero.max_live_parameters", "stage3_max_live_parameters", "max_live_parameters"},
		{"zero.prefetch_bucket_size", "stage3_prefetch_bucket_size", "prefetch_bucket_size"},
		{"zero.max_reuse_distance", "stage3_max_reuse_distance", "max_reuse_distance"},
	} {
		for _, key := range []string{c.alias, c.name} {
			if v, ok := lookup(zero, key); ok {
				if n, ok := value.Int(v); ok && n >= 0 {
					w.set(c.field, n, p("zero_optimization", key))
				}
				break
			}
		}
	}
	if v, ok := lookup(doc, "activation_checkpointing", "partition_activations"); ok {
		if b, ok := asBool(v); ok && b {
			w.set("checkpointing", true, p("activation_checkpointing"))
		}
	}
	return w
}

// dsPrecision reads the fp16/bf16/amp/torch_autocast blocks.
func dsPrecision(w *Workload, doc any) {
	enabled := func(block string) (any, []any, bool) {
		v, ok := lookup(doc, block, "enabled")
		if !ok {
			if _, blockOK := lookup(doc, block); blockOK {
				return false, p(block), true
			}
			return nil, nil, false
		}
		return v, p(block, "enabled"), true
	}
	bfName := "bf16"
	if _, ok := lookup(doc, "bf16"); !ok {
		if _, ok := lookup(doc, "bfloat16"); ok {
			bfName = "bfloat16"
		}
	}
	bf, bfPath, hasBF := enabled(bfName)
	fp, fpPath, hasFP := enabled("fp16")
	bfOn, _ := asBool(bf)
	fpOn, _ := asBool(fp)
	switch {
	case hasBF && bfOn:
		w.set("precision", "bf16", bfPath)
	case hasFP && fpOn:
		w.set("precision", "fp16", fpPath)
	case isAuto(bf) || isAuto(fp):
		path := bfPath
		if !isAuto(bf) {
			path = fpPath
		}
		w.set("precision", "auto", path)
	default:
		if v, ok := lookup(doc, "amp", "enabled"); ok {
			if b, _ := asBool(v); b {
				w.set("precision", "fp16", p("amp", "enabled"))
				return
			}
		}
		if v, ok := lookup(doc, "torch_autocast", "enabled"); ok {
			if b, _ := asBool(v); b {
				dt := "bf16"
				if s, ok := lookup(doc, "torch_autocast", "dtype"); ok {
					dt = dtypeName(s)
				}
				w.set("precision", dt, p("torch_autocast", "enabled"))
				return
			}
		}
		switch {
		case hasFP:
			w.set("precision", "fp32", fpPath)
		case hasBF:
			w.set("precision", "fp32", bfPath)
		}
	}
}

// dtypeName maps the dtype spellings DeepSpeed, torch and vLLM accept to
// fp32/fp16/bf16/fp8 (reference: precision.md §3).
func dtypeName(v any) string {
	s, _ := v.(string)
	switch strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "torch.")) {
	case "fp16", "float16", "half":
		return "fp16"
	case "bf16", "bfloat16":
		return "bf16"
	case "fp32", "float32", "float":
		return "fp32"
	case "fp8", "float8", "float8_e4m3fn", "float8_e5m2":
		return "fp8"
	case "auto", "":
		return "auto"
	}
	return "auto"
}

// Accelerate maps an Accelerate config (reference: accelerate.md §2–§3).
func Accelerate(doc any) *Workload {
	w := newWorkload("accelerate", "accelerate", "train")
	dt, _ := lookup(doc, "distributed_type")
	dist, _ := dt.(string)
	if b, ok := dt.(bool); ok && !b {
		dist = "NO" // PyYAML reads unquoted NO as false; Accelerate then fails
	}
	w.set("distributed_type", dist, p("distributed_type"))
	device := "gpu"
	if b, _ := asBool(valueOr(doc, "use_cpu")); b {
		device = "cpu"
	}
	switch strings.ToUpper(dist) {
	case "MULTI_CPU":
		device = "cpu"
	case "MULTI_XPU":
		device = "xpu"
	case "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_HPU", "MULTI_NEURON", "XLA", "TPU":
		device = "other"
	}
	w.set("device", device, p())

	dsFile, hasDSFile := lookup(doc, "deepspeed_config", "deepspeed_config_file")
	if hasDSFile {
		if s, ok := dsFile.(string); ok && s != "" {
			w.set("deepspeed_config_file", s, p("deepspeed_config", "deepspeed_config_file"))
		}
	}
	mp, hasMP := lookup(doc, "mixed_precision")
	switch {
	case hasMP && mp == false:
		w.set("precision", "fp32", p("mixed_precision"))
	case hasMP && mp != nil:
		s, _ := mp.(string)
		switch strings.ToLower(s) {
		case "no":
			w.set("precision", "fp32", p("mixed_precision"))
		case "fp16", "bf16", "fp8":
			w.set("precision", strings.ToLower(s), p("mixed_precision"))
		}
	case !hasDSFile:
		w.set("precision", "fp32", p())
	}

	if v, ok := lookup(doc, "num_processes"); ok {
		if n, ok := value.Int(v); ok && n > 0 {
			w.set("parallel.world_size", n, p("num_processes"))
		}
	}
	if v, ok := lookup(doc, "num_machines"); ok {
		if n, ok := value.Int(v); ok && n > 0 {
			w.set("parallel.num_machines", n, p("num_machines"))
		}
	}
	if strings.EqualFold(dist, "DEEPSPEED") && !hasDSFile {
		stage := int64(2) // plugin default (accelerate.md §3)
		sp := p("deepspeed_config")
		if v, ok := lookup(doc, "deepspeed_config", "zero_stage"); ok {
			if n, ok := value.Int(v); ok {
				stage, sp = n, p("deepspeed_config", "zero_stage")
			}
		}
		w.set("zero.stage", stage, sp)
		for _, o := range []struct{ field, key string }{
			{"zero.offload_optimizer", "offload_optimizer_device"},
			{"zero.offload_param", "offload_param_device"},
		} {
			w.set(o.field, "none", p("deepspeed_config"))
			if v, ok := lookup(doc, "deepspeed_config", o.key); ok {
				if s, ok := v.(string); ok {
					w.set(o.field, strings.ToLower(s), p("deepspeed_config", o.key))
				}
			}
		}
		if v, ok := lookup(doc, "deepspeed_config", "gradient_accumulation_steps"); ok {
			if n, ok := intOrAuto(v); ok {
				w.set("batch.accumulation", n, p("deepspeed_config", "gradient_accumulation_steps"))
			}
		}
	}
	if strings.EqualFold(dist, "FSDP") {
		accelerateFSDP(w, doc)
	}
	if v, ok := lookup(doc, "fsdp_config", "fsdp_activation_checkpointing"); ok {
		if b, ok := asBool(v); ok {
			w.set("checkpointing", b, p("fsdp_config", "fsdp_activation_checkpointing"))
		}
	}
	return w
}

// accelerateFSDP reads the fsdp_config block of an FSDP Accelerate config
// (reference: accelerate.md §4; huggingface/accelerate
// src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin and
// utils/constants.py FSDP_SHARDING_STRATEGY at 16cb6eb): fsdp_version
// (default 1); fsdp_reshard_after_forward, a ShardingStrategy name under
// FSDP1 and a bool under FSDP2 (true: full sharding, false: gradients and
// optimizer states only); the deprecated fsdp_sharding_strategy, a name
// or its 1-based index in FULL_SHARD, SHARD_GRAD_OP, NO_SHARD,
// HYBRID_SHARD, HYBRID_SHARD_ZERO2; and fsdp_offload_params, which
// offloads parameters and gradients. The plugin's default is FULL_SHARD
// (FSDP2: reshard_after_forward true). A value the plugin would refuse
// leaves the strategy at its default, and the schema rules report it.
func accelerateFSDP(w *Workload, doc any) {
	at := p("distributed_type")
	if _, ok := lookup(doc, "fsdp_config"); ok {
		at = p("fsdp_config")
	}
	version := int64(1)
	if v, ok := lookup(doc, "fsdp_config", "fsdp_version"); ok {
		if n, ok := value.Int(v); ok && (n == 1 || n == 2) {
			version = n
			w.set("fsdp.version", n, p("fsdp_config", "fsdp_version"))
		}
	}
	strategies := []string{"full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "_hybrid_shard_zero2"}
	name := func(v any) (string, bool) {
		if n, ok := value.Int(v); ok && n >= 1 && int(n) <= len(strategies) {
			return strategies[n-1], true
		}
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "hybrid_shard_zero2" {
			s = "_hybrid_shard_zero2"
		}
		for _, k := range strategies {
			if s == k {
				return k, true
			}
		}
		return "", false
	}
	shard := "full_shard"
	if v, ok := lookup(doc, "fsdp_config", "fsdp_sharding_strategy"); ok && version == 1 {
		if s, ok := name(v); ok {
			shard, at = s, p("fsdp_config", "fsdp_sharding_strategy")
		}
	}
	if v, ok := lookup(doc, "fsdp_config", "fsdp_reshard_after_forward"); ok {
		if version == 2 {
			if b, ok := asBool(v); ok {
				shard = map[bool]string{true: "full_shard", false: "shard_grad_op"}[b]
				at = p("fsdp_config", "fsdp_reshard_after_forward")
			}
		} else if s, ok := name(v); ok {
			shard, at = s, p("fsdp_config", "fsdp_reshard_after_forward")
		}
	}
	w.set("fsdp.sharding", shard, at)
	offload, offloadAt := false, at
	if v, ok := lookup(doc, "fsdp_config", "fsdp_offload_params"); ok {
		if b, ok := asBool(v); ok {
			offload, offloadAt = b, p("fsdp_config", "fsdp_offload_params")
		}
	}
	w.set("fsdp.cpu_offload", offload, offloadAt)
}

// AccelerateFSDPPatch writes a plan's FSDP sharding strategy or CPU
// offload choice in an Accelerate config's own keys (accelerate.md §4):
// FSDP2 takes fsdp_reshard_after_forward as a bool (true FULL_SHARD,
// false SHARD_GRAD_OP; it has no NO_SHARD or hybrid strategy here); FSDP1
// takes the strategy name in fsdp_sharding_strategy where the file
// already uses that deprecated key, else in fsdp_reshard_after_forward;
// offload is fsdp_offload_params. ok is false for a choice the file's FSDP
// version cannot hold. Activation checkpointing is
// fsdp_activation_checkpointing.
func AccelerateFSDPPatch(w *Workload, c tuner.Choice) (path []any, value any, ok bool) {
	if _, fsdp := w.Get("fsdp.sharding"); !fsdp {
		return nil, nil, false
	}
	switch c.Setting {
	case tuner.SettingCheckpointing:
		return []any{"fsdp_config", "fsdp_activation_checkpointing"}, c.To == "on", c.To == "on" || c.To == "off"
	case tuner.SettingFSDPOffload:
		return []any{"fsdp_config", "fsdp_offload_params"}, c.To == "on", c.To == "on" || c.To == "off"
	case tuner.SettingFSDPSharding:
		if v, _ := w.Get("fsdp.version"); v == int64(2) {
			switch c.To {
			case "FULL_SHARD":
				return []any{"fsdp_config", "fsdp_reshard_after_forward"}, true, true
			case "SHARD_GRAD_OP":
				return []any{"fsdp_config", "fsdp_reshard_after_forward"}, false, true
			}
			return nil, nil, false
		}
		key := "fsdp_reshard_after_forward"
		if at := w.Paths["fsdp.sharding"]; len(at) == 2 && at[1] == "fsdp_sharding_strategy" {
			key = "fsdp_sharding_strategy"
		}
		return []any{"fsdp_config", key}, strings.TrimPrefix(c.To, "_"), c.To != ""
	}
	return nil, nil, false
}

func valueOr(doc any, key string) any {
	v, _ := lookup(doc, key)
	return v
}

// VLLM maps a vLLM config whose keys are already kebab-case long option
// names (reference: vllm.md §1–§3).
func VLLM(doc any) *Workload {
	w := newWorkload("vllm", "vllm", "serve")
	if v, ok := lookup(doc, "model"); ok {
		if s, ok := v.(string); ok && s != "" {
			w.set("model", s, p("model"))
		}
	}
	w.set("precision", "auto", p())
	if v, ok := lookup(doc, "dtype"); ok {
		w.set("precision", dtypeName(v), p("dtype"))
		if s, ok := v.(string); ok {
			w.set("serve.dtype", strings.ToLower(s), p("dtype"))
		}
	}
	for _, f := range []struct{ field, key string }{
		{"parallel.tp", "tensor-parallel-size"},
		{"parallel.pp", "pipeline-parallel-size"},
		{"parallel.dp", "data-parallel-size"},
		{"serve.max_model_len", "max-model-len"},
		{"serve.max_num_seqs", "max-num-seqs"},
		{"serve.max_num_batched_tokens", "max-num-batched-tokens"},
		{"serve.block_size", "block-size"},
	} {
		if v, ok := lookup(doc, f.key); ok {
			if n, ok := value.Int(v); ok {
				w.set(f.field, n, p(f.key))
			} else if n, ok := humanInt(v); ok {
				w.set(f.field, n, p(f.key))
			}
		}
	}
	if v, ok := lookup(doc, "gpu-memory-utilization"); ok {
		if f, ok := value.Float(v); ok {
			w.set("serve.gpu_memory_utilization", f, p("gpu-memory-utilization"))
		}
	}
	for _, f := range []struct{ field, key string }{
		{"serve.kv_cache_dtype", "kv-cache-dtype"},
		{"serve.quantization", "quantization"},
	} {
		if v, ok := lookup(doc, f.key); ok {
			if s, ok := v.(string); ok {
				w.set(f.field, strings.ToLower(s), p(f.key))
			}
		}
	}
	if v, ok := lookup(doc, "enforce-eager"); ok {
		if b, ok := asBool(v); ok {
			w.set("serve.enforce_eager", b, p("enforce-eager"))
		}
	}
	if v, ok := lookup(doc, "disable-hybrid-kv-cache-manager"); ok {
		if b, ok := asBool(v); ok {
			w.set("serve.disable_hybrid_kv_cache_manager", b, p("disable-hybrid-kv-cache-manager"))
		}
	}
	return w
}

// TGI maps a Text Generation Inference launcher's options, already
// written as vLLM's (cmdline.TGI.ServeConfig), to the serving workload;
// its framework is tgi, so what names the memory budget says
// cuda_memory_fraction.
func TGI(doc any) *Workload {
	w := VLLM(doc)
	w.Model["framework"] = "tgi"
	return w
}

// humanInt reads vLLM's human-readable integers: 32k, 1M (decimal), 1K,
// 1G (binary) (reference: vllm.md §1).
func humanInt(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok || len(s) < 2 {
		return 0, false
	}
	mult := map[byte]int64{'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
	m, ok := mult[s[len(s)-1]]
	if !ok {
		return 0, false
	}
	f, ok := value.Float(s[:len(s)-1])
	if !ok {
		return 0, false
	}
	return int64(f * float64(m)), true
}
