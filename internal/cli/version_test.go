package cli_test

import (
	"regexp"
	"testing"

	"github.com/gpulint/gpulint/internal/cli"
)

func TestVersionCommandAndFlag(t *testing.T) {
	want := "gpulint " + cli.CurrentBuild().String() + "\n"
	line := regexp.MustCompile(`^gpulint \S+ \(.*go1\.\d+.* \w+/\w+\)\n$`)
	tests := []struct {
		name string
		args []string
	}{
		{"version command", []string{"version"}},
		{"--version flag", []string{"--version"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, false, nil, tc.args...)
			if code != cli.ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != want {
				t.Errorf("got %q, want %q", out, want)
			}
			if !line.MatchString(out) {
				t.Errorf("%q is not a version line", out)
			}
		})
	}
}
