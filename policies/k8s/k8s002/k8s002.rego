# METADATA
# title: Multi-GPU container without shared memory
# custom:
#   id: K8S002
#   slug: missing-shm
#   severity: warning
#   levels: [warning, info]
#   rationale: >-
#     Container runtimes give /dev/shm 64 MiB. NCCL's intra-node transport,
#     PyTorch DataLoader workers and vLLM's tensor-parallel workers
#     (multiprocessing, custom all-reduce) exchange data through it, so a
#     multi-GPU container without a memory-backed /dev/shm dies with "No
#     space left on device" or NCCL "unhandled system error" once real
#     batches flow, or falls back to slower transports
#     (kubernetes-gpu.md §6). A memory-backed emptyDir mounted at
#     /dev/shm, or hostIPC, lifts the limit; the tmpfs counts against the
#     pod's memory limit. Skipped: KServe resources (their pods are merged
#     with runtime templates the file does not show) and Kubeflow TrainJobs
#     (merged with their training runtime the same way), Ray pod templates
#     (KubeRay adds a memory-backed /dev/shm to every Ray container itself:
#     ray-project/kuberay ray-operator/controllers/ray/common/pod.go,
#     addEmptyDir with SharedMemoryVolumeMountPath), and containers that
#     only sleep or run single-process GPU tools (nvidia-smi, gpu-burn,
#     dcgmproftester). What the container runs decides the level: a
#     warning when its command, args or image name a multi-process GPU
#     launcher (torchrun, deepspeed, accelerate, the TRL CLI's training
#     commands, horovodrun, mpirun, ray, vLLM with tensor parallelism) or
#     the resource is a distributed training job (PyTorchJob, MPIJob,
#     TFJob, ...); info when the file does not say what runs.
#   remediation: >-
#     Add a volume {name: dshm, emptyDir: {medium: Memory}} to the pod and
#     mount it at /dev/shm in the container (or set hostIPC: true).
#   kinds: [kubernetes]
#   since: 0.1.0
#   fixable: true
#   example: |
#     containers:
#       - name: vllm
#         args: ["--tensor-parallel-size", "4"]
#         resources: {limits: {nvidia.com/gpu: 4}}
package gpulint.rules.k8s002

import data.gpulint.lib

# Why a container needs more than 64 MiB of /dev/shm.
need(c) := sprintf("runs vLLM with tensor-parallel-size %d", [c.vllm.tp]) if {
	c.vllm.tp > 1
} else := sprintf("gets %d GPUs", [c.gpu]) if {
	c.gpu > 1
}

needy(pod) := [c | some c in pod.containers; need(c); not c.shm_mount; not idle(c)]

# words is what a container runs: its command, args and image, lower-cased.
words(c) := lower(concat(" ", array.concat([w | some k in ["command", "args"]; some w in object.get(input.doc, array.concat(c.path, [k]), []); is_string(w)], [object.get(c, "image", "")])))

# A container that only sleeps or runs single-process GPU tools (device
# checks, burn-in, demos) runs no NCCL and no DataLoader workers.
idle(c) if {
	line := concat(" ", [w | some k in ["command", "args"]; some w in object.get(input.doc, array.concat(c.path, [k]), []); is_string(w); not w in {"sh", "bash", "/bin/sh", "/bin/bash", "-c", "-lc", "--"}])
	regex.match(`^\s*(sleep\s+\S+|sleep infinity|tail -f /dev/null|nvidia-smi[^;&|]*)\s*$`, line)
}

idle(c) if {
	regex.match(`(^|[/\s_-])(gpu[_-]?burn|nvidia-smi|dcgmproftester\d*|devicequery|vectoradd)([\s:;]|$)`, words(c))
	not multiprocess(c)
}

# multiprocess holds when what the container runs is a multi-process GPU
# launcher, whose ranks or workers talk through /dev/shm. The TRL CLI's
# training commands are accelerate launch: trl sft, dpo, grpo and kto hand
# their script to accelerate's launch_command (huggingface/trl trl/cli.py @
# 02d936cb), as reward and rloo do in later releases (docs/source/clis.md).
multiprocess(c) if regex.match(`(^|[/\s])(torchrun|torch\.distributed\.(launch|run)|deepspeed|accelerate launch|trl (sft|dpo|grpo|kto|rloo|reward)|horovodrun|mpirun|mpiexec|ray start|all_reduce_perf|nccl-tests)([\s:]|$)`, words(c))

multiprocess(c) if c.vllm.tp > 1

# Operators of distributed training start one multi-process rank per GPU.
distributed_kinds := {"PyTorchJob", "MPIJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"}

level(cs) := "warning" if {
	some c in cs
	multiprocess(c)
} else := "warning" if {
	input.doc.kind in distributed_kinds
} else := "info"

# KServe builds its pods from the resource merged with a serving runtime
# or preset template, so the file alone does not show the pod's volumes.
operator_merged if startswith(input.doc.apiVersion, "serving.kserve.io/")

# A Kubeflow TrainJob's trainer is merged into its training runtime's pod
# template the same way.
operator_merged if {
	startswith(input.doc.apiVersion, "trainer.kubeflow.org/")
	input.doc.kind == "TrainJob"
}

findings contains f if {
	not operator_merged
	some pod in input.k8s.pods
	pod.group != "ray" # KubeRay mounts /dev/shm in every Ray container
	not pod.host_ipc
	cs := needy(pod)
	count(cs) > 0
	c := cs[0]
	names := concat(", ", [sprintf("%q (%s)", [x.name, need(x)]) | some x in cs])
	f := lib.with_level(lib.with_fix(
		lib.finding(object.get(c, "gpu_path", c.path), sprintf("container %s without a memory-backed /dev/shm or hostIPC: the runtime's 64 MiB /dev/shm is too small for NCCL, DataLoader workers and vLLM's tensor-parallel workers%s", [names, assumes(cs)])),
		fix_message(pod),
		patch(pod, cs),
	), level(cs))
}

volumes(pod) := object.get(input.doc, array.concat(pod.path, ["volumes"]), null)

# A memory-backed emptyDir the pod already has, else a new one.
existing(pod) := ns[0] if {
	ns := [v.name | some v in volumes(pod); lower(object.get(v, ["emptyDir", "medium"], "")) == "memory"]
	count(ns) > 0
}

taken(pod) := {v.name | some v in volumes(pod)} if {
	is_array(volumes(pod))
} else := set()

name(pod) := n if {
	n := existing(pod)
} else := free[0] if {
	# One more candidate than the pod has volumes, so one is always free.
	candidates := array.concat(["dshm"], [sprintf("dshm-%d", [i]) | some i in numbers.range(2, count(taken(pod)) + 1)])
	free := [n | some n in candidates; not taken(pod)[n]]
}

fix_message(pod) := sprintf("mount the pod's memory-backed volume %s at /dev/shm", [existing(pod)]) if existing(pod)

fix_message(pod) := sprintf("add a memory-backed emptyDir volume %s and mount it at /dev/shm", [name(pod)]) if not existing(pod)

patch(pod, cs) := array.concat(add_volume(pod), [op | some c in cs; op := mount(c, name(pod))])

add_volume(pod) := [] if existing(pod)

add_volume(pod) := [lib.set_op(array.concat(pod.path, ["volumes", count(volumes(pod))]), vol(pod))] if {
	not existing(pod)
	is_array(volumes(pod))
}

add_volume(pod) := [lib.set_op(array.concat(pod.path, ["volumes"]), [vol(pod)])] if {
	not existing(pod)
	not is_array(volumes(pod))
}

vol(pod) := {"name": name(pod), "emptyDir": {"medium": "Memory"}}

mount(c, n) := lib.set_op(array.concat(c.path, ["volumeMounts", count(ms)]), {"name": n, "mountPath": "/dev/shm"}) if {
	ms := object.get(input.doc, array.concat(c.path, ["volumeMounts"]), null)
	is_array(ms)
}

mount(c, n) := lib.set_op(array.concat(c.path, ["volumeMounts"]), [{"name": n, "mountPath": "/dev/shm"}]) if {
	not is_array(object.get(input.doc, array.concat(c.path, ["volumeMounts"]), null))
}

assumes(cs) := "" if level(cs) == "warning"

assumes(cs) := "; assumes it runs multi-process GPU work: its command does not name a launcher (torchrun, deepspeed, accelerate, mpirun, ray)" if level(cs) == "info"
