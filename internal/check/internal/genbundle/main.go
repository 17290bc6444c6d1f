// Command genbundle writes the precompiled policy bundle (policies/bundle.bin)
// from the built-in policy sources. `go generate ./...` runs it (see
// internal/check/generate.go); TestBundleCurrent fails while the committed
// bundle differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpulint/gpulint/internal/check"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/policies"
)

func main() {
	out := flag.String("o", "", "the bundle file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genbundle:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	mods, _, err := rules.LoadFS(policies.FS)
	if err != nil {
		return err
	}
	b, err := check.BuildBundle(mods)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
