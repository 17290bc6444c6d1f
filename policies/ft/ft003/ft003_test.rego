package gpulint.rules.ft003_test

import data.gpulint.rules.ft003

recipe(recipe, paths, fits) := {
	"kind": "finetune", "doc": {}, "params": {}, "paths": paths,
	"workload": {"recipe": recipe, "checkpointing": true},
	"target": {"gpu": {"name": "H100-80GB"}},
	"estimate": {"total": 20 * 1073741824, "capacity": 80 * 1073741824, "alternatives": {"no_checkpointing": {"total": 50 * 1073741824, "fits": fits}}},
}

test_trainer_fires_and_turns_it_off if {
	fs := ft003.findings with input as recipe("trainer", {"checkpointing": ["gradient_checkpointing"]}, true)
	count(fs) == 1
	some f in fs
	f.path == ["gradient_checkpointing"]
	f.patch == [{"op": "set", "path": ["gradient_checkpointing"], "value": false}]
	contains(f.message, "50.0 GiB per GPU of 80.0 GiB (20.0 GiB with it)")
}

test_llamafactory_default_sets_disable if {
	some f in ft003.findings with input as recipe("llamafactory", {}, true)
	f.path == []
	f.patch == [{"op": "set", "path": ["disable_gradient_checkpointing"], "value": true}]
}

test_torchtune_key if {
	some f in ft003.findings with input as recipe("torchtune", {"checkpointing": ["enable_activation_checkpointing"]}, true)
	f.patch == [{"op": "set", "path": ["enable_activation_checkpointing"], "value": false}]
}

test_quiet_when_it_would_not_fit if {
	count(ft003.findings) == 0 with input as recipe("trainer", {"checkpointing": ["gradient_checkpointing"]}, false)
}

test_quiet_without_estimate if {
	count(ft003.findings) == 0 with input as object.remove(recipe("trainer", {}, true), ["estimate"])
}
