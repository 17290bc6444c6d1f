// Command gencatalog writes tuner/catalog_data.go, the compiled-in GPU and
// model catalog, from tuner/profiles/*.yaml. `go generate ./...` runs it
// (see tuner/generate.go); TestCatalogData fails while the committed file
// differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpulint/gpulint/tuner"
)

func main() {
	out := flag.String("o", "", "the Go file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	src, err := tuner.CatalogDataSource()
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
