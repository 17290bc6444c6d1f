package examples_test

import (
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/internal/cli"
	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("*/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if filepath.Base(dir) == "expected.txt" {
			continue
		}
		n++
		t.Run(filepath.ToSlash(dir), func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			code := cli.Run([]string{"lint", "--fail-on", "never", "--no-cache", dir}, ios, cli.Env{},
				cli.Assets{Policies: policies.FS, Schemas: schemas.FS})
			if code != 0 || errOut.Len() > 0 {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			golden.Check(t, filepath.Join(dir, "expected.txt"), out.Bytes())
		})
	}
	if n < 8 {
		t.Fatalf("found %d example cases", n)
	}
}
