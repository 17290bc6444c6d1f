package iostreams_test

import (
	"testing"

	"github.com/gpulint/gpulint/internal/iostreams"
)

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		name       string
		tty        bool
		noColorEnv string
		mode       string
		want       bool
	}{
		{"terminal, NO_COLOR unset", true, "", "auto", true},
		{"terminal, NO_COLOR=1", true, "1", "auto", false},
		// no-color.org: any non-empty value disables colour, even "0".
		{"terminal, NO_COLOR=0", true, "0", "auto", false},
		{"terminal, NO_COLOR=false", true, "false", "auto", false},
		{"pipe", false, "", "auto", false},
		{"--color always beats NO_COLOR", false, "1", "always", true},
		{"--color never on a terminal", true, "", "never", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			ios.SetTTY(tc.tty)
			ios.SetNoColor(iostreams.NoColor(tc.noColorEnv))
			ios.SetColorMode(tc.mode)
			if got := ios.ColorEnabled(); got != tc.want {
				t.Errorf("ColorEnabled() = %v, want %v", got, tc.want)
			}
		})
	}
}
