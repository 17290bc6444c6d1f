package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/rules"
)

// TestAttachEvidence holds the certainty rule (STYLE §1.8): a finding
// keeps its level only when every input it rests on is stated; one
// resting on an assumed input is info and names how to state it.
func TestAttachEvidence(t *testing.T) {
	seq := finding.Input{Name: "seq_len", Value: "2048", Source: finding.SourceAssumed, Settle: "set targets.seq_len"}
	gpu := finding.Input{Name: "gpu", Value: "H100-80GB", Source: finding.SourceProject}
	method := finding.Input{Name: "method", Value: "full", Source: finding.SourceProject}
	rule := &rules.Rule{ID: "GPU004", Inputs: []string{"gpu", "seq_len", "method"}}
	in := map[string]finding.Input{"gpu": gpu, "seq_len": seq, "method": method}
	tests := []struct {
		name    string
		rule    *rules.Rule
		names   []string
		in      map[string]finding.Input
		sev     finding.Severity
		wantSev finding.Severity
		wantMsg string
		wantEv  []finding.Input
	}{
		{name: "assumed input lowers an error to info and names it", rule: rule, in: in,
			sev: finding.SeverityError, wantSev: finding.SeverityInfo,
			wantMsg: "m; assumes seq_len 2048 (set targets.seq_len)", wantEv: []finding.Input{gpu, seq, method}},
		{name: "a finding narrowed to stated inputs keeps its level", rule: rule, names: []string{"gpu", "method"}, in: in,
			sev: finding.SeverityError, wantSev: finding.SeverityError, wantMsg: "m", wantEv: []finding.Input{gpu, method}},
		{name: "all stated keeps the level", rule: rule, in: map[string]finding.Input{"gpu": gpu, "method": method},
			sev: finding.SeverityWarning, wantSev: finding.SeverityWarning, wantMsg: "m", wantEv: []finding.Input{gpu, method}},
		{name: "an empty narrowing records nothing", rule: rule, names: []string{}, in: in,
			sev: finding.SeverityWarning, wantSev: finding.SeverityWarning, wantMsg: "m"},
		{name: "a rule without inputs is untouched", rule: &rules.Rule{ID: "DS001"}, in: in,
			sev: finding.SeverityError, wantSev: finding.SeverityError, wantMsg: "m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Message: "m", Severity: tc.sev}
			attachEvidence(&f, tc.rule, tc.names, tc.in)
			if f.Severity != tc.wantSev {
				t.Errorf("severity %s, want %s", f.Severity, tc.wantSev)
			}
			if f.Message != tc.wantMsg {
				t.Errorf("message %q, want %q", f.Message, tc.wantMsg)
			}
			if diff := cmp.Diff(tc.wantEv, f.Evidence); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithholdFix holds the fix_needs mechanism: a fix whose safety rests
// on an input is dropped while that input is assumed or unknown, and the
// message says what to state; stated inputs and rules without fix_needs
// keep the fix.
func TestWithholdFix(t *testing.T) {
	fix := []finding.Fix{{Message: "set bf16 to true", Edits: []finding.Edit{{File: "a.json", NewText: "true"}}}}
	gpu := finding.Input{Name: "gpu", Value: "A100-80GB", Source: finding.SourceFlag}
	seq := finding.Input{Name: "seq_len", Value: "2048", Source: finding.SourceAssumed, Settle: "set targets.seq_len"}
	seqFile := finding.Input{Name: "seq_len", Value: "4096", Source: finding.SourceFile}
	needsGPU := &rules.Rule{ID: "GPU001", FixNeeds: []string{"gpu"}}
	needsMem := &rules.Rule{ID: "DS003", FixNeeds: []string{"gpu", "model", "seq_len"}}
	tests := []struct {
		name     string
		rule     *rules.Rule
		in       map[string]finding.Input
		fixes    []finding.Fix
		wantMsg  string
		wantFixN int
	}{
		{name: "gpu stated keeps the fix", rule: needsGPU, in: map[string]finding.Input{"gpu": gpu}, fixes: fix,
			wantMsg: "m", wantFixN: 1},
		{name: "gpu unknown drops the fix", rule: needsGPU, in: map[string]finding.Input{}, fixes: fix,
			wantMsg: "m; no fix until the GPU is known: set --gpu or targets.gpu"},
		{name: "gpu assumed drops the fix", rule: needsGPU,
			in:    map[string]finding.Input{"gpu": {Name: "gpu", Value: "x", Source: finding.SourceAssumed}},
			fixes: fix, wantMsg: "m; no fix until the GPU is known"},
		{name: "several unsettled", rule: needsMem, in: map[string]finding.Input{"gpu": gpu, "seq_len": seq}, fixes: fix,
			wantMsg: "m; no fix until the model and the sequence length are known: set --model or targets.model; set targets.seq_len"},
		{name: "absent seq_len is no use, not unknown", rule: needsMem,
			in:    map[string]finding.Input{"gpu": gpu, "model": {Name: "model", Value: "m", Source: finding.SourceProject}},
			fixes: fix, wantMsg: "m", wantFixN: 1},
		{name: "all stated", rule: needsMem,
			in:    map[string]finding.Input{"gpu": gpu, "seq_len": seqFile, "model": {Name: "model", Value: "m", Source: finding.SourceCatalog}},
			fixes: fix, wantMsg: "m", wantFixN: 1},
		{name: "no fix, no note", rule: needsGPU, in: map[string]finding.Input{}, wantMsg: "m"},
		{name: "rule without fix_needs", rule: &rules.Rule{ID: "DS001"}, in: map[string]finding.Input{}, fixes: fix,
			wantMsg: "m", wantFixN: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Message: "m", Fixes: tc.fixes}
			withholdFix(&f, tc.rule, tc.in)
			if f.Message != tc.wantMsg || len(f.Fixes) != tc.wantFixN {
				t.Errorf("got %q with %d fixes, want %q with %d", f.Message, len(f.Fixes), tc.wantMsg, tc.wantFixN)
			}
		})
	}
}
