package gpulint.rules.k8s002_test

import data.gpulint.rules.k8s002

pod(c, extra) := object.union({"path": ["spec"], "host_ipc": false, "group": "", "containers": [c]}, extra)

c4 := {"name": "train", "path": ["spec", "containers", 0], "gpu": 4, "gpu_path": ["g"], "shm_mount": false}

test_four_gpus_without_shm_adds_volume_and_mount if {
	fs := k8s002.findings with input as {
		"doc": {"spec": {"containers": [{"name": "train"}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	count(fs) == 1
	some f in fs
	f.path == ["g"]
	f.patch == [
		{"op": "set", "path": ["spec", "volumes"], "value": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]},
		{"op": "set", "path": ["spec", "containers", 0, "volumeMounts"], "value": [{"name": "dshm", "mountPath": "/dev/shm"}]},
	]
	contains(f.message, "container \"train\" (gets 4 GPUs)")
}

test_appends_to_existing_lists_and_avoids_taken_name if {
	some f in k8s002.findings with input as {
		"doc": {"spec": {
			"volumes": [{"name": "dshm", "hostPath": {"path": "/data"}}],
			"containers": [{"name": "train", "volumeMounts": [{"name": "dshm", "mountPath": "/data"}]}],
		}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	f.patch == [
		{"op": "set", "path": ["spec", "volumes", 1], "value": {"name": "dshm-2", "emptyDir": {"medium": "Memory"}}},
		{"op": "set", "path": ["spec", "containers", 0, "volumeMounts", 1], "value": {"name": "dshm-2", "mountPath": "/dev/shm"}},
	]
}

test_reuses_unmounted_memory_volume if {
	some f in k8s002.findings with input as {
		"doc": {"spec": {"volumes": [{"name": "cache", "emptyDir": {"medium": "Memory"}}], "containers": [{"name": "train"}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	count(f.patch) == 1
	f.patch[0].value == [{"name": "cache", "mountPath": "/dev/shm"}]
}

test_vllm_tp_counts if {
	some f in k8s002.findings with input as {
		"doc": {"spec": {"containers": [{"name": "vllm"}]}},
		"k8s": {"pods": [pod(object.union(c4, {"gpu": 1, "vllm": {"tp": 2}}), {})]},
	}
	contains(f.message, "runs vLLM with tensor-parallel-size 2")
}

test_host_ipc_quiet if {
	count(k8s002.findings) == 0 with input as {"doc": {}, "k8s": {"pods": [pod(c4, {"host_ipc": true})]}}
}

test_shm_mounted_quiet if {
	count(k8s002.findings) == 0 with input as {"doc": {}, "k8s": {"pods": [pod(object.union(c4, {"shm_mount": true}), {})]}}
}

test_one_gpu_quiet if {
	count(k8s002.findings) == 0 with input as {"doc": {}, "k8s": {"pods": [pod(object.union(c4, {"gpu": 1}), {})]}}
}

test_sleeping_demo_quiet if {
	count(k8s002.findings) == 0 with input as {
		"doc": {"spec": {"containers": [{"name": "train", "command": ["bash", "-c", "sleep 86400"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
}

test_real_command_fires if {
	count(k8s002.findings) == 1 with input as {
		"doc": {"spec": {"containers": [{"name": "train", "command": ["torchrun", "--nproc-per-node=4", "train.py"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
}

test_kserve_skipped if {
	count(k8s002.findings) == 0 with input as {
		"doc": {"apiVersion": "serving.kserve.io/v1alpha1", "spec": {"containers": [{"name": "train"}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
}

test_ray_pods_skipped if {
	count(k8s002.findings) == 0 with input as {"doc": {}, "k8s": {"pods": [pod(c4, {"group": "ray"})]}}
}

test_a_name_is_always_free if {
	some f in k8s002.findings with input as {
		"doc": {"spec": {
			"volumes": [{"name": "dshm", "hostPath": {}}, {"name": "dshm-2", "hostPath": {}}],
			"containers": [{"name": "train"}],
		}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	f.patch[0].value.name == "dshm-3"
}

test_trainjob_skipped if {
	count(k8s002.findings) == 0 with input as {
		"kind": "kubernetes", "doc": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"},
		"k8s": {"pods": [{"path": ["spec", "trainer"], "group": "kubeflow", "host_ipc": false, "containers": [
			{"path": ["spec", "trainer"], "name": "trainer", "gpu": 4, "shm_mount": false},
		]}]},
	}
}

# What the container runs decides the level.
test_torchrun_is_warning if {
	some f in k8s002.findings with input as {
		"doc": {"spec": {"containers": [{"name": "train", "command": ["torchrun", "--nproc_per_node=4", "train.py"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	f.level == "warning"
}

test_distributed_job_kind_is_warning if {
	some f in k8s002.findings with input as {
		"doc": {"kind": "MPIJob", "spec": {"containers": [{"name": "train"}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	f.level == "warning"
}

test_unknown_command_is_info if {
	some f in k8s002.findings with input as {
		"doc": {"kind": "Job", "spec": {"containers": [{"name": "train", "command": ["python", "train.py"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
	f.level == "info"
	contains(f.message, "assumes it runs multi-process GPU work")
}

test_gpu_burn_quiet if {
	count(k8s002.findings) == 0 with input as {
		"doc": {"spec": {"containers": [{"name": "burn", "command": ["/bin/sh", "-lc"], "args": ["while :; do /app/gpu_burn 300 || true; sleep 300; done"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
}

test_nvidia_smi_after_dashdash_quiet if {
	count(k8s002.findings) == 0 with input as {
		"doc": {"spec": {"containers": [{"name": "smi", "command": ["/bin/bash", "-c", "--"], "args": ["nvidia-smi"]}]}},
		"k8s": {"pods": [pod(c4, {})]},
	}
}
