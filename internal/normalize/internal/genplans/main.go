// Command genplans writes internal/normalize/plans_gen.go: the Go checks
// the validator walks, derived from schemas/*.cue by
// internal/normalize/internal/planbuild. `go generate ./...` runs it (see
// internal/normalize/generate.go); TestGeneratedPlans fails while the
// committed file differs from what it would write. CUE runs here, not in
// the gpulint binary.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpulint/gpulint/internal/normalize/internal/planbuild"
	"github.com/gpulint/gpulint/schemas"
)

func main() {
	out := flag.String("o", "", "the Go file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genplans:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	var builds []*planbuild.Build
	for _, s := range planbuild.Schemas() {
		b, err := planbuild.FromCUE(schemas.FS, s)
		if err != nil {
			return err
		}
		builds = append(builds, b)
	}
	src, err := planbuild.Render(builds)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
