package gpulint.rules.ray001_test

import data.gpulint.rules.ray001

c(gpu) := {"name": "w", "path": ["spec", "workerGroupSpecs", 0, "template", "spec", "containers", 0], "gpu": gpu, "gpu_path": ["l"], "resources": []}

pod(gpu, extra) := object.union({"path": ["p"], "group": "ray", "containers": [c(gpu)]}, extra)

ray(n) := {"ray": {"group": ["g"], "num_gpus": n, "num_gpus_path": ["n"]}}

test_more_ray_gpus_than_the_limit_fires_with_both_places if {
	fs := ray001.findings with input as {"k8s": {"pods": [pod(1, ray(4))]}}
	count(fs) == 1
	some f in fs
	f.path == ["n"]
	f.related[0].path == ["l"]
	contains(f.message, "num-gpus is 4 but the pod's containers get 1")
}

test_fewer_ray_gpus_than_the_limit_fires if {
	some f in ray001.findings with input as {"k8s": {"pods": [pod(4, ray(2))]}}
	contains(f.message, "the rest sit idle")
}

test_resources_gpu_counts_when_num_gpus_is_absent if {
	some f in ray001.findings with input as {"k8s": {"pods": [pod(0, {"ray": {"group": ["g"], "resource_gpu": 1, "resource_gpu_path": ["r"]}})]}}
	f.path == ["r"]
	contains(f.message, "rayStartParams resources GPU is 1")
}

test_agreeing_counts_are_quiet if {
	count(ray001.findings) == 0 with input as {"k8s": {"pods": [pod(2, ray(2)), pod(0, ray(0)), pod(1, {})]}}
}

test_gpu_node_selector_without_a_limit_fires if {
	hw := {"hardware": [{"label": "cloud.google.com/gke-accelerator", "values": ["nvidia-l4"], "gpus": ["L4"], "path": ["s"]}]}
	some f in ray001.findings with input as {"k8s": {"pods": [pod(0, hw)]}}
	f.path == ["s"]
}

test_unknown_node_label_is_quiet if {
	hw := {"hardware": [{"label": "node.kubernetes.io/instance-type", "values": ["m5.large"], "gpus": [], "path": ["s"]}]}
	count(ray001.findings) == 0 with input as {"k8s": {"pods": [pod(0, hw)]}}
}

test_other_workloads_are_quiet if {
	count(ray001.findings) == 0 with input as {"k8s": {"pods": [object.union(pod(1, ray(4)), {"group": ""})]}}
}

test_accelerator_type_against_node_gpu if {
	fs := ray001.findings with input as {"ray": {"accelerator": {"value": "L4", "gpu": "L4", "node_gpu": "L40S", "path": ["accelerator-type"], "node_path": ["ray-node-gpu"]}}}
	count(fs) == 1
	some f in fs
	f.path == ["accelerator-type"]
	f.related[0].path == ["ray-node-gpu"]
}

test_accelerator_type_agreeing_is_quiet if {
	count(ray001.findings) == 0 with input as {"ray": {"accelerator": {"value": "L40S", "gpu": "L40S", "node_gpu": "L40S", "path": ["a"], "node_path": ["n"]}}}
}
