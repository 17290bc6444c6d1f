package gpulint.rules.k8s004_test

import data.gpulint.rules.k8s004

inp(env) := {
	"doc": {"spec": {"containers": [{"name": "vllm", "env": env}]}},
	"k8s": {"pods": [{"path": ["spec"], "containers": [{"name": "vllm", "path": ["spec", "containers", 0]}]}]},
}

test_shell_reference_fires if {
	fs := k8s004.findings with input as inp([{"name": "HF_TOKEN", "value": "$HF_TOKEN"}])
	count(fs) == 1
	some f in fs
	f.path == ["spec", "containers", 0, "env", 0, "value"]
	f.message == "env HF_TOKEN in container \"vllm\" is $HF_TOKEN: Kubernetes expands only $(NAME) references, so the process sees that literal text, not a value from your shell"
}

test_braced_placeholder_fires if {
	count(k8s004.findings) == 1 with input as inp([{"name": "TOKEN", "value": "${HF_TOKEN}"}])
}

test_reference_inside_longer_value_quiet if {
	count(k8s004.findings) == 0 with input as inp([{"name": "ARGS", "value": "--topic kv@${POD_IP}"}])
}

test_kubernetes_reference_quiet if {
	count(k8s004.findings) == 0 with input as inp([{"name": "URL", "value": "http://$(POD_IP):8000"}])
}

test_escaped_and_plain_quiet if {
	count(k8s004.findings) == 0 with input as inp([
		{"name": "A", "value": "$$(KEEP)"},
		{"name": "B", "value": "price $5"},
		{"name": "C", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
	])
}

test_template_manifest_quiet if {
	tmpl := object.union(inp([{"name": "HF_TOKEN", "value": "$HF_TOKEN"}]), {"k8s": {"template": {"value": "$GPUS", "path": ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]}}})
	count(k8s004.findings) == 0 with input as tmpl
}
