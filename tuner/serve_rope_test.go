package tuner

import "testing"

// vLLM builds the rotary cos/sin table as a model buffer of
// max_position_embeddings × rotary_dim in the model dtype, once per rope
// setup and whole on every rank, and "Model loading took" counts it: the
// served weights are the checkpoint's plus that table.
func TestServeWeightsCountRopeCache(t *testing.T) {
	c := testCatalog(t)
	h100 := mustGPU(t, c, "H100-80GB").Target()
	for _, tc := range []struct {
		model string
		tp    int
		rope  int64
	}{
		{"meta-llama/Llama-3.1-8B-Instruct", 1, 131072 * 128 * 2},
		{"meta-llama/Llama-3.1-8B-Instruct", 2, 131072 * 128 * 2},
		{"deepseek-ai/DeepSeek-V3", 8, 163840 * 64 * 2},    // MLA: the rope part of the head only
		{"openai-community/gpt2", 1, 0},                    // learned positions
		{"google/gemma-3-27b-it", 1, 2 * 131072 * 128 * 2}, // local and global rope settings: two tables
		{"google/gemma-2-9b", 1, 8192 * 256 * 2},           // one setting on every layer
	} {
		m := mustModel(t, c, tc.model)
		w := Workload{Kind: Serve, MaxModelLen: 2048, TensorParallel: tc.tp}
		if tc.model == "deepseek-ai/DeepSeek-V3" {
			w.WeightQuant = "fp8"
		}
		e := estimate(t, m, h100, w)
		r, err := w.resolve(m)
		if err != nil {
			t.Fatal(err)
		}
		f, err := servingWeightFormat(m, r)
		if err != nil {
			t.Fatal(err)
		}
		want := weightBytes(m, f)/int64(r.modelShard) + tc.rope
		if e.PerGPU.Weights != want {
			t.Errorf("%s tp=%d: weights %d, want checkpoint %d + rope table %d", tc.model, tc.tp, e.PerGPU.Weights, want-tc.rope, tc.rope)
		}
	}
}
