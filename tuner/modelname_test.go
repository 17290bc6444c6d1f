package tuner

import "testing"

func TestModelByName(t *testing.T) {
	c := testCatalog(t)
	tests := []struct{ in, want, via string }{
		// A family and a size the catalog holds, in a fine-tune's name.
		{"acme/llama-3.1-8b-sft-v2", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"my-org/Qwen2.5-7B-Instruct-ft", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{"team/Meta-Llama-3.1-70B-Instruct-lora-merged", "meta-llama/Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B-Instruct"},
		{"acme/gemma-2-9b-it-dpo", "google/gemma-2-9b", "google/gemma-2-9b-it"},
		{"lab/SmolLM2-135M-math", "HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-135M"},
		{"acme/Qwen3-30B-A3B-sft", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B"},
		{"acme/mistral-7b-v0.3-chat", "mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3"},
		{"lab/DeepSeek-R1-Distill-Qwen-1.5B-GRPO", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
		// A name written where dots cannot go (a Kubernetes object name, a
		// storage path named after one), and a weights directory.
		{"pvc://s3-data/llama-31-8b-instruct", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"},
		{"gs://bucket/models/qwen25-7b-instruct/", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{"/data/gemma-3-27b-it", "google/gemma-3-27b-it", "google/gemma-3-27b-it"},
		// A size token keeps its dot: 05b is not 0.5b.
		{"acme/qwen25-05b", "", ""},
		// No catalog name in a row: no family, no size, or a size the
		// family does not have.
		{"acme/llama-8b-sft", "", ""},
		{"acme/llama-3.1-13b-sft", "", ""},
		{"acme/qwen-7b-chat", "", ""},
		{"acme/my-model", "", ""},
		// Two models, or two sizes: ambiguous.
		{"acme/llama-3.1-8b-vs-qwen2.5-7b", "", ""},
		{"acme/llama-3.1-8b-pruned-to-1b", "", ""},
		{"acme/mistral-7b-sft", "", ""}, // v0.1 or v0.3
		// A weight format the catalog name does not carry: other weights.
		{"acme/llama-3.1-8b-sft-awq", "", ""},
		{"acme/Qwen2.5-7B-Instruct-FP8-ft", "", ""},
		{"unsloth/llama-3.1-8b-bnb-4bit-sft", "", ""},
		{"acme/Llama-4-Maverick-17B-128E-Instruct-FP8-eval", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"},
		// Names without a size token are never mapped by name.
		{"acme/gpt2-finetuned", "", ""},
		{"acme/bert-base-uncased-ner", "", ""},
		{"acme/phi-4-sft", "", ""},
	}
	for _, tc := range tests {
		m, via, ok := c.ModelByName(tc.in)
		got := ""
		if ok {
			got = m.ID
		}
		if got != tc.want || via != tc.via {
			t.Errorf("ModelByName(%q) = %q via %q, want %q via %q", tc.in, got, via, tc.want, tc.via)
		}
	}
}
