package tuner

import (
	"math"
	"testing"
)

// TestCUDAGraphsHoldPublishedPools holds the CUDA-graph pool to vLLM
// 0.19's "Graph capturing finished in N secs, took X GiB" on H100-80GB at
// its defaults there (max_num_seqs 1024, max_num_batched_tokens 8192):
// llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs
// @d3121e059da88662db39a926a3ead964be97359b. Every figure must lie in
// [Low, High]; the dense ones within 30 % of Bytes.
func TestCUDAGraphsHoldPublishedPools(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		log    string
		model  string
		tp, pp int
		took   float64 // GiB
	}{
		{"meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192", "meta-llama/Llama-3.1-8B", 1, 1, 0.91},
		{"meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192", "meta-llama/Llama-3.1-8B", 1, 2, 0.65},
		{"meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192", "meta-llama/Llama-3.1-8B", 1, 4, 0.51},
		{"meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192", "meta-llama/Llama-3.1-8B", 2, 1, 0.76},
		{"meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192", "meta-llama/Llama-3.1-8B", 4, 1, 0.67},
		{"qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--8192", "Qwen/Qwen2.5-7B-Instruct", 1, 1, 0.87},
		{"qwen-qwen2-5-7b-instruct--h100-80gb--tp2pp1dp1--8192", "Qwen/Qwen2.5-7B-Instruct", 2, 1, 0.71},
		{"qwen-qwen2-5-7b-instruct--h100-80gb--tp4pp1dp1--8192", "Qwen/Qwen2.5-7B-Instruct", 4, 1, 0.64},
		{"qwen-qwen2-5-72b-instruc--h100-80gb--tp2pp1dp1--8192", "Qwen/Qwen2.5-72B-Instruct", 2, 1, 1.61},
		{"redhatai-llama-3-3-70b-i--h100-80gb--tp2pp1dp1--8192 (Llama-3.3-70B, the 3.1 architecture)", "meta-llama/Llama-3.1-70B", 2, 1, 1.85},
		{"google-gemma-2-2b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-2b", 1, 1, 0.71},
		{"google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-9b", 1, 1, 1.09},
		{"google-gemma-2-27b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-2-27b", 1, 1, 1.23},
		{"google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192", "google/gemma-3-4b-it", 1, 1, 0.67},
		{"microsoft-phi-4--h100-80gb--tp1pp1dp1--8192", "microsoft/phi-4", 1, 1, 1.07},
		{"qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192", "Qwen/Qwen3-8B", 1, 1, 0.96},
		{"qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192 (MoE)", "Qwen/Qwen3-30B-A3B", 1, 1, 1.41},
		{"deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192 (DeepSeek-V2-Lite, MoE)", "deepseek-ai/DeepSeek-V2-Lite", 1, 1, 1.57},
		{"mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192 (MoE)", "mistralai/Mixtral-8x7B-v0.1", 2, 1, 0.93},
	}
	for _, tc := range cases {
		t.Run(tc.log, func(t *testing.T) {
			m := mustModel(t, c, tc.model)
			g := vllmCUDAGraphs(m, 1024, 8192, tc.tp, tc.pp)
			if g.Graphs != 102 || g.MaxSize != 512 {
				t.Fatalf("graphs %d up to %d, want 102 (51 piecewise + 51 FULL) up to 512 as the logs print", g.Graphs, g.MaxSize)
			}
			took := int64(tc.took * float64(GiB))
			if took < g.Low || took > g.High {
				t.Errorf("took %.2f GiB outside [%.2f, %.2f]", tc.took, float64(g.Low)/float64(GiB), float64(g.High)/float64(GiB))
			}
			if m.MoE == nil {
				if r := float64(took) / float64(g.Bytes); math.Abs(r-1) > 0.30 {
					t.Errorf("took %.2f GiB is %.2f× the estimate %.2f GiB", tc.took, r, float64(g.Bytes)/float64(GiB))
				}
			}
		})
	}
}

// TestCUDAGraphCaptureSizes checks the counts against vLLM's rules: the
// v0.11+ list [1, 2, 4] + range(8, 256, 8) + range(256, max+1, 16) with
// max = min(2 × max_num_seqs, 512, max_num_batched_tokens), FULL decode
// graphs up to max_num_seqs; before v0.11, [1, 2, 4] + range(8, 513, 8).
func TestCUDAGraphCaptureSizes(t *testing.T) {
	m := &Model{Layers: 32}
	cases := []struct {
		name                 string
		mns, mnbt            int
		graphs, legacy, maxS int
	}{
		{"H100 defaults", 1024, 8192, 51 + 51, 67, 512},
		{"max_num_seqs 256", 256, 8192, 51 + 35, 67, 512},
		{"max_num_seqs 8", 8, 2048, 5 + 4, 67, 16},
		{"max_num_batched_tokens 256", 256, 256, 35 + 35, 35, 256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := vllmCUDAGraphs(m, tc.mns, tc.mnbt, 1, 1)
			if g.Graphs != tc.graphs || g.Legacy != tc.legacy || g.MaxSize != tc.maxS {
				t.Errorf("graphs %d, legacy %d, max %d; want %d, %d, %d", g.Graphs, g.Legacy, g.MaxSize, tc.graphs, tc.legacy, tc.maxS)
			}
			if !(g.Low < g.Bytes && g.Bytes < g.High) {
				t.Errorf("bounds %d < %d < %d do not hold", g.Low, g.Bytes, g.High)
			}
		})
	}
}
