package gpulint.rules.vllm003_test

import data.gpulint.rules.vllm003

est(tokens, mml) := {"summary": "s", "serve": {"kv_cache_tokens": tokens, "max_model_len": mml, "block_size": 16}}

test_default_context_does_not_fit if {
	fs := vllm003.findings with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {"gpu": {"name": "L4"}},
		"estimate": est(41056, 131072),
	}
	count(fs) == 1
	some f in fs
	f.path == []
	f.patch == [{"op": "set", "path": ["max-model-len"], "value": 40960}]
	contains(f.message, "the model's default max_model_len 131072 (max-model-len is not set)")
	contains(f.message, "the estimated maximum model length is 41056")
}

test_explicit_len_named if {
	some f in vllm003.findings with input as {
		"workload": {"serve": {"max_model_len": 32768}}, "paths": {"serve.max_model_len": ["max-model-len"]},
		"target": {}, "estimate": est(20000, 32768),
	}
	f.path == ["max-model-len"]
	startswith(f.message, "max-model-len 32768 does not fit")
}

test_under_1024_tokens_uses_blocks if {
	some f in vllm003.findings with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {}, "estimate": est(800, 4096),
	}
	f.patch[0].value == 800
}

test_partial_block_rounds_up if {
	count(vllm003.findings) == 1 with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {}, "estimate": est(4080, 4081),
	}
	count(vllm003.findings) == 0 with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {}, "estimate": est(4096, 4090),
	}
}

test_fits_quiet if {
	count(vllm003.findings) == 0 with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {}, "estimate": est(4096, 4096),
	}
}

test_no_block_left_to_vram_overcommit if {
	count(vllm003.findings) == 0 with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {}, "estimate": est(0, 4096),
	}
}

test_mig_left_to_gpu003 if {
	count(vllm003.findings) == 0 with input as {
		"workload": {"serve": {}}, "paths": {}, "target": {"mig_profile": {"name": "1g.10gb"}}, "estimate": est(100, 4096),
	}
}
