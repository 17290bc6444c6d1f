package tuner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOptimizerChoiceSet: a named optimizer sets its regime, its paging
// and, for bitsandbytes' 32-bit PagedAdamW, fp32 states; choosing another
// name clears what the previous one set.
func TestOptimizerChoiceSet(t *testing.T) {
	tests := []struct {
		name string
		want Workload
	}{
		{"adamw", Workload{Optimizer: AdamW}},
		{"paged-adamw", Workload{Optimizer: AdamW, PagedOptimizer: true, FP32OptimizerStates: true}},
		{"paged-adamw8bit", Workload{Optimizer: Adam8bit, PagedOptimizer: true}},
		{"adam8bit", Workload{Optimizer: Adam8bit}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := OptimizerByName(tc.name)
			if !ok {
				t.Fatalf("%s: not a name", tc.name)
			}
			w := Workload{PagedOptimizer: true, FP32OptimizerStates: true}
			c.Set(&w)
			if diff := cmp.Diff(tc.want, w); diff != "" {
				t.Errorf("workload (-want +got):\n%s", diff)
			}
		})
	}
}
