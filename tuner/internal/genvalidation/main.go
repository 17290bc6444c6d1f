// Command genvalidation rewrites the generated table in docs/validation.md
// from the validation cases in tuner/internal/validation. `go generate
// ./...` runs it (see tuner/generate.go); tuner's
// TestValidationAgainstPublishedMeasurements fails while the committed
// document differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpulint/gpulint/tuner/internal/validation"
)

func main() {
	doc := flag.String("doc", "", "the document whose generated table to rewrite")
	flag.Parse()
	if err := run(*doc); err != nil {
		fmt.Fprintln(os.Stderr, "genvalidation:", err)
		os.Exit(1)
	}
}

func run(doc string) error {
	if doc == "" {
		return fmt.Errorf("-doc is required")
	}
	r, err := validation.Run()
	if err != nil {
		return err
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	updated, err := r.UpdateDoc(old)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	return os.WriteFile(doc, updated, 0o644)
}
