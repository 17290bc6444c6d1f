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
