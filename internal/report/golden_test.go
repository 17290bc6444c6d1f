package report

import (
	"github.com/gpulint/gpulint/internal/golden"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGolden renders the shared findings in each format and compares the
// output with testdata/<format>.golden; -update rewrites the files.
func TestGolden(t *testing.T) {
	for _, name := range []string{"sarif", "github", "markdown"} {
		t.Run(name, func(t *testing.T) {
			got := render(t, name, sampleInput(t))
			file := filepath.Join("testdata", name+".golden")
			if golden.Updating() {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s output differs from %s (-want +got):\n%s", name, file, diff)
			}
		})
	}
}
