package gpulint.rules.ds001_test

import data.gpulint.rules.ds001

paths := {"batch.global": ["train_batch_size"], "batch.micro": ["train_micro_batch_size_per_gpu"], "batch.accumulation": ["gradient_accumulation_steps"]}

test_all_three_mismatch_with_world_fixes if {
	fs := ds001.findings with input as {
		"workload": {"batch": {"global": 48, "micro": 8, "accumulation": 2}},
		"paths": paths, "target": {"gpus": 4},
	}
	count(fs) == 1
	some f in fs
	f.path == ["train_batch_size"]
	f.patch == [{"op": "set", "path": ["train_batch_size"], "value": 64}]
	contains(f.message, "train_batch_size is 48 but train_micro_batch_size_per_gpu 8 × gradient_accumulation_steps 2 × 4 GPUs = 64")
}

test_all_three_match_quiet if {
	count(ds001.findings) == 0 with input as {
		"workload": {"batch": {"global": 64, "micro": 8, "accumulation": 2}}, "paths": paths, "target": {"gpus": 4},
	}
}

test_all_three_without_world_divisible_quiet if {
	count(ds001.findings) == 0 with input as {
		"workload": {"batch": {"global": 64, "micro": 8, "accumulation": 2}}, "paths": paths, "target": {},
	}
}

test_all_three_without_world_not_divisible if {
	some f in ds001.findings with input as {
		"workload": {"batch": {"global": 30, "micro": 4, "accumulation": 2}}, "paths": paths, "target": {},
	}
	not f.patch
	contains(f.message, "no number of GPUs")
}

test_train_and_micro_truncate if {
	some f in ds001.findings with input as {
		"workload": {"batch": {"global": 30, "micro": 4}}, "paths": paths, "target": {"gpus": 8},
	}
	contains(f.message, "gradient_accumulation_steps = 30 // 4 // 8 = 0")
}

test_train_and_accumulation_truncate if {
	some f in ds001.findings with input as {
		"workload": {"batch": {"global": 48, "accumulation": 4}}, "paths": paths, "target": {"gpus": 8},
	}
	contains(f.message, "train_micro_batch_size_per_gpu = 48 // 8 // 4 = 1")
}

test_two_of_three_without_world if {
	some f in ds001.findings with input as {
		"workload": {"batch": {"global": 30, "micro": 4}}, "paths": paths, "target": {},
	}
	contains(f.message, "train_batch_size 30 is not a multiple of train_micro_batch_size_per_gpu 4")
}

test_train_only if {
	some f in ds001.findings with input as {
		"workload": {"batch": {"global": 30}}, "paths": paths, "target": {"gpus": 8},
	}
	contains(f.message, "train_micro_batch_size_per_gpu = 30 // 8 = 3")
}

test_auto_quiet if {
	count(ds001.findings) == 0 with input as {
		"workload": {"batch": {"global": "auto", "micro": 3, "accumulation": "auto"}}, "paths": paths, "target": {"gpus": 8},
	}
}

test_auto_accumulation_is_not_absent if {
	count(ds001.findings) == 0 with input as {
		"workload": {"batch": {"global": 30, "micro": 4, "accumulation": "auto"}}, "paths": paths, "target": {"gpus": 8},
	}
}

recipe(batch, ds_batch, target) := {
	"kind": "finetune", "doc": {}, "params": {}, "target": target,
	"workload": {"recipe": "axolotl", "batch": batch},
	"paths": {"batch.micro": ["micro_batch_size"], "batch.accumulation": ["gradient_accumulation_steps"]},
	"related": {"deepspeed": {"file": "zero2.json", "workload": {"batch": ds_batch}, "paths": {
		"batch.micro": ["train_micro_batch_size_per_gpu"],
		"batch.accumulation": ["gradient_accumulation_steps"], "batch.global": ["train_batch_size"],
	}}},
}

test_recipe_micro_mismatch if {
	fs := ds001.findings with input as recipe({"micro": 4, "accumulation": 2}, {"micro": 2, "accumulation": "auto"}, {})
	count(fs) == 1
	some f in fs
	f.path == ["micro_batch_size"]
	f.related == [{"ref": "deepspeed", "path": ["train_micro_batch_size_per_gpu"], "message": "train_micro_batch_size_per_gpu 2 in zero2.json"}]
}

test_recipe_global_mismatch_at_world if {
	some f in ds001.findings with input as recipe({"micro": 4, "accumulation": 2}, {"global": 64}, {"gpus": 4})
	contains(f.message, "train_batch_size is 64 in zero2.json but micro_batch_size 4 × gradient_accumulation_steps 2 × 4 GPUs = 32")
}

test_recipe_auto_find_batch_size_quiet if {
	count(ds001.findings) == 0 with input as object.union(recipe({"micro": 4, "accumulation": 2}, {"micro": 2}, {}), {"doc": {"auto_find_batch_size": true}})
}

test_recipe_batch_matches_quiet if {
	count(ds001.findings) == 0 with input as recipe({"micro": 4, "accumulation": 2}, {"micro": 4, "accumulation": 2, "global": 32}, {"gpus": 4})
}

test_recipe_rules_ignore_recipe_batch if {
	count(ds001.findings) == 0 with input as object.union(recipe({"micro": 4, "accumulation": 2, "global": 30}, {}, {"gpus": 4}), {"related": {}})
}
