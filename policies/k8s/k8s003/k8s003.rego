# METADATA
# title: Time-sliced GPUs advertised as whole GPUs
# custom:
#   id: K8S003
#   slug: time-slicing-overcommit
#   severity: warning
#   rationale: >-
#     With timeSlicing replicas the device plugin advertises each GPU N
#     times with no memory or fault isolation between the pods that share
#     it (kubernetes-gpu.md §4). With renameByDefault false the shares keep
#     the name nvidia.com/gpu, so pods written for a whole GPU get a
#     fraction of one without knowing - the first one to fill memory makes
#     the others fail with CUDA out of memory - and unless
#     failRequestsGreaterThanOne is true a pod asking for two GPUs can get
#     two shares of the same one.
#   remediation: >-
#     Set renameByDefault: true so shares are requested as
#     nvidia.com/gpu.shared, or failRequestsGreaterThanOne: true so pods
#     that ask for more than one share fail at admission; size
#     gpu_memory_utilization and batch sizes for a fraction of the GPU.
#   kinds: [mig, kubernetes]
#   since: 0.1.0
#   fixable: false
#   example: |
#     version: v1
#     sharing:
#       timeSlicing:
#         resources:
#           - name: nvidia.com/gpu
#             replicas: 4
package gpulint.rules.k8s003

import data.gpulint.lib

# Device-plugin configs: the document itself (kind mig), or one held in a
# ConfigMap (reported at its data key).
configs contains {"doc": input.doc, "at": null} if input.kind == "mig"

configs contains {"doc": e.doc, "at": e.path} if {
	input.kind == "kubernetes"
	some e in input.k8s.embedded
	e.kind == "device-plugin"
}

findings contains f if {
	some cfg in configs
	ts := cfg.doc.sharing.timeSlicing
	not ts.renameByDefault == true
	not ts.failRequestsGreaterThanOne == true
	some i, r in ts.resources
	to_number(r.replicas) >= 2
	path := at(cfg, ["sharing", "timeSlicing", "resources", i, "replicas"])
	f := lib.finding(path, sprintf("%s is time-sliced into %v replicas and still advertised as %s (renameByDefault is %s, failRequestsGreaterThanOne is %s): pods asking for a whole GPU share one with no memory isolation, and a pod asking for several can get shares of the same GPU", [r.name, r.replicas, r.name, shown(ts, "renameByDefault"), shown(ts, "failRequestsGreaterThanOne")]))
}

at(cfg, p) := p if cfg.at == null

at(cfg, _) := cfg.at if cfg.at != null

shown(ts, k) := sprintf("%v", [ts[k]]) if {
	k in object.keys(ts)
	ts[k] != null
} else := "not set"
