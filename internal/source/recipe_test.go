package source

import "testing"

func TestDetectRecipes(t *testing.T) {
	tests := []struct {
		name, text string
		want       Kind
	}{
		{"trainer arguments", "model_name_or_path: m\nper_device_train_batch_size: 4\nbf16: true\n", KindFinetune},
		{"axolotl", "base_model: m\nmicro_batch_size: 2\nadapter: lora\n", KindFinetune},
		{"llama-factory", "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\n", KindFinetune},
		{"torchtune", "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\n", KindFinetune},
		{"gpt-neox dashed keys", "{\"num-layers\": 12, \"hidden-size\": 768, \"num-attention-heads\": 12,\n \"zero_optimization\": {\"stage\": 1}}\n", KindFinetune},
		{"deepspeed stays deepspeed", "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2, \"bf16\": {\"enabled\": true}}", KindDeepSpeed},
		{"accelerate stays accelerate", "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n", KindAccelerate},
		{"vllm config stays vllm", "model: m\ntensor-parallel-size: 2\nmax-model-len: 4096\n", KindVLLM},
		{"one trainer key is not enough", "output_dir: out\nseed: 1\n", KindUnknown},
		{"a base_model alone is not axolotl", "base_model: m\nname: x\n", KindUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("f.yaml", []byte(tc.text), DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(f); got != tc.want {
				t.Errorf("Detect = %s, want %s", got, tc.want)
			}
		})
	}
}
