package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/cmdline"
)

// TestVLLMInputCUDAGraphs holds where input.vllm says CUDA-graph memory
// lives: reserved inside the budget from v0.21 (or with the profiler's
// variable on), outside before it (or with the variable off), unknown
// when the container states neither, or turns the variable on in a
// release that may predate it.
func TestVLLMInputCUDAGraphs(t *testing.T) {
	cases := []struct {
		name  string
		image string
		env   map[string]string
		want  map[string]any
	}{
		{name: "no release stated", image: "vllm/vllm-openai:latest", want: map[string]any{}},
		{name: "v0.10.1 captures outside", image: "vllm/vllm-openai:v0.10.1", want: map[string]any{
			"release": "v0.10.1", "release_from": "image vllm/vllm-openai:v0.10.1", "capture_rule": "before_v0_11",
			"cuda_graphs": "outside", "cuda_graphs_from": "image vllm/vllm-openai:v0.10.1"}},
		{name: "v0.20.2 captures outside", image: "vllm/vllm-openai:v0.20.2", want: map[string]any{
			"release": "v0.20.2", "release_from": "image vllm/vllm-openai:v0.20.2", "capture_rule": "v0_11",
			"cuda_graphs": "outside", "cuda_graphs_from": "image vllm/vllm-openai:v0.20.2"}},
		{name: "v0.21.0 budgets them", image: "vllm/vllm-openai:v0.21.0", want: map[string]any{
			"release": "v0.21.0", "release_from": "image vllm/vllm-openai:v0.21.0", "capture_rule": "v0_11",
			"cuda_graphs": "budget", "cuda_graphs_from": "image vllm/vllm-openai:v0.21.0"}},
		{name: "v0.21.0 with the profiler off", image: "vllm/vllm-openai:v0.21.0", env: map[string]string{graphEnv: "0"}, want: map[string]any{
			"release": "v0.21.0", "release_from": "image vllm/vllm-openai:v0.21.0", "capture_rule": "v0_11",
			"cuda_graphs": "outside", "cuda_graphs_from": graphEnv + "=0"}},
		{name: "no release, profiler on", image: "vllm/vllm-openai:latest", env: map[string]string{graphEnv: "1"}, want: map[string]any{
			"cuda_graphs": "budget", "cuda_graphs_from": graphEnv + "=1"}},
		{name: "v0.15.0 with the profiler on is unsettled", image: "vllm/vllm-openai:v0.15.0", env: map[string]string{graphEnv: "1"}, want: map[string]any{
			"release": "v0.15.0", "release_from": "image vllm/vllm-openai:v0.15.0", "capture_rule": "v0_11"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cmdline.Recognize(cmdline.Container{Image: tc.image, Env: tc.env, Args: []cmdline.Arg{{Text: "--model=Qwen/Qwen2.5-7B-Instruct"}}})
			if c == nil {
				t.Fatal("no vLLM command recognized")
			}
			if diff := cmp.Diff(tc.want, vllmInput(c)); diff != "" {
				t.Errorf("input.vllm (-want +got):\n%s", diff)
			}
		})
	}
}
