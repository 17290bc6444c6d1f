package gpulint.rules.gpu002_test

import data.gpulint.rules.gpu002

test_vllm_tiny_max_num_seqs_fires if {
	some f in gpu002.findings with input as {
		"kind": "vllm", "doc": {"max-num-seqs": 2},
		"workload": {"serve": {"max_num_seqs": 2}},
		"paths": {"serve.max_num_seqs": ["max-num-seqs"]}, "target": {}, "params": {},
	}
	f.path == ["max-num-seqs"]
	# Advice only: dropping the flag can run the server out of memory at
	# start-up, so no patch is offered.
	not f.patch
	contains(f.message, "watching start-up memory")
}

test_vllm_threshold_param if {
	count(gpu002.findings) == 0 with input as {
		"kind": "vllm", "doc": {"max-num-seqs": 4},
		"workload": {"serve": {"max_num_seqs": 4}},
		"paths": {}, "target": {}, "params": {"fixed-batch-size": {"max_num_seqs_threshold": 2}},
	}
}

test_vllm_normal_max_num_seqs_quiet if {
	count(gpu002.findings) == 0 with input as {
		"kind": "vllm", "doc": {"max-num-seqs": 64},
		"workload": {"serve": {"max_num_seqs": 64}}, "paths": {}, "target": {}, "params": {},
	}
}

test_training_micro_batch_doubles_keeping_global if {
	some f in gpu002.findings with input as {
		"kind": "deepspeed", "doc": {},
		"workload": {"batch": {"micro": 2, "accumulation": 8, "global": 128}},
		"paths": {"batch.micro": ["train_micro_batch_size_per_gpu"]},
		"target": {"gpu": {"name": "H100-80GB"}},
		"estimate": {"max_micro_batch": 9, "summary": "s"},
		"params": {},
	}
	f.patch == [
		{"op": "set", "path": ["train_micro_batch_size_per_gpu"], "value": 8},
		{"op": "set", "path": ["gradient_accumulation_steps"], "value": 2},
	]
}

test_training_quiet_when_fit_is_small if {
	count(gpu002.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {},
		"workload": {"batch": {"micro": 4, "accumulation": 1}},
		"paths": {}, "target": {}, "estimate": {"max_micro_batch": 7, "summary": "s"}, "params": {},
	}
}

test_training_quiet_without_estimate if {
	count(gpu002.findings) == 0 with input as {
		"kind": "deepspeed", "doc": {},
		"workload": {"batch": {"micro": 1}}, "paths": {}, "target": {}, "params": {},
	}
}

recipe(workload, alternatives) := {
	"kind": "finetune", "doc": {}, "params": {},
	"workload": object.union({"recipe": "torchtune", "batch": {"micro": 1, "accumulation": 16}}, workload),
	"paths": {"batch.micro": ["batch_size"]},
	"target": {"gpu": {"name": "H100-80GB"}},
	"estimate": {"max_micro_batch": 8, "summary": "s", "alternatives": alternatives},
}

test_recipe_micro_batch_in_recipe_keys if {
	some f in gpu002.findings with input as recipe({}, {})
	f.path == ["batch_size"]
	f.patch == [
		{"op": "set", "path": ["batch_size"], "value": 8},
		{"op": "set", "path": ["gradient_accumulation_steps"], "value": 2},
	]
}

test_recipe_waits_for_checkpointing_advice if {
	count(gpu002.findings) == 0 with input as recipe({"checkpointing": true}, {"no_checkpointing": {"fits": true}})
}

test_recipe_waits_for_quantization_advice if {
	count(gpu002.findings) == 0 with input as recipe(
		{"adapter": {"type": "qlora"}, "quantization": {"bits": 4}},
		{"bf16_base": {"fits": true}},
	)
}

test_recipe_without_accumulation_quiet if {
	count(gpu002.findings) == 0 with input as recipe({"batch": {"micro": 1, "accumulation": 1}}, {})
}
