package gpulint.rules.ds005_test

import data.gpulint.rules.ds005

lenient := [{"what": "comment", "line": 2, "col": 3}, {"what": "trailing comma", "line": 4, "col": 30}]

recipe(flavour, notes) := {
	"kind": "finetune",
	"workload": {"recipe": flavour, "deepspeed_config_file": "ds.json"},
	"paths": {"deepspeed_config_file": ["deepspeed"]},
	"related": {"deepspeed": {"file": "ds.json", "path": "ds.json", "doc": {}, "lenient": notes}},
}

test_trainer_recipe_with_comment if {
	fs := ds005.findings with input as recipe("trainer", lenient)
	count(fs) == 1
	some f in fs
	f.path == ["deepspeed"]
	contains(f.message, "ds.json has a comment at line 2 (2 hjson-only places in all)")
	contains(f.message, "the Hugging Face Trainer loads it with json.load")
	f.related == [{"ref": "deepspeed.lenient", "path": [0], "message": "first comment in ds.json"}]
}

test_one_place_names_no_count if {
	some f in ds005.findings with input as recipe("axolotl", [{"what": "trailing comma", "line": 7, "col": 1}])
	contains(f.message, "ds.json has a trailing comma at line 7, which")
}

test_strict_json_quiet if {
	count(ds005.findings) == 0 with input as recipe("trainer", [])
}

test_torchtune_quiet if {
	count(ds005.findings) == 0 with input as recipe("torchtune", lenient)
}

test_no_named_file_quiet if {
	count(ds005.findings) == 0 with input as {"kind": "finetune", "workload": {"recipe": "trainer"}, "paths": {}}
}

accelerate(dist) := {
	"kind": "accelerate",
	"workload": {"distributed_type": dist, "deepspeed_config_file": "ds.json"},
	"paths": {"deepspeed_config_file": ["deepspeed_config", "deepspeed_config_file"]},
	"related": {"deepspeed": {"file": "ds.json", "path": "ds.json", "doc": {}, "lenient": lenient}},
}

test_accelerate_deepspeed if {
	some f in ds005.findings with input as accelerate("DEEPSPEED")
	f.path == ["deepspeed_config", "deepspeed_config_file"]
	contains(f.message, "Accelerate loads it with json.load")
}

test_accelerate_not_launching_deepspeed_quiet if {
	count(ds005.findings) == 0 with input as accelerate("MULTI_GPU")
}
