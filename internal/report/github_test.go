package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/finding"
)

func TestWorkflowCommandEscaping(t *testing.T) {
	tests := []struct {
		in, data, prop string
	}{
		{in: "plain", data: "plain", prop: "plain"},
		{in: "100%", data: "100%25", prop: "100%25"},
		{in: "%0A", data: "%250A", prop: "%250A"},
		{in: "a\nb\r\nc", data: "a%0Ab%0D%0Ac", prop: "a%0Ab%0D%0Ac"},
		{in: "x::error::y", data: "x::error::y", prop: "x%3A%3Aerror%3A%3Ay"},
		{in: "a,b=c", data: "a,b=c", prop: "a%2Cb=c"},
	}
	for _, tc := range tests {
		if got := escapeData(tc.in); got != tc.data {
			t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := escapeProperty(tc.in); got != tc.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

// unescape reverses the toolkit's escaping, as the runner does.
func unescape(s string, prop bool) string {
	pairs := []string{"%0D", "\r", "%0A", "\n"}
	if prop {
		pairs = append(pairs, "%3A", ":", "%2C", ",")
	}
	return strings.NewReplacer(append(pairs, "%25", "%")...).Replace(s)
}

// parseCommand splits a workflow command line as the runner does:
// "::name k=v,k=v::message".
func parseCommand(t *testing.T, line string) (name string, props map[string]string, msg string) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "::")
	if !ok {
		t.Fatalf("not a command: %q", line)
	}
	head, msg, ok := strings.Cut(rest, "::")
	if !ok {
		t.Fatalf("no message separator: %q", line)
	}
	name, list, _ := strings.Cut(head, " ")
	props = map[string]string{}
	for _, kv := range strings.Split(list, ",") {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = unescape(v, true)
	}
	return name, props, unescape(msg, false)
}

// TestGitHubCommandsRoundTrip parses the rendered commands back and checks
// that each finding yields exactly one command whose properties and
// message come back intact, so no value can inject a command of its own.
func TestGitHubCommandsRoundTrip(t *testing.T) {
	in := sampleInput(t)
	in.Findings = append(in.Findings, finding.Finding{
		Rule: "K8S010", Slug: "evil,slug::x", Severity: finding.SeverityError,
		Message: "two\nlines",
		Range:   finding.Range{File: "a,b:c%.yaml", Start: finding.Pos{Line: 3, Col: 1}, End: finding.Pos{Line: 5, Col: 1}},
	}, finding.Finding{Rule: "SCHEMA001", Severity: finding.SeverityInfo, Message: "whole file", Range: finding.Range{File: "f.yaml"}})
	out := render(t, "github", in)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(in.Findings) {
		t.Fatalf("%d lines for %d findings:\n%s", len(lines), len(in.Findings), out)
	}
	type cmd struct {
		Name  string
		Props map[string]string
		Msg   string
	}
	var got []cmd
	for _, l := range lines {
		n, p, m := parseCommand(t, l)
		got = append(got, cmd{n, p, m})
	}
	want := []cmd{
		{"error", map[string]string{"file": dsPath, "line": "2", "col": "23", "endLine": "2", "endColumn": "24", "title": "train-batch-mismatch"},
			"train_batch_size is 48 but 8 × 2 × 4 = 64\nfix: set train_batch_size to 64"},
		{"notice", map[string]string{"file": dsPath, "line": "5", "col": "12", "endLine": "5", "endColumn": "26", "title": "fp16-where-bf16"},
			longMessage},
		{"warning", map[string]string{"file": k8sPath, "line": "4", "col": "9", "endLine": "4", "endColumn": "12", "title": "hostile-name"},
			hostileMessage + "\nfix: rename to <x> & `y` @admin"},
		{"warning", map[string]string{"file": k8sPath, "line": "10", "col": "46", "endLine": "10", "endColumn": "51", "title": "no-memory-headroom"},
			"gpu-memory-utilization 0.99 leaves no headroom for 2 GPUs' CUDA graphs\nfix: set gpu-memory-utilization to 0.92\ntune: set gpu-memory-utilization to 0.90"},
		// A range ending at the start of line 5 ends on line 4; columns
		// are left out for multi-line ranges.
		{"error", map[string]string{"file": "a,b:c%.yaml", "line": "3", "endLine": "4", "title": "evil,slug::x"}, "two\nlines"},
		{"notice", map[string]string{"file": "f.yaml", "title": "SCHEMA001"}, "whole file"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}
