package cmdline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKServeVLLM(t *testing.T) {
	args := func(ss ...string) Container {
		var c Container
		for _, s := range ss {
			c.Args = append(c.Args, Arg{Text: s})
		}
		return c
	}
	hf := map[string]any{"modelFormat": map[string]any{"name": "huggingface"}, "storageUri": "hf://org/m:rev"}
	tests := []struct {
		name string
		key  string
		spec map[string]any
		ct   Container
		want map[string]any // nil: no vLLM engine
	}{
		{"vllm backend, model from storageUri without revision, server flags dropped", "model", hf,
			args("--backend=vllm", "--max_length=4096", "--http_port=8080"),
			map[string]any{"max-model-len": "4096", "model": "org/m"}},
		{"auto backend with an engine flag, model_id wins", "huggingface", map[string]any{},
			args("--model_id=a/b", "--tensor-parallel-size=2"),
			map[string]any{"tensor-parallel-size": int64(2), "model": "a/b"}},
		{"a pvc storageUri is the path to the weights, kept as the model", "model",
			map[string]any{"modelFormat": map[string]any{"name": "huggingface"}, "storageUri": "pvc://s3-data/llama-31-8b-instruct"},
			args("--tensor-parallel-size=1"),
			map[string]any{"tensor-parallel-size": int64(1), "model": "pvc://s3-data/llama-31-8b-instruct"}},
		{"auto backend without engine flags is transformers", "model", hf, args("--max_length=4096"), nil},
		{"not a huggingface model format", "model", map[string]any{"modelFormat": map[string]any{"name": "sklearn"}}, args("--backend=vllm"), nil},
		{"a command means a custom server", "model", hf, Container{Command: []Arg{{Text: "python"}}, Args: args("--backend=vllm").Args}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd, got := KServeVLLM("m.yaml", tc.key, tc.spec, tc.ct)
			if (cmd == nil) != (tc.want == nil) {
				t.Fatalf("command %v, want vLLM engine: %v", cmd, tc.want != nil)
			}
			if diff := cmp.Diff(tc.want, got); tc.want != nil && diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
