package cli_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionDeadline: an API that never answers cannot hold the Action
// past its timeout input. The run ends with an error naming what was cut
// off, and the report (annotations, summary, outputs, SARIF) is still
// written.
func TestActionDeadline(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hung.Close()
	a := newActionRun(t, hung.URL, prEvent, map[string]string{"configs/ds.json": fp32DS})
	var stdout, stderr string
	var code int
	finishes(t, func() {
		stdout, stderr, code = a.run(t, map[string]string{
			"timeout": "500ms", "only-changed": "false", "suggestions": "false", "sarif-file": "g.sarif",
		})
	})
	want := "the action passed its time limit of 500ms (input timeout) while posting the comment and suggestions"
	if code != 3 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 3 with %q", code, stderr, want)
	}
	if a := annotations(t, stdout); len(a["warning"]) != 1 {
		t.Errorf("annotations %q, want the fp32 warning", a)
	}
	if s := a.read(t, a.summary); !strings.Contains(s, "1 warning") {
		t.Errorf("summary not written:\n%s", s)
	}
	if got := a.outputs(t)["warnings"]; got != "1" {
		t.Errorf("output warnings %q, want 1", got)
	}
	if s := a.read(t, filepath.Join(a.ws, "g.sarif")); !strings.Contains(s, "fp32") {
		t.Errorf("SARIF log without the finding:\n%s", s)
	}
}
