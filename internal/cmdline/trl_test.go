package cmdline

import (
	"reflect"
	"testing"
)

func TestRecognizeTRL(t *testing.T) {
	arg := func(s ...string) []Arg {
		var out []Arg
		for _, x := range s {
			out = append(out, Arg{Text: x})
		}
		return out
	}
	cases := []struct {
		name string
		ct   Container
		want map[string]any // nil: no trl recipe on the command line
		at   map[string][2]int
	}{
		{"trl sft with its options in command and args", Container{Command: arg("trl", "sft"),
			Args: arg("--model_name_or_path", "m", "--per-device-train-batch-size=2", "--bf16", "--learning_rate", "2e-4", "--use_peft", "false")},
			map[string]any{"model_name_or_path": "m", "per_device_train_batch_size": int64(2), "bf16": true, "learning_rate": 2e-4, "use_peft": false},
			map[string][2]int{"model_name_or_path": {2, 3}, "per_device_train_batch_size": {4, 4}, "bf16": {5, 5}}},
		{"bash -c forwarding the args with \"$@\"", Container{Command: arg("/bin/bash", "-c", "mkdir -p /x\n# run\nexec trl dpo \"$@\"\n", "--"),
			Args: arg("--model_name_or_path=m", "--gradient_checkpointing")},
			map[string]any{"model_name_or_path": "m", "gradient_checkpointing": true},
			map[string][2]int{"model_name_or_path": {4, 4}, "gradient_checkpointing": {5, 5}}},
		{"a value from an unstated variable is left out", Container{Command: arg("trl", "sft"),
			Args: arg("--model_name_or_path=m", "--max_seq_length=$(LEN)")},
			map[string]any{"model_name_or_path": "m"}, nil},
		{"a stated variable is expanded", Container{Command: arg("trl", "sft"), Env: map[string]string{"LEN": "512"},
			Args: arg("--model_name_or_path=m", "--max_seq_length=$(LEN)")},
			map[string]any{"model_name_or_path": "m", "max_seq_length": int64(512)}, nil},
		{"a --config recipe file is the launch graph's", Container{Command: arg("trl", "sft", "--config", "recipe.yaml")}, nil, nil},
		{"not a training command", Container{Command: arg("trl", "env")}, nil, nil},
		{"the script runs something after trl", Container{Command: arg("sh", "-c", "trl sft \"$@\"\ncp -r out /data", "--"),
			Args: arg("--model_name_or_path=m")}, nil, nil},
		{"the script passes its own options too", Container{Command: arg("sh", "-c", "trl sft --bf16 \"$@\"", "--"),
			Args: arg("--model_name_or_path=m")}, nil, nil},
		{"vllm is not trl", Container{Command: arg("vllm", "serve", "m")}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := RecognizeTRL(tc.ct)
			if tc.want == nil {
				if r != nil {
					t.Fatalf("RecognizeTRL = %+v, want nil", r)
				}
				return
			}
			if r == nil {
				t.Fatal("RecognizeTRL = nil")
			}
			got, from := r.Recipe()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Recipe() = %#v, want %#v", got, tc.want)
			}
			for k, w := range tc.at {
				if o := from[k]; o.Arg != w[0] || o.Last != w[1] {
					t.Errorf("%s at args %d..%d, want %d..%d", k, o.Arg, o.Last, w[0], w[1])
				}
			}
		})
	}
}
