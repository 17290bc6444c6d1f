package gpulint.rules.k8s003_test

import data.gpulint.rules.k8s003

ts(extra) := {"version": "v1", "sharing": {"timeSlicing": object.union({"resources": [{"name": "nvidia.com/gpu", "replicas": 10}]}, extra)}}

test_replicas_without_rename_fire if {
	fs := k8s003.findings with input as {"kind": "mig", "doc": ts({"renameByDefault": false})}
	count(fs) == 1
	some f in fs
	f.path == ["sharing", "timeSlicing", "resources", 0, "replicas"]
	contains(f.message, "nvidia.com/gpu is time-sliced into 10 replicas and still advertised as nvidia.com/gpu (renameByDefault is false, failRequestsGreaterThanOne is not set)")
}

test_rename_quiet if {
	count(k8s003.findings) == 0 with input as {"kind": "mig", "doc": ts({"renameByDefault": true})}
}

test_fail_requests_quiet if {
	count(k8s003.findings) == 0 with input as {"kind": "mig", "doc": ts({"failRequestsGreaterThanOne": true})}
}

test_mps_quiet if {
	count(k8s003.findings) == 0 with input as {"kind": "mig", "doc": {"version": "v1", "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}}
}

test_configmap_reported_at_data_key if {
	some f in k8s003.findings with input as {"kind": "kubernetes", "doc": {}, "k8s": {"pods": [], "embedded": [{"kind": "device-plugin", "path": ["data", "any"], "doc": ts({})}]}}
	f.path == ["data", "any"]
}
