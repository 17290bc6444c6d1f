package gpulint.rules.vllm005_test

import data.gpulint.rules.vllm005

test_enforce_eager_fires if {
	fs := vllm005.findings with input as {
		"workload": {"serve": {"enforce_eager": true}}, "paths": {"serve.enforce_eager": ["enforce-eager"]},
	}
	count(fs) == 1
	some f in fs
	f.path == ["enforce-eager"]
	f.patch == [{"op": "remove", "path": ["enforce-eager"]}]
}

test_false_quiet if {
	count(vllm005.findings) == 0 with input as {"workload": {"serve": {"enforce_eager": false}}, "paths": {}}
}

test_absent_quiet if {
	count(vllm005.findings) == 0 with input as {"workload": {"serve": {}}, "paths": {}}
}
