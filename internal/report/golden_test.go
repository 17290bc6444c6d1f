package report

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/golden"
)

// TestGolden renders the shared findings in each format and compares the
// output with testdata/<format>.golden; -update rewrites the files.
func TestGolden(t *testing.T) {
	for _, name := range []string{"sarif", "github", "markdown", "json", "text"} {
		t.Run(name, func(t *testing.T) {
			got := render(t, name, sampleInput(t))
			file := filepath.Join("testdata", name+".golden")
			golden.Check(t, file, []byte(got))
		})
	}
}

// TestGoldenTextVerbose holds --verbose: the details of a long message on
// indented lines under its summary.
func TestGoldenTextVerbose(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, sampleInput(t), Options{ShowFixes: true, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "text-verbose.golden"), b.Bytes())
}

// TestSampleSplit holds the sample's long message to finding.Split, so
// the goldens show what lint would store.
func TestSampleSplit(t *testing.T) {
	s, d := finding.Split(longMessage)
	if s != longSummary || !slices.Equal(d, longDetails) {
		t.Errorf("finding.Split(longMessage) = %q, %q; the fixture says %q, %q", s, d, longSummary, longDetails)
	}
}
