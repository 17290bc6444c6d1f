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

test_vllm_without_kv_block_is_error if {
	some f in gpu004.findings with input as {
		"kind": "vllm", "paths": {"model": ["model"]}, "target": {}, "params": {},
		"estimate": {"total": 120, "capacity": 100, "summary": "s", "serve": {"kv_cache_tokens": 0}},
	}
	not f.level
}
