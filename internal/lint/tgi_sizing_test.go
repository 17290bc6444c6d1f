package lint_test

import (
	"strings"
	"testing"
)

// A TGI container that leaves max_total_tokens to TGI is sized at the
// warmup prefill TGI must hold whatever budget it picks, and the sizing
// says that prefill was assumed; one that states the budget is sized at
// it with nothing assumed. The launcher's default prefill is at most the
// model's max_position_embeddings (GPT-2's 1024).
func TestTGISizingWithoutMaxTotalTokens(t *testing.T) {
	manifest := func(model, env string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:3.0
        env:
        - {name: MODEL_ID, value: ` + model + `}
` + env + `        resources:
          limits:
            nvidia.com/gpu: 1
`
	}
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	_, paths := writeFiles(t, map[string]string{
		"default.yaml": manifest(llama, ""),
		"prefill.yaml": manifest(llama, "        - {name: MAX_BATCH_PREFILL_TOKENS, value: \"1024\"}\n"),
		"stated.yaml":  manifest(llama, "        - {name: MAX_TOTAL_TOKENS, value: \"4096\"}\n"),
		"gpt2.yaml":    manifest("openai-community/gpt2", ""),
	})
	got := sizingsByName(t, paths)
	for name, note := range map[string]string{
		"default.yaml": "assumes seq_len 4096 (TGI's default max_batch_prefill_tokens",
		"prefill.yaml": "assumes seq_len 1024 (the stated max_batch_prefill_tokens",
		"stated.yaml":  "",
		"gpt2.yaml":    "assumes seq_len 1024 (TGI's default max_batch_prefill_tokens",
	} {
		s := got[name]
		if s == nil || !s.Fits || s.GPU != "L4" || s.PerGPUBytes <= 0 {
			t.Errorf("%s: sizing %+v, want the model fitting one L4", name, s)
			continue
		}
		if !strings.HasPrefix(s.Note, note) || (note == "") != (s.Note == "") {
			t.Errorf("%s: note %q, want it to start with %q", name, s.Note, note)
		}
	}
}

// A TGI container whose QUANTIZE is bitsandbytes-nf4 holds its weights in
// 4 bits with a double-quantized absmax (TGI quantizes the checkpoint as
// it loads): Llama 2 70B sharded over two L4s fits, where the same pod
// with bitsandbytes (8-bit) or without QUANTIZE (16-bit, about 64 GiB a
// shard) does not.
func TestTGISizingQuantize(t *testing.T) {
	manifest := func(env string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:1.4.3
        env:
        - {name: MODEL_ID, value: meta-llama/Llama-2-70b-chat-hf}
        - {name: NUM_SHARD, value: "2"}
` + env + `        resources:
          limits:
            nvidia.com/gpu: 2
`
	}
	_, paths := writeFiles(t, map[string]string{
		"bf16.yaml": manifest(""),
		"nf4.yaml":  manifest("        - {name: QUANTIZE, value: bitsandbytes-nf4}\n"),
		"int8.yaml": manifest("        - {name: QUANTIZE, value: bitsandbytes}\n"),
	})
	got := sizingsByName(t, paths)
	const gib = 1 << 30
	for name, want := range map[string]struct {
		fits     bool
		min, max int64 // per-GPU bytes
	}{
		"bf16.yaml": {false, 64 * gib, 80 * gib},
		"nf4.yaml":  {true, 18 * gib, 22 * gib},
		"int8.yaml": {false, 32 * gib, 40 * gib},
	} {
		s := got[name]
		if s == nil || s.GPU != "L4" {
			t.Errorf("%s: sizing %+v, want one on L4", name, s)
			continue
		}
		if s.Fits != want.fits || s.PerGPUBytes < want.min || s.PerGPUBytes > want.max {
			t.Errorf("%s: fits %v at %.1f GiB a GPU, want fits %v within [%d, %d] GiB",
				name, s.Fits, float64(s.PerGPUBytes)/gib, want.fits, want.min/gib, want.max/gib)
		}
	}
}

// A server whose parallel size needs more GPUs than its container gets
// (VLLM001) never starts its workers: its sizing does not fit whatever
// the memory, and says why, with the per-GPU figure each worker would
// need. The same pods with as many workers as GPUs fit, with no reason.
func TestSizingNotStartableWhenParallelExceedsGPUs(t *testing.T) {
	pod := func(container string, gpus int) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
` + container + `        resources:
          limits:
            nvidia.com/gpu: ` + string(rune('0'+gpus)) + `
`
	}
	tgi := func(shards string) string {
		return `      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:1.4.3
        env:
        - {name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}
        - {name: NUM_SHARD, value: "` + shards + `"}
        - {name: MAX_TOTAL_TOKENS, value: "4096"}
`
	}
	vllm := func(tp string) string {
		return `      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "` + tp + `", "--max-model-len", "4096"]
`
	}
	_, paths := writeFiles(t, map[string]string{
		"tgi-over.yaml":  pod(tgi("4"), 2),
		"tgi-even.yaml":  pod(tgi("2"), 2),
		"vllm-over.yaml": pod(vllm("4"), 2),
		"vllm-even.yaml": pod(vllm("2"), 2),
	})
	got := sizingsByName(t, paths)
	for name, want := range map[string]string{
		"tgi-over.yaml":  "num-shard 4 needs 4 GPUs but the server gets 2",
		"tgi-even.yaml":  "",
		"vllm-over.yaml": "needs 4 GPUs but the server gets 2",
		"vllm-even.yaml": "",
	} {
		s := got[name]
		if s == nil || s.GPU != "L4" || s.PerGPUBytes <= 0 || s.PerGPUBytes > s.CapacityBytes {
			t.Errorf("%s: sizing %+v, want a per-GPU figure within one L4", name, s)
			continue
		}
		if s.Fits != (want == "") || !strings.Contains(s.NotStartable, want) || (want == "") != (s.NotStartable == "") {
			t.Errorf("%s: fits %v, not_startable %q; want fits %v and a reason containing %q", name, s.Fits, s.NotStartable, want == "", want)
		}
	}
}

// A vLLM server whose image is a release that no longer serves its model
// (Llama 3.2 Vision after v0.10.2, VLLM006) does not start either: its
// sizing says so; the same pod on v0.10.2 is sized as it fits.
func TestSizingNotStartableWhenReleaseDropsModel(t *testing.T) {
	pod := func(tag string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: vision
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
      - name: vllm
        image: vllm/vllm-openai:` + tag + `
        args: ["--model", "meta-llama/Llama-3.2-11B-Vision-Instruct", "--max-model-len", "8192"]
        resources:
          limits:
            nvidia.com/gpu: 1
`
	}
	_, paths := writeFiles(t, map[string]string{"v0.11.0.yaml": pod("v0.11.0"), "v0.10.2.yaml": pod("v0.10.2")})
	got := sizingsByName(t, paths)
	for name, want := range map[string]string{
		"v0.11.0.yaml": "no longer serves MllamaForConditionalGeneration",
		"v0.10.2.yaml": "",
	} {
		s := got[name]
		if s == nil || s.PerGPUBytes <= 0 || s.PerGPUBytes > s.CapacityBytes {
			t.Errorf("%s: sizing %+v, want one within an H100", name, s)
			continue
		}
		if s.Fits != (want == "") || !strings.Contains(s.NotStartable, want) || (want == "") != (s.NotStartable == "") {
			t.Errorf("%s: fits %v, not_startable %q; want fits %v and a reason containing %q", name, s.Fits, s.NotStartable, want == "", want)
		}
	}
}
