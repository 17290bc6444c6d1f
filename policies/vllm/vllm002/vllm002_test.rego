package gpulint.rules.vllm002_test

import data.gpulint.rules.vllm002

test_tp3_on_32_heads if {
	fs := vllm002.findings with input as {
		"workload": {"parallel": {"tp": 3}}, "paths": {"parallel.tp": ["tensor-parallel-size"]},
		"target": {"model": {"id": "meta-llama/Llama-3.1-8B", "heads": 32}},
	}
	count(fs) == 1
	some f in fs
	f.path == ["tensor-parallel-size"]
	contains(f.message, "Total number of attention heads (32) must be divisible by tensor parallel size (3)")
	contains(f.message, "2, 4 divide it")
}

test_tp_divides_quiet if {
	count(vllm002.findings) == 0 with input as {
		"workload": {"parallel": {"tp": 8}}, "paths": {}, "target": {"model": {"id": "m", "heads": 64}},
	}
}

test_unknown_model_quiet if {
	count(vllm002.findings) == 0 with input as {
		"workload": {"parallel": {"tp": 3}}, "paths": {}, "target": {"model": {"id": "m"}},
	}
}
