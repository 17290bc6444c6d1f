package gpulint.rules.vllm006_test

import data.gpulint.rules.vllm006

dropped := {"architecture": "MllamaForConditionalGeneration", "model_type": "mllama", "last": "v0.10.2", "since": "v0.11.0"}

test_dropped_fires if {
	fs := vllm006.findings with input as {
		"kind": "vllm", "paths": {"model": ["model"]},
		"vllm": {"release": "v0.11.0", "release_from": "image vllm/vllm-openai:v0.11.0", "dropped": dropped},
	}
	count(fs) == 1
	some f in fs
	f.path == ["model"]
	contains(f.message, "vLLM v0.11.0, from image vllm/vllm-openai:v0.11.0, no longer serves MllamaForConditionalGeneration")
	contains(f.message, "v0.10.2 was the last release to serve it")
}

test_served_quiet if {
	count(vllm006.findings) == 0 with input as {
		"kind": "vllm", "paths": {"model": ["model"]},
		"vllm": {"release": "v0.10.2", "release_from": "image vllm/vllm-openai:v0.10.2"},
	}
}

test_no_release_quiet if {
	count(vllm006.findings) == 0 with input as {"kind": "vllm", "paths": {"model": ["model"]}, "vllm": {}}
}
