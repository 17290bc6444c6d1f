# METADATA
# title: Offload setting that the ZeRO stage ignores
# custom:
#   id: DS004
#   slug: offload-param-ignored
#   severity: warning
#   rationale: >-
#     offload_param is valid only with ZeRO stage 3; stages 1 and 2 never
#     read it, and DeepSpeed does not complain, so the parameters stay on
#     the GPU the author meant to free (deepspeed.md §4). Likewise NVMe
#     optimizer offload is stage 3 only: stages 1 and 2 treat any
#     offload_optimizer device, nvme included, as CPU offload, so the
#     optimizer states land in CPU RAM - which may not hold them - instead
#     of on the NVMe path (deepspeed.md §4.1).
#   remediation: >-
#     Remove offload_param below stage 3 (or move to stage 3); set the
#     optimizer offload device to cpu below stage 3, or use stage 3 for
#     NVMe.
#   kinds: [deepspeed, accelerate]
#   since: 0.1.0
#   fixable: true
#   example: |
#     {"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}
package gpulint.rules.ds004

import data.gpulint.lib

zero := object.get(input.workload, "zero", {})

below3 if zero.stage < 3

findings contains f if {
	below3
	dev := zero.offload_param
	dev != "none"
	at := lib.where("zero.offload_param")
	f := lib.with_fix(
		lib.finding(at, sprintf("offload_param (device %s) is ignored at ZeRO stage %d: DeepSpeed reads it only at stage 3, so the parameters stay on the GPU", [dev, zero.stage])),
		"remove offload_param",
		[param_fix(at)],
	)
}

# DeepSpeed JSON: the offload_param block or the legacy cpu_offload_param.
param_fix(at) := lib.remove_op(array.slice(at, 0, 2)) if input.kind == "deepspeed"

param_fix(_) := lib.set_op(["deepspeed_config", "offload_param_device"], "none") if input.kind == "accelerate"

findings contains f if {
	below3
	zero.offload_optimizer == "nvme"
	at := lib.where("zero.offload_optimizer")
	f := lib.with_fix(
		lib.finding(at, sprintf("offload_optimizer device nvme acts as cpu at ZeRO stage %d: NVMe optimizer offload is stage 3 only, so the optimizer states go to CPU RAM instead", [zero.stage])),
		"set the optimizer offload device to cpu",
		[lib.set_op(at, "cpu")],
	)
}
