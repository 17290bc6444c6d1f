package cmdline

import (
	"reflect"
	"strings"
	"testing"
)

func TestRecognizeTGI(t *testing.T) {
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
		gpus int
		want map[string]any // nil: not TGI, or no estimate
	}{
		{"env only, image entrypoint", Container{Image: "ghcr.io/huggingface/text-generation-inference:2.4.1",
			Env: map[string]string{"MODEL_ID": "google/gemma-2-27b-it", "NUM_SHARD": "4", "MAX_TOTAL_TOKENS": "2048",
				"MAX_BATCH_PREFILL_TOKENS": "2048", "CUDA_MEMORY_FRACTION": "0.93"}}, 4,
			map[string]any{"model": "google/gemma-2-27b-it", "tensor-parallel-size": int64(4), "max-model-len": int64(2048),
				"max-num-batched-tokens": int64(2048), "gpu-memory-utilization": 0.93}},
		{"Google Cloud DLC image, shards default to the GPUs", Container{
			Image: "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311",
			Env:   map[string]string{"MODEL_ID": "m", "MAX_TOTAL_TOKENS": "1024"}}, 2,
			map[string]any{"model": "m", "tensor-parallel-size": int64(2), "max-model-len": int64(1024), "gpu-memory-utilization": 1.0}},
		{"flags win over env; bitsandbytes is 8-bit", Container{Command: arg("/usr/local/bin/text-generation-launcher"),
			Args: arg("--model-id", "m", "--max-total-tokens=512", "--quantize", "bitsandbytes", "--sharded", "false"),
			Env:  map[string]string{"MODEL_ID": "other", "MAX_TOTAL_TOKENS": "9999"}}, 4,
			map[string]any{"model": "m", "tensor-parallel-size": int64(1), "max-model-len": int64(512), "quantization": "int8", "gpu-memory-utilization": 1.0}},
		{"bitsandbytes-nf4 is 4-bit with double-quantized absmax", Container{Image: "ghcr.io/huggingface/text-generation-inference:1.4.3",
			Env: map[string]string{"MODEL_ID": "m", "MAX_TOTAL_TOKENS": "2048", "QUANTIZE": "bitsandbytes-nf4"}}, 2,
			map[string]any{"model": "m", "tensor-parallel-size": int64(2), "max-model-len": int64(2048), "quantization": "nf4-dq", "gpu-memory-utilization": 1.0}},
		{"no max total tokens: sized at the launcher's default warmup prefill", Container{Image: "ghcr.io/huggingface/text-generation-inference:3.0",
			Env: map[string]string{"MODEL_ID": "m"}}, 1,
			map[string]any{"model": "m", "tensor-parallel-size": int64(1), "max-model-len": int64(4096), "max-num-batched-tokens": int64(4096), "gpu-memory-utilization": 1.0}},
		{"no max total tokens: sized at the stated warmup prefill", Container{Image: "ghcr.io/huggingface/text-generation-inference:3.0",
			Env: map[string]string{"MODEL_ID": "m", "MAX_BATCH_PREFILL_TOKENS": "1024"}}, 1,
			map[string]any{"model": "m", "tensor-parallel-size": int64(1), "max-model-len": int64(1024), "max-num-batched-tokens": int64(1024), "gpu-memory-utilization": 1.0}},
		{"model from an unstated variable", Container{Image: "ghcr.io/huggingface/text-generation-inference",
			Args: arg("--model-id=$(SECRET_MODEL)", "--max-total-tokens", "10")}, 1, nil},
		{"exl2 has no weight format", Container{Image: "ghcr.io/huggingface/text-generation-inference",
			Args: arg("--model-id=m", "--max-total-tokens", "10", "--quantize", "exl2")}, 1, nil},
		{"a vLLM image is not TGI", Container{Image: "vllm/vllm-openai:v0.9.0", Env: map[string]string{"MODEL_ID": "m", "MAX_TOTAL_TOKENS": "10"}}, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tgi := RecognizeTGI(c.ct)
			if tgi == nil {
				if c.want != nil {
					t.Fatalf("not recognised, want %v", c.want)
				}
				return
			}
			got, _, assumed, err := tgi.ServeConfig(c.gpus)
			if c.want == nil {
				if err == nil {
					t.Fatalf("ServeConfig = %v, want an error", got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ServeConfig = %v, %v; want %v", got, err, c.want)
			}
			// A budget TGI picks itself is an assumed input.
			_, stated := c.ct.Env["MAX_TOTAL_TOKENS"]
			for _, a := range c.ct.Args {
				stated = stated || strings.HasPrefix(a.Text, "--max-total-tokens")
			}
			if (assumed == "") != stated {
				t.Errorf("assumed = %q with max total tokens stated %v", assumed, stated)
			}
		})
	}
}

// An option a memory estimate reads that env may set from a value the
// manifest does not state (valueFrom, envFrom) gives no estimate rather
// than the launcher's default.
func TestTGIEnvUnknown(t *testing.T) {
	ct := Container{Image: "ghcr.io/huggingface/text-generation-inference:2.4.1",
		Env:        map[string]string{"MODEL_ID": "m", "MAX_TOTAL_TOKENS": "1024"},
		EnvUnknown: func(name string) bool { return name == "NUM_SHARD" }}
	if cfg, _, _, err := RecognizeTGI(ct).ServeConfig(2); err == nil {
		t.Errorf("ServeConfig = %v, want an error: NUM_SHARD is set from an unknown value", cfg)
	}
	ct.EnvUnknown = func(string) bool { return false }
	if _, _, _, err := RecognizeTGI(ct).ServeConfig(2); err != nil {
		t.Errorf("ServeConfig: %v", err)
	}
}

func TestTGIDefaultMaxTotalTokens(t *testing.T) {
	for rel, want := range map[string]int64{"1.1.0": 2048, "v1.4.5": 2048, "2.0.0": 0, "3.0.0": 0, "1": 0, "": 0, "latest": 0} {
		if got, ok := TGIDefaultMaxTotalTokens(rel); got != want || ok != (want > 0) {
			t.Errorf("TGIDefaultMaxTotalTokens(%q) = %d, %v; want %d", rel, got, ok, want)
		}
	}
}
