package report

import (
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/golden"
)

// TestGolden renders the shared findings in each format and compares the
// output with testdata/<format>.golden; -update rewrites the files.
func TestGolden(t *testing.T) {
	for _, name := range []string{"sarif", "github", "markdown"} {
		t.Run(name, func(t *testing.T) {
			got := render(t, name, sampleInput(t))
			file := filepath.Join("testdata", name+".golden")
			golden.Check(t, file, []byte(got))
		})
	}
}
