// Command gpulint lints and tunes GPU training and serving configs.
package main

import (
	"os"
	"runtime/debug"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

func main() {
	tuneGC()
	_, noColor := os.LookupEnv("NO_COLOR")
	ios := iostreams.System(noColor)
	env := cli.Env{Getenv: os.Getenv, LookupEnv: os.LookupEnv}
	assets := cli.Assets{Policies: policies.FS, Schemas: schemas.FS}
	os.Exit(cli.Run(os.Args[1:], ios, env, assets))
}

// tuneGC lets the short runs gpulint mostly makes (a hook, a few files)
// finish without collecting: a generous GOGC, held in check by a soft
// memory limit that keeps large runs near their usual footprint. One-file
// CPU time falls from about 50 to 30 ms (docs/performance.md). GOGC and
// GOMEMLIMIT set by the user win.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(40 << 20)
	}
}
