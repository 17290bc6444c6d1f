# METADATA
# title: Helpers shared by gpulint rules
# description: |
#   Builders for findings and patches, and accessors for the target and the
#   workload model. Rules never stamp their id or severity: the engine does,
#   from the rule's own METADATA.
package gpulint.lib

# finding builds a finding at a path of input.doc.
finding(path, msg) := {"path": path, "message": msg}

# with_fix attaches a patch (a list of set/remove operations on paths of
# input.doc) and the imperative message that describes it.
with_fix(f, msg, patch) := object.union(f, {"fix": msg, "patch": patch})

# with_level lets a rule pick one of the levels its metadata allows.
with_level(f, level) := object.union(f, {"level": level})

# with_related lists secondary paths the finding depends on, after any it
# already lists.
with_related(f, paths) := object.union(f, {"related": array.concat(object.get(f, "related", []), paths)})

# with_inputs names the inputs this finding's verdict rests on, a subset
# of the rule's metadata inputs (all of them when unset). The engine
# records each as evidence and keeps a finding that rests on an assumed
# one at info.
with_inputs(f, names) := object.union(f, {"inputs": names})

# stated holds when a target input came from a file, a flag or the
# project file rather than an assumed default.
stated(name) if input.target.inputs[name].source != "assumed"

set_op(path, value) := {"op": "set", "path": path, "value": value}

remove_op(path) := {"op": "remove", "path": path}

# where returns the document path a workload field was read from, or the
# document root when the field came from a default.
where(field) := input.paths[field]

default where(_) := []

# gpu_known holds when a target GPU was named or inferred.
gpu_known if input.target.gpu.name

# bf16 reports whether the target GPU has native BF16 (compute capability
# 8.0 or newer). Unknown GPUs are assumed modern (the message says so).
bf16 if input.target.gpu.bf16
bf16 if not gpu_known

gpu_name := input.target.gpu.name

default gpu_name := "the target GPU"

# param reads a rule parameter set in .gpulint.yaml, with a default.
param(rule, name, def) := v if {
	v := input.params[rule][name]
} else := def

# gib formats bytes as GiB with one decimal. OPA hands integral numbers
# to sprintf as integers, so the decimal is built by hand.
gib(bytes) := sprintf("%d.%d GiB", [floor(t / 10), t % 10]) if {
	t := round((bytes * 10) / 1073741824)
}

# pct formats a fraction in [0, 1] as a whole percentage.
pct(x) := sprintf("%d%%", [round(x * 100)])

# with_gpus_related lists where the world size came from when another file
# set it (an Accelerate config launching this DeepSpeed file); rules whose
# verdict depends on the GPU count attach it.
with_gpus_related(f) := with_related(f, [{
	"ref": input.target.gpus_related.ref,
	"path": input.target.gpus_related.path,
	"message": input.target.gpus_related.message,
}]) if {
	input.target.gpus_related
} else := f

# vllm_off_gpu holds for a vLLM server that runs on no GPU: --device cpu
# (or another non-CUDA device), or a container whose manifest requests no
# GPU-count resource. GPU-specific vLLM advice does not apply there.
vllm_off_gpu if {
	input.kind == "vllm"
	lower(input.doc.device) in {"cpu", "neuron", "tpu", "xpu", "hpu"}
}

vllm_off_gpu if {
	input.kind == "vllm"
	c := input.k8s.container
	count([r | some r in c.resources; object.get(r, "count", 0) > 0]) == 0
}

# recipe_keys are the keys each fine-tuning recipe flavour reads a
# workload field from (a fix adds the key when the recipe leaves the field
# to its default).
recipe_keys := {
	"trainer": {
		"batch.micro": ["per_device_train_batch_size"], "batch.accumulation": ["gradient_accumulation_steps"],
		"checkpointing": ["gradient_checkpointing"], "dataloader.workers": ["dataloader_num_workers"],
		"dataloader.pin_memory": ["dataloader_pin_memory"],
	},
	"axolotl": {
		"batch.micro": ["micro_batch_size"], "batch.accumulation": ["gradient_accumulation_steps"],
		"checkpointing": ["gradient_checkpointing"], "dataloader.workers": ["dataloader_num_workers"],
		"dataloader.pin_memory": ["dataloader_pin_memory"],
	},
	"llamafactory": {
		"batch.micro": ["per_device_train_batch_size"], "batch.accumulation": ["gradient_accumulation_steps"],
		"checkpointing": ["disable_gradient_checkpointing"], "dataloader.workers": ["dataloader_num_workers"],
		"dataloader.pin_memory": ["dataloader_pin_memory"],
	},
	"torchtune": {
		"batch.micro": ["batch_size"], "batch.accumulation": ["gradient_accumulation_steps"],
		"checkpointing": ["enable_activation_checkpointing"],
	},
	"gpt-neox": {
		"batch.micro": ["train_micro_batch_size_per_gpu"], "batch.accumulation": ["gradient_accumulation_steps"],
		"checkpointing": ["checkpoint_activations"],
	},
}

# recipe_path is where a fine-tuning recipe sets a workload field: the key
# it was read from, else the key the recipe's tool reads.
recipe_path(field) := p if {
	p := input.paths[field]
	count(p) > 0
} else := recipe_keys[input.workload.recipe][field]

# axolotl_batch_size is the batch_size an axolotl recipe writes instead of
# gradient_accumulation_steps. It sets no accumulation: the schema's default
# gradient_accumulation_steps 1 is in place before normalize_config would
# derive one from it (internal/normalize hfRecipe), so the run accumulates
# 1 step. A fix never writes gradient_accumulation_steps beside it: axolotl
# refuses both (check_gas_bsz).
axolotl_batch_size := bs if {
	input.workload.recipe == "axolotl"
	not input.paths["batch.accumulation"]
	bs := input.doc.batch_size
	is_number(bs)
}

# recipe_label names a recipe's workload field in a message: the key it is
# read from, or, for an axolotl accumulation beside batch_size, that it is
# the default batch_size does not change.
recipe_label(field) := sprintf("gradient_accumulation_steps (axolotl's default: batch_size %d does not set it)", [bs]) if {
	field == "batch.accumulation"
	bs := axolotl_batch_size
} else := k if {
	p := recipe_path(field)
	k := p[count(p) - 1]
}

# recipe_where is where a finding on a recipe's workload field points: its
# key, or, for an axolotl accumulation beside batch_size, batch_size, the
# key the recipe meant it to come from. Fixes write recipe_path.
recipe_where(field) := ["batch_size"] if {
	field == "batch.accumulation"
	axolotl_batch_size
} else := recipe_path(field)

# Fine-tuning advice comes one change at a time, so the fixes compose
# (gpulint fix re-lints between rounds): first a 4-bit base the GPU does
# not need (quantized-base-on-large-gpu), then activation checkpointing
# the run fits without (checkpointing-unneeded), then a larger micro batch
# (fixed-batch-size). Each later rule stays quiet while an earlier one
# applies.
finetune_bf16_base_fits if {
	input.workload.adapter.type == "qlora"
	input.workload.quantization.bits == 4
	input.estimate.alternatives.bf16_base.fits == true
}

finetune_checkpointing_unneeded if {
	input.workload.checkpointing == true
	input.estimate.alternatives.no_checkpointing.fits == true
}
