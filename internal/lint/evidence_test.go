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
