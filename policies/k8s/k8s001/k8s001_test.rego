package gpulint.rules.k8s001_test

import data.gpulint.rules.k8s001

pods(resources) := {"pods": [{"path": ["spec"], "containers": [{"name": "train", "path": ["spec", "containers", 0], "resources": resources}]}]}

lim := ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]

req := ["spec", "containers", 0, "resources", "requests", "nvidia.com/gpu"]

test_fraction_fires if {
	fs := k8s001.findings with input as {"k8s": pods([{"name": "nvidia.com/gpu", "section": "limits", "value": "0.5", "integer": false, "path": lim}])}
	count(fs) == 1
	some f in fs
	f.path == lim
	contains(f.message, "nvidia.com/gpu is \"0.5\" in container \"train\"'s limits")
}

test_requests_only_moves_to_limits if {
	some f in k8s001.findings with input as {"k8s": pods([{"name": "nvidia.com/gpu", "section": "requests", "value": 2, "integer": true, "count": 2, "path": req}])}
	f.path == req
	f.patch == [{"op": "set", "path": lim, "value": 2}]
}

test_requests_differ_from_limits if {
	some f in k8s001.findings with input as {"k8s": pods([
		{"name": "nvidia.com/gpu", "section": "requests", "value": 2, "integer": true, "count": 2, "path": req},
		{"name": "nvidia.com/gpu", "section": "limits", "value": "1", "integer": true, "count": 1, "path": lim},
	])}
	contains(f.message, "requests (2) and limits (1) differ")
	f.related == [lim]
}

test_equal_quiet if {
	count(k8s001.findings) == 0 with input as {"k8s": pods([
		{"name": "nvidia.com/gpu", "section": "requests", "value": "1", "integer": true, "count": 1, "path": req},
		{"name": "nvidia.com/gpu", "section": "limits", "value": 1, "integer": true, "count": 1, "path": lim},
	])}
}

test_template_variable_quiet if {
	count(k8s001.findings) == 0 with input as {"k8s": pods([
		{"name": "nvidia.com/gpu", "section": "requests", "value": "$GPUS", "integer": false, "placeholder": true, "path": req},
		{"name": "nvidia.com/gpu", "section": "limits", "value": "${GPUS}", "integer": false, "placeholder": true, "path": lim},
	])}
}
