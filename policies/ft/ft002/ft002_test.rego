package gpulint.rules.ft002_test

import data.gpulint.rules.ft002

est(unsharded_fits, lora_fits) := {
	"total": 30 * 1073741824, "capacity": 80 * 1073741824, "fits": true,
	"alternatives": {
		"unsharded": {"total": 140 * 1073741824, "fits": unsharded_fits},
		"lora": {"total": 25 * 1073741824, "fits": lora_fits, "gpus": 1, "rank": 16},
	},
}

full(workload, e) := {
	"kind": "finetune", "doc": {}, "paths": {"model": ["base_model"]}, "params": {},
	"workload": object.union({"recipe": "axolotl", "model": "m", "adapter": {"type": "none"}}, workload),
	"target": {"gpu": {"name": "A100-80GB"}, "gpus": 8},
	"estimate": e,
}

zero3 := {"zero": {"stage": 3, "offload_optimizer": "none", "offload_param": "none"}}

test_zero3_full_finetune_fires if {
	fs := ft002.findings with input as full(zero3, est(false, true))
	count(fs) == 1
	some f in fs
	f.path == ["base_model"]
	contains(f.message, "needs ZeRO-3 across 8 GPUs")
	contains(f.message, "free 7 of the 8 GPUs")
}

test_offload_named if {
	some f in ft002.findings with input as full({"zero": {"stage": 2, "offload_optimizer": "cpu", "offload_param": "none"}}, est(false, true))
	contains(f.message, "ZeRO-2 with optimizer offload")
}

test_fsdp_offload_named if {
	some f in ft002.findings with input as full({"fsdp": {"sharding": "full_shard", "cpu_offload": true}}, est(false, true))
	contains(f.message, "FSDP full_shard with CPU offload")
}

test_quiet_when_unsharded_fits if {
	count(ft002.findings) == 0 with input as full(zero3, est(true, true))
}

test_quiet_when_lora_does_not_fit if {
	count(ft002.findings) == 0 with input as full(zero3, est(false, false))
}

test_quiet_for_lora if {
	count(ft002.findings) == 0 with input as full(object.union(zero3, {"adapter": {"type": "lora"}}), est(false, true))
}

test_quiet_without_sharding if {
	count(ft002.findings) == 0 with input as full({"zero": {"stage": 2, "offload_optimizer": "none", "offload_param": "none"}}, est(false, true))
}

test_quiet_when_it_does_not_fit_at_all if {
	count(ft002.findings) == 0 with input as full(zero3, object.union(est(false, true), {"fits": false}))
}
