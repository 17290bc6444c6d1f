package cli

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/gpulint/gpulint/tuner"
)

// notEstimateInputs are the estimate flags that are no row of the inputs
// table, and why: every other flag must be one, so that the table (and
// JSON inputs) names each input a user can set.
var notEstimateInputs = map[string]string{
	"model":       "the model line names it and where it came from",
	"params":      "the model line names it",
	"gpu":         "the header names the GPU and its capacity (a row only when the project file states it)",
	"gpu-memory":  "the header's capacity (a row only when the project file states it)",
	"config":      "the project file; its inputs are rows marked with its line",
	"target-path": "picks the project file's target",
	"format":      "output format",
	"list-gpus":   "lists a catalog instead of estimating",
	"list-models": "lists a catalog instead of estimating",
	"help":        "cobra's help",
}

// TestEveryEstimateFlagIsAnInputRow fails when a flag is added to
// `gpulint estimate` without a row in estimateInputs (or a reason above):
// with every flag given, the rows over all workloads cover the flag set.
func TestEveryEstimateFlagIsAnInputRow(t *testing.T) {
	o := &EstimateOptions{}
	cmd := NewCmdEstimate(nil, nil)
	m := &tuner.Model{ID: "t5-like", Dtype: "bfloat16", MaxPositions: 512, DecoderLayers: 2}
	given := func(string) bool { return true }
	rows := map[string]bool{}
	for _, w := range []tuner.Workload{
		{Kind: tuner.Train, ZeroStage: 3, Sharding: tuner.ZeRO},
		{Kind: tuner.LoRA}, {Kind: tuner.QLoRA}, {Kind: tuner.Inference}, {Kind: tuner.Serve},
	} {
		e := tuner.Estimate{Workload: w}
		if w.Kind == tuner.Serve {
			e.Serve = &tuner.ServeEstimate{}
		}
		for _, in := range o.estimateInputs(e, m, given) {
			rows[in.Name] = true
		}
	}
	var missing []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if _, ok := notEstimateInputs[f.Name]; !ok && !rows[f.Name] {
			missing = append(missing, f.Name)
		}
	})
	if len(missing) > 0 {
		t.Errorf("estimate flags with no inputs row: %v; add each to estimateInputs, or to notEstimateInputs with why", missing)
	}
	for name := range notEstimateInputs {
		if name != "help" && cmd.Flags().Lookup(name) == nil {
			t.Errorf("notEstimateInputs names %q, which is no estimate flag", name)
		}
	}
}
