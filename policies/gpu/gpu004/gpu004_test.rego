package gpulint.rules.gpu004_test

import data.gpulint.rules.gpu004

gib := 1073741824

test_over_capacity_is_error if {
	fs := gpu004.findings with input as {
		"kind": "deepspeed", "paths": {"zero.stage": ["zero_optimization", "stage"]},
		"target": {"gpu": {"name": "A100-40GB"}}, "params": {},
		"estimate": {"total": 50 * gib, "capacity": 39 * gib, "summary": "weights 10 GiB"},
	}
	count(fs) == 1
	some f in fs
	not f.level
	f.path == ["zero_optimization", "stage"]
	contains(f.message, "exceeds A100-40GB's 39.0 GiB")
}

test_thin_headroom_is_warning if {
	some f in gpu004.findings with input as {
		"kind": "vllm", "paths": {"model": ["model"]}, "target": {}, "params": {},
		"estimate": {"total": 95, "capacity": 100, "summary": "s"},
	}
	f.level == "warning"
	f.path == ["model"]
}

test_headroom_param if {
	count(gpu004.findings) == 0 with input as {
		"kind": "vllm", "paths": {}, "target": {}, "params": {"vram-overcommit": {"headroom": 0.04}},
		"estimate": {"total": 95, "capacity": 100, "summary": "s"},
	}
}

test_fits_quiet if {
	count(gpu004.findings) == 0 with input as {
		"kind": "deepspeed", "paths": {}, "target": {}, "params": {},
		"estimate": {"total": 50, "capacity": 100, "summary": "s"},
	}
}

test_mig_target_left_to_gpu003 if {
	count(gpu004.findings) == 0 with input as {
		"kind": "vllm", "paths": {}, "target": {"mig_profile": {"name": "1g.10gb"}}, "params": {},
		"estimate": {"total": 500, "capacity": 100, "summary": "s"},
	}
}

test_vllm_with_kv_room_left_to_kv_cache_overflow if {
	count(gpu004.findings) == 0 with input as {
		"kind": "vllm", "paths": {}, "target": {}, "params": {},
		"estimate": {"total": 120, "capacity": 100, "summary": "s", "serve": {"kv_cache_tokens": 4096}},
	}
}

# A NIM's server has no kv-cache-overflow rule: a context whose one
# sequence does not fit beside the weights is reported here.
test_nim_with_kv_room_still_over_is_reported if {
	some f in gpu004.findings with input as {
		"kind": "nim", "paths": {"model": ["model"]}, "target": {}, "params": {},
		"estimate": {"total": 120, "capacity": 100, "summary": "s", "serve": {"kv_cache_tokens": 4096}},
	}
	not f.level
}

test_vllm_without_kv_block_is_error if {
	some f in gpu004.findings with input as {
		"kind": "vllm", "paths": {"model": ["model"]}, "target": {}, "params": {},
		"estimate": {"total": 120, "capacity": 100, "summary": "s", "serve": {"kv_cache_tokens": 0}},
	}
	not f.level
}

test_open_sharding_that_decides_is_info if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model_name_or_path"]}, "target": {}, "params": {},
		"estimate": {"open": {
			"input": "sharding", "agree": false, "capacity": 79 * gib,
			"note": "on 8× H100-80GB (79.0 GiB each) the estimate fits with ZeRO-3 at 51.0 GiB and does not fit unsharded (DDP) at 168.0 GiB",
			"settle": "name a DeepSpeed config",
		}},
	}
	count(fs) == 1
	some f in fs
	f.level == "info"
	f.path == ["model_name_or_path"]
	contains(f.message, "fits with ZeRO-3 at 51.0 GiB")
	contains(f.message, "name a DeepSpeed config")
}

test_open_sharding_that_agrees_is_judged_as_one if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model_name_or_path"]}, "target": {}, "params": {},
		"estimate": {
			"total": 90 * gib, "capacity": 79 * gib, "summary": "s, with ZeRO-3",
			"breakdown": {"weights": 1, "gradients": 1, "optimizer_states": 1},
			"open": {"input": "sharding", "agree": true, "capacity": 79 * gib, "note": "exceeds"},
		},
	}
	count(fs) == 1
	some f in fs
	not f.level
	contains(f.message, "with ZeRO-3")
}

test_every_method_overcommitting_does_not_rest_on_the_method if {
	some f in gpu004.findings with input as {
		"kind": "deepspeed", "paths": {"zero.stage": ["zero_optimization", "stage"]}, "target": {}, "params": {},
		"estimate": {
			"total": 90 * gib, "capacity": 79 * gib, "summary": "s",
			"breakdown": {"weights": 80 * gib, "gradients": 0, "optimizer_states": 0},
			"open": {"input": "method", "agree": true, "states_over": true, "note": "so does every method the script may use: LoRA at 85.0 GiB and QLoRA at 82.0 GiB"},
		},
	}
	f.inputs == gpu004.without_method(gpu004.states_inputs)
	not "method" in f.inputs
	"gpu" in f.inputs
	endswith(f.message, "; so does every method the script may use: LoRA at 85.0 GiB and QLoRA at 82.0 GiB")
}

test_a_method_that_fits_keeps_the_method_assumed if {
	some f in gpu004.findings with input as {
		"kind": "deepspeed", "paths": {"zero.stage": ["zero_optimization", "stage"]}, "target": {}, "params": {},
		"estimate": {
			"total": 90 * gib, "capacity": 79 * gib, "summary": "s",
			"breakdown": {"weights": 80 * gib, "gradients": 0, "optimizer_states": 0},
			"open": {"input": "method", "agree": false, "states_over": false, "note": "it would fit with LoRA at 30.0 GiB"},
		},
	}
	f.inputs == gpu004.weights_inputs
	"method" in f.inputs
	contains(f.message, "; it would fit with LoRA at 30.0 GiB")
}

test_a_method_that_fits_is_one_finding if {
	count(gpu004.findings) == 1 with input as {
		"kind": "deepspeed", "paths": {}, "target": {}, "params": {},
		"estimate": {
			"total": 90 * gib, "capacity": 79 * gib, "summary": "s",
			"breakdown": {"weights": 80 * gib, "gradients": 0, "optimizer_states": 0},
			"open": {"input": "method", "agree": false, "states_over": false, "note": "n", "settle": "s"},
		},
	}
}

test_over_only_by_paged_optimizer_state_is_info if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model"]},
		"target": {"gpu": {"name": "RTX4090"}}, "params": {},
		"estimate": {"total": 30 * gib, "capacity": 24 * gib, "paged_optimizer": 8 * gib, "summary": "s",
			"breakdown": {"weights": 15 * gib, "gradients": 0, "optimizer_states": 8 * gib}},
	}
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "only by the paged optimizer's 8.0 GiB")
}

test_over_beyond_paged_optimizer_state_is_still_reported if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model"]},
		"target": {"gpu": {"name": "RTX4090"}}, "params": {},
		"estimate": {"total": 40 * gib, "capacity": 24 * gib, "paged_optimizer": 8 * gib, "summary": "s",
			"breakdown": {"weights": 15 * gib, "gradients": 0, "optimizer_states": 8 * gib, "activations": 17 * gib}},
	}
	count(fs) == 1
	some f in fs
	not f.level
	contains(f.message, "(8.0 GiB of it paged optimizer state")
	"seq_len" in f.inputs
}

# Under the GPU with a paged optimizer's state counted, thin headroom is
# info when the rest alone keeps it (22 of 24 GiB, 8 GiB paged: no worse
# than a run over the GPU only by paged state), and a warning when the
# rest alone is short of it too (23.5 GiB, 0.5 GiB paged).
test_thin_headroom_only_with_paged_state_is_info if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model"]},
		"target": {"gpu": {"name": "RTX4090"}}, "params": {},
		"estimate": {"total": 22 * gib, "capacity": 24 * gib, "paged_optimizer": 8 * gib, "summary": "s",
			"breakdown": {"weights": 12 * gib, "gradients": 0, "optimizer_states": 8 * gib}},
	}
	count(fs) == 1
	some f in fs
	f.level == "info"
	contains(f.message, "(8.0 GiB of it paged optimizer state, which pages to host as the GPU fills: the rest alone keeps the headroom)")
}

test_thin_headroom_beyond_paged_state_is_warning if {
	fs := gpu004.findings with input as {
		"kind": "finetune", "paths": {"model": ["model"]},
		"target": {"gpu": {"name": "RTX4090"}}, "params": {},
		"estimate": {"total": 23.5 * gib, "capacity": 24 * gib, "paged_optimizer": 0.5 * gib, "summary": "s",
			"breakdown": {"weights": 20 * gib, "gradients": 0, "optimizer_states": 0.5 * gib}},
	}
	count(fs) == 1
	some f in fs
	f.level == "warning"
	contains(f.message, "(0.5 GiB of it paged optimizer state; the rest alone is short of the headroom too)")
}
