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

test_cpu_device_quiet if {
	count(vllm005.findings) == 0 with input as {
		"kind": "vllm", "doc": {"device": "cpu", "enforce-eager": true},
		"workload": {"serve": {"enforce_eager": true}}, "paths": {},
	}
}

test_container_without_gpu_quiet if {
	count(vllm005.findings) == 0 with input as {
		"kind": "vllm", "doc": {"enforce-eager": true},
		"workload": {"serve": {"enforce_eager": true}}, "paths": {},
		"k8s": {"container": {"resources": []}},
	}
}

test_container_with_gpu_fires if {
	count(vllm005.findings) == 1 with input as {
		"kind": "vllm", "doc": {"enforce-eager": true},
		"workload": {"serve": {"enforce_eager": true}}, "paths": {},
		"k8s": {"container": {"resources": [{"name": "nvidia.com/gpu", "section": "limits", "count": 1}]}},
	}
}
