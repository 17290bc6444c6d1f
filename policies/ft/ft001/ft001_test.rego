package gpulint.rules.ft001_test

import data.gpulint.rules.ft001

recipe(workload, target) := {
	"kind": "finetune", "doc": {},
	"workload": object.union({"recipe": "trainer"}, workload),
	"paths": {}, "target": target, "params": {},
}

test_unset_workers_on_eight_gpus_fires if {
	fs := ft001.findings with input as recipe({}, {"gpus": 8})
	count(fs) == 1
	some f in fs
	f.path == ["dataloader_num_workers"]
	f.patch == [{"op": "set", "path": ["dataloader_num_workers"], "value": 4}]
	contains(f.message, "not set")
}

test_axolotl_zero_workers_fires_at_key if {
	some f in ft001.findings with input as {
		"kind": "finetune", "doc": {}, "params": {},
		"workload": {"recipe": "axolotl", "dataloader": {"workers": 0}},
		"paths": {"dataloader.workers": ["dataloader_num_workers"]}, "target": {"gpus": 4},
	}
	contains(f.message, "dataloader_num_workers is 0")
}

test_pin_memory_off_fires if {
	some f in ft001.findings with input as recipe({"dataloader": {"workers": 8, "pin_memory": false}}, {"gpus": 2})
	f.patch == [{"op": "set", "path": [], "value": true}]
}

test_workers_param if {
	some f in ft001.findings with input as object.union(recipe({}, {"gpus": 8}), {"params": {"dataloader-starved": {"workers": 2}}})
	f.patch[0].value == 2
}

test_ray_workers_count_as_gpus if {
	count(ft001.findings) == 1 with input as recipe({"parallel": {"world_size": 4}}, {})
}

test_single_gpu_quiet if {
	count(ft001.findings) == 0 with input as recipe({}, {"gpus": 1})
}

test_unknown_gpus_quiet if {
	count(ft001.findings) == 0 with input as recipe({}, {})
}

test_workers_set_quiet if {
	count(ft001.findings) == 0 with input as recipe({"dataloader": {"workers": 4}}, {"gpus": 8})
}

test_torchtune_quiet if {
	count(ft001.findings) == 0 with input as recipe({"recipe": "torchtune"}, {"gpus": 8})
}
