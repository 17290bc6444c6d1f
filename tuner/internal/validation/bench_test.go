package validation

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/tuner"
)

// TestBenchRowsMatchResults holds the transcribed rows to the bench's
// result files.
func TestBenchRowsMatchResults(t *testing.T) {
	type spec struct {
		Model, Workload, Precision, Attn string
		OptimizerImpl                    string `json:"optimizer_impl"`
		MicroBatch                       int    `json:"micro_batch"`
		SeqLen                           int    `json:"seq_len"`
		Checkpointing                    bool
		LogitsToKeep                     int `json:"logits_to_keep"`
		Card                             string
	}
	type result struct {
		ID            string
		Status        string
		PeakAllocated int64 `json:"peak_allocated"`
		Spec          spec
	}
	byFile := map[string]map[string]result{}
	for _, name := range []string{"results", "solo"} {
		f, err := os.Open("../../../bench/gpu/results/" + name + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		byFile[name] = map[string]result{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			byFile[name][r.ID] = r
		}
		f.Close()
	}
	for _, b := range benchRows {
		r, ok := byFile[b.file][b.id]
		if !ok {
			t.Errorf("%s: not in %s.jsonl", b.id, b.file)
			continue
		}
		s := r.Spec
		card := s.Card
		if card == "" {
			card = "H200"
		}
		alloc := r.PeakAllocated
		if r.Status != "ok" {
			alloc = 0
		}
		if s.Model != b.model || s.Workload != b.workload || s.Precision != b.precision || s.Attn != b.attn ||
			s.MicroBatch != b.microBatch || s.SeqLen != b.seqLen || s.Checkpointing != b.checkpointing ||
			s.LogitsToKeep != b.logitsToKeep || alloc != b.allocated || r.Status != b.status || card != b.card ||
			(b.workload != "inference" && s.OptimizerImpl != b.optimizer) {
			t.Errorf("%s: row %+v differs from %s.jsonl %+v (%s, %d)", b.id, b, b.file, s, r.Status, r.PeakAllocated)
		}
	}
}

// TestMaxMicroBatchNotAboveMeasured holds the tuner's "largest micro batch
// that fits" to the two measured searches (bench/gpu, an H200's allocator
// capped at the emulated card's capacity less its non-PyTorch memory): with
// the smallest headroom the tuner accepts, the proposal must not exceed the
// largest micro batch that ran. Before the loss and optimizer-step terms the
// tuner proposed 3 (A100-40GB, measured 2) and 9 (L4, measured 3).
func TestMaxMicroBatchNotAboveMeasured(t *testing.T) {
	c, err := tuner.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, model, gpu string
		w                tuner.Workload
		measured         int
	}{
		{"llama-3.2-1b amp s2048 on A100-40GB", "meta-llama/Llama-3.2-1B", "A100-40GB",
			tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Optimizer: tuner.AdamWForeach, SeqLen: 2048}, 2},
		{"qwen2.5-0.5b amp s2048 checkpointing on L4", "Qwen/Qwen2.5-0.5B", "L4",
			tuner.Workload{Kind: tuner.Train, Precision: tuner.AMP, Optimizer: tuner.AdamWForeach, SeqLen: 2048, Checkpointing: true}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := c.Model(tc.model)
			g, _ := c.GPU(tc.gpu)
			for _, h := range []float64{0, tuner.MinPlanHeadroom, tuner.DefaultPlanHeadroom} {
				got := tuner.MaxFittingMicroBatch(m, g.Target(), tc.w, h)
				t.Logf("headroom %.2f: largest fitting micro batch %d (measured %d)", h, got, tc.measured)
				if got > tc.measured || got < 1 {
					t.Errorf("headroom %.2f: proposes micro batch %d, the measured search reached %d", h, got, tc.measured)
				}
			}
		})
	}
}

// TestErrorBandCoversValidation holds the tuner's per-kind under-prediction
// band to the validation rows: no measured peak may be under-predicted by
// more than its kind's band, and no vLLM KV cache over-predicted by more
// than the KV band. Rows of one component (weights, KV memory) are not
// peaks the planner sizes from.
func TestErrorBandCoversValidation(t *testing.T) {
	rs, err := runValidation()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !r.hasMeasure {
			continue
		}
		if r.c.metric == metricKVTokens {
			if band := tuner.KVOverPrediction(); r.errPct > band*100+0.05 {
				t.Errorf("%s: over-predicts vLLM's KV cache by %.1f%%, beyond the band of %.0f%%", r.c.id, r.errPct, band*100)
			}
			continue
		}
		if !r.c.isPeak() {
			continue
		}
		if band := tuner.UnderPrediction(r.c.workload.Kind); -r.errPct > band*100+0.05 {
			t.Errorf("%s: under-predicts by %.1f%%, beyond the %s band of %.0f%%", r.c.id, -r.errPct, r.c.workload.Kind, band*100)
		}
	}
}

// TestCaseIDsUnique: a row's id names it in the table, the notes and the
// CLI test that reproduces it, so two rows may not share one.
func TestCaseIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range allCases() {
		if seen[c.id] {
			t.Errorf("two validation rows share the id %q", c.id)
		}
		seen[c.id] = true
	}
}

// TestSpilledRowsFitByPaging: a run that fitted only because bitsandbytes
// paged its optimizer state to host is over the GPU in the estimate, which
// counts the state, but only by that state, so vram-overcommit reports it
// at info as fitting by paging; the table says so, and its note too.
func TestSpilledRowsFitByPaging(t *testing.T) {
	r, err := Run()
	if err != nil {
		t.Fatal(err)
	}
	table := renderValidationTable(r)
	n := 0
	for _, x := range r.rows {
		if x.c.reported != "spilled" {
			continue
		}
		n++
		if x.predFits || !x.pagedFits || !x.verdictOK {
			t.Errorf("%s: fits %v, fits by paging %v: want over the GPU only by the paged state", x.c.id, x.predFits, x.pagedFits)
		}
		if !strings.Contains(table, "`"+x.c.id+"`") || !strings.Contains(table, "| spilled | fits by paging |") {
			t.Errorf("%s: the table does not say fits by paging", x.c.id)
		}
		if strings.Contains(x.c.note, "says does not fit") || !strings.Contains(x.c.note, "vram-overcommit") {
			t.Errorf("%s: note %q should say what vram-overcommit reports", x.c.id, x.c.note)
		}
	}
	if n == 0 {
		t.Error("no spilled row")
	}
}
