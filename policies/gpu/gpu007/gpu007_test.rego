package gpulint.rules.gpu007_test

import data.gpulint.rules.gpu007

test_fp16_and_bf16_both_on if {
	fs := gpu007.findings with input as {"kind": "deepspeed", "doc": {"fp16": {"enabled": true}, "bf16": {"enabled": true}}}
	count(fs) == 1
	some f in fs
	f.path == ["bf16", "enabled"]
	f.related == [["fp16", "enabled"]]
	contains(f.message, "fp16.enabled and bf16.enabled are both true")
	not f.patch
}

test_legacy_bfloat16_block if {
	some f in gpu007.findings with input as {"kind": "deepspeed", "doc": {"fp16": {"enabled": true}, "bfloat16": {"enabled": true}}}
	f.path == ["bfloat16", "enabled"]
}

test_auto_is_not_a_conflict if {
	count(gpu007.findings) == 0 with input as {"kind": "deepspeed", "doc": {"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}}
}

test_one_disabled_quiet if {
	count(gpu007.findings) == 0 with input as {"kind": "deepspeed", "doc": {"fp16": {"enabled": true}, "bf16": {"enabled": false}}}
}

test_amp_with_fp16 if {
	some f in gpu007.findings with input as {"kind": "deepspeed", "doc": {"fp16": {"enabled": true}, "amp": {"enabled": true}}}
	f.path == ["amp", "enabled"]
}

test_accelerate_mixed_precision_with_ds_file if {
	some f in gpu007.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": "no", "deepspeed_config": {"deepspeed_config_file": "ds.json"}},
		"workload": {"deepspeed_config_file": "ds.json"},
	}
	f.patch == [{"op": "remove", "path": ["mixed_precision"]}]
	contains(f.message, "mixed_precision is 'no' next to deepspeed_config_file ds.json")
}

test_accelerate_unquoted_no if {
	some f in gpu007.findings with input as {
		"kind": "accelerate", "doc": {"mixed_precision": false},
		"workload": {"deepspeed_config_file": "ds.json"},
	}
	contains(f.message, "unquoted NO")
}

test_accelerate_null_mixed_precision_quiet if {
	count(gpu007.findings) == 0 with input as {
		"kind": "accelerate", "doc": {"mixed_precision": null},
		"workload": {"deepspeed_config_file": "ds.json"},
	}
}

test_accelerate_without_ds_file_quiet if {
	count(gpu007.findings) == 0 with input as {"kind": "accelerate", "doc": {"mixed_precision": "bf16"}, "workload": {}}
}

ds_recipe(doc, ds_doc) := {
	"kind": "finetune", "doc": doc, "params": {}, "target": {},
	"workload": {"recipe": "trainer", "precision": "bf16", "deepspeed_config_file": "ds.json"},
	"paths": {"deepspeed_config_file": ["deepspeed"]},
	"related": {"deepspeed": {"file": "ds.json", "doc": ds_doc}},
}

test_recipe_bf16_against_deepspeed_bf16_off if {
	fs := gpu007.findings with input as ds_recipe({"bf16": true, "deepspeed": "ds.json"}, {"bf16": {"enabled": false}})
	count(fs) == 1
	some f in fs
	f.path == ["bf16"]
	f.related == [{"ref": "deepspeed", "path": ["bf16", "enabled"], "message": "bf16.enabled false in ds.json"}]
}

test_recipe_without_fp16_against_deepspeed_fp16_on if {
	some f in gpu007.findings with input as ds_recipe({"bf16": true, "deepspeed": "ds.json"}, {"fp16": {"enabled": true}})
	f.path == ["deepspeed"]
	contains(f.message, "fp16 is false in the recipe but fp16.enabled is true in ds.json")
}

test_recipe_legacy_bfloat16_block if {
	some f in gpu007.findings with input as ds_recipe({"deepspeed": "ds.json"}, {"bfloat16": {"enabled": true}})
	f.related[0].path == ["bfloat16", "enabled"]
}

test_recipe_auto_values_quiet if {
	count(gpu007.findings) == 0 with input as ds_recipe({"bf16": true}, {"bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}})
}

test_recipe_matching_values_quiet if {
	count(gpu007.findings) == 0 with input as ds_recipe({"bf16": true}, {"bf16": {"enabled": true}, "fp16": {"enabled": false}})
}

test_recipe_bf16_and_fp16 if {
	some f in gpu007.findings with input as {
		"kind": "finetune", "doc": {"bf16": true, "fp16": true}, "params": {}, "target": {}, "paths": {},
		"workload": {"recipe": "llamafactory", "precision": "bf16"},
	}
	f.path == ["fp16"]
}
