package lint

import "testing"

// kaitoNodes follows KAITO's node estimator; the cases are its own
// (kaito-project/kaito pkg/workspace/estimator/nodesestimator/
// estimator_test.go @ 056b8280) where they state their inputs, and the
// edges of its formula.
func TestKAITONodes(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name             string
		weights, kv, mem int64
		perNode, want    int
		ok               bool
	}{
		// TestNodeEstimator_EstimateNodeCount_Qwen25Coder32B: a 62.5 GiB
		// preset on Standard_NC24ads_A100_v4 (one 80 GiB A100) is 2 nodes.
		{"62.5 GiB on one 80 GiB GPU a node", 62500 * gib / 1000, 512 << 20, 80 * gib, 1, 2, true},
		// Llama 3.3 70B bf16 (131.4 GiB) on two 80 GiB A100s a node at
		// 16384 tokens (5 GiB of KV): 3 GPUs, so 2 nodes.
		{"70B on two 80 GiB GPUs a node", 1314 * gib / 10, 5 * gib, 80 * gib, 2, 2, true},
		{"8B on one node", 15 * gib, gib / 4, 80 * gib, 2, 1, true},
		// The reserve alone exceeds 0.84 of a 16 GiB GPU: KAITO refuses.
		{"reserve above the budget", 2 * gib, 12 * gib, 16 * gib, 1, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := kaitoNodes(tc.weights, tc.kv, tc.mem, tc.perNode)
			if got != tc.want || ok != tc.ok {
				t.Errorf("kaitoNodes = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
