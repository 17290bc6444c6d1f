package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpulint/gpulint/internal/iostreams"
)

// TestActionLogStaysOnOneLine: text from file names and the API that
// reaches the log or an error message cannot begin a line of its own, so
// it cannot become a workflow command.
func TestActionLogStaysOnOneLine(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	o := &ActionOptions{Factory: &Factory{IO: ios}}
	o.logf("skipped %s: %v", "a\n::error::x.json", errors.New("lstat a\r\n::add-mask::y"))
	if got, want := errOut.String(), "gpulint: skipped a ::error::x.json: lstat a  ::add-mask::y\n"; got != want {
		t.Errorf("log line %q, want %q", got, want)
	}

	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{"usage error", &usageError{fmt.Errorf("input paths: %s: no such file", "x\n::error::y")}, ExitUsage, "gpulint: input paths: x ::error::y: no such file\n"},
		{"internal error", fmt.Errorf("walk %s: denied", "d\r\n::warning::z"), ExitInternal, "gpulint: internal error: walk d  ::warning::z: denied\n"},
		{"findings", findingsError{}, ExitFindings, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			if code := exitCode(ios, oneLineErr(tc.err)); code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			if errOut.String() != tc.wantOut {
				t.Errorf("printed %q, want %q", errOut.String(), tc.wantOut)
			}
		})
	}
	if oneLineErr(nil) != nil {
		t.Error("oneLineErr(nil) is not nil")
	}
}
