# Conftest policies equivalent to gpulint's seed rules, written the way a
# team would with conftest: Rego over the raw parsed inputs. Used only by
# bench/compare.sh as the peer. (No memory model: conftest has none, so
# vram-overcommit and the MIG-size check have no equivalent; gpulint does
# more per file than this.)
package main

import rego.v1

is_deepspeed if {
	some k in ["train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization"]
	input[k]
}

# fp32-where-bf16: DeepSpeed with neither fp16 nor bf16 enabled.
deny contains msg if {
	is_deepspeed
	not input.fp16.enabled == true
	not input.bf16.enabled == true
	msg := "fp32-where-bf16: DeepSpeed trains in full FP32"
}

# fp32-where-bf16: Accelerate mixed_precision 'no' or absent, outside
# DeepSpeed-file mode.
deny contains msg if {
	input.distributed_type
	not input.deepspeed_config.deepspeed_config_file
	object.get(input, "mixed_precision", "no") in {"no", false}
	msg := "fp32-where-bf16: Accelerate runs in full FP32"
}

# fp32-where-bf16: vLLM dtype float32.
deny contains msg if {
	some k in ["dtype"]
	input[k] in {"float32", "float"}
	msg := "fp32-where-bf16: vLLM dtype float32"
}

# fixed-batch-size: vLLM max-num-seqs of 4 or less (both spellings).
deny contains msg if {
	some k in ["max-num-seqs", "max_num_seqs"]
	to_number(input[k]) <= 4
	msg := sprintf("fixed-batch-size: max-num-seqs is %v", [input[k]])
}

# mig-over-partitioned: a container asking for more than one MIG slice,
# anywhere in a manifest.
deny contains msg if {
	walk(input, [path, value])
	path[count(path) - 1] == "limits"
	is_object(value)
	some name, n in value
	startswith(name, "nvidia.com/mig-")
	to_number(n) > 1
	msg := sprintf("mig-over-partitioned: %s: %v", [name, n])
}

# fixed-batch-size in container args: --max-num-seqs N or =N.
deny contains msg if {
	walk(input, [path, value])
	path[count(path) - 1] == "args"
	is_array(value)
	some i, a in value
	a == "--max-num-seqs"
	to_number(value[i + 1]) <= 4
	msg := "fixed-batch-size: --max-num-seqs"
}
