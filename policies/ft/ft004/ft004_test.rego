package gpulint.rules.ft004_test

import data.gpulint.rules.ft004

qlora(doc, at, fits) := {
	"kind": "finetune", "doc": doc, "params": {}, "paths": {"quantization.bits": at},
	"workload": {"adapter": {"type": "qlora"}, "quantization": {"bits": 4}},
	"target": {"gpu": {"name": "H100-80GB"}},
	"estimate": {"total": 12 * 1073741824, "capacity": 80 * 1073741824, "alternatives": {"bf16_base": {"total": 30 * 1073741824, "fits": fits}}},
}

test_axolotl_qlora_fires if {
	fs := ft004.findings with input as qlora({"load_in_4bit": true, "adapter": "qlora"}, ["load_in_4bit"], true)
	count(fs) == 1
	some f in fs
	f.path == ["load_in_4bit"]
	f.patch == [{"op": "set", "path": ["load_in_4bit"], "value": false}, {"op": "set", "path": ["adapter"], "value": "lora"}]
	contains(f.message, "30.0 GiB of 80.0 GiB")
}

test_trainer_load_in_4bit if {
	some f in ft004.findings with input as qlora({"load_in_4bit": true, "use_peft": true}, ["load_in_4bit"], true)
	f.patch == [{"op": "set", "path": ["load_in_4bit"], "value": false}]
}

test_axolotl_qlora_adapter_only if {
	some f in ft004.findings with input as qlora({"adapter": "qlora"}, ["adapter"], true)
	f.patch == [{"op": "set", "path": ["adapter"], "value": "lora"}]
}

test_llamafactory_removes_quantization_bit if {
	some f in ft004.findings with input as qlora({"quantization_bit": 4}, ["quantization_bit"], true)
	f.patch == [{"op": "remove", "path": ["quantization_bit"]}]
}

test_torchtune_builder if {
	some f in ft004.findings with input as qlora({"model": {"_component_": "torchtune.models.llama2.qlora_llama2_7b"}}, ["model", "_component_"], true)
	f.patch == [{"op": "set", "path": ["model", "_component_"], "value": "torchtune.models.llama2.lora_llama2_7b"}]
}

test_quiet_when_bf16_base_does_not_fit if {
	count(ft004.findings) == 0 with input as qlora({"load_in_4bit": true}, ["load_in_4bit"], false)
}
