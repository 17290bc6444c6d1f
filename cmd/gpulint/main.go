// Command gpulint lints and tunes GPU training and serving configs.
package main

import (
	"os"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/gctune"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

func main() {
	gctune.Apply(os.LookupEnv) // GOGC and GOMEMLIMIT set by the user win
	ios := iostreams.System(os.Getenv("NO_COLOR"))
	env := cli.Env{Getenv: os.Getenv, LookupEnv: os.LookupEnv}
	assets := cli.Assets{Policies: policies.FS, Schemas: schemas.FS}
	os.Exit(cli.Run(os.Args[1:], ios, env, assets))
}
