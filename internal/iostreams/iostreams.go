// Package iostreams holds the standard streams and the terminal and color
// decisions, so commands never reach for os.Stdout themselves.
package iostreams

import (
	"bytes"
	"io"
	"os"
)

// IOStreams are a command's input and outputs.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY bool
	// colorMode is "auto", "always" or "never".
	colorMode string
	noColor   bool
}

// System returns streams over the process's stdin, stdout and stderr.
// noColorEnv is the value of NO_COLOR in the environment ("" when unset).
func System(noColorEnv string) *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY:    isTerminal(os.Stdout),
		colorMode: "auto",
		noColor:   NoColor(noColorEnv),
	}
}

// NoColor reports whether a NO_COLOR value turns colour off. Per
// https://no-color.org only a non-empty value does, whatever it says
// ("0" and "false" too); an empty NO_COLOR is as if it were unset.
func NoColor(noColorEnv string) bool { return noColorEnv != "" }

// Test returns streams over buffers, for tests: not a terminal, no color.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, colorMode: "auto"}, in, out, errOut
}

// SetTTY marks stdout as a terminal (tests).
func (s *IOStreams) SetTTY(tty bool) { s.outTTY = tty }

// IsTTY reports whether stdout is a terminal.
func (s *IOStreams) IsTTY() bool { return s.outTTY }

// SetNoColor records that NO_COLOR turns colour off (see NoColor).
func (s *IOStreams) SetNoColor(v bool) { s.noColor = v }

// SetColorMode sets --color: auto, always or never.
func (s *IOStreams) SetColorMode(mode string) { s.colorMode = mode }

// ColorEnabled says whether output may use ANSI colors: on a terminal with
// NO_COLOR unset or empty, unless --color says otherwise.
func (s *IOStreams) ColorEnabled() bool {
	switch s.colorMode {
	case "always":
		return true
	case "never":
		return false
	}
	return s.outTTY && !s.noColor
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}
