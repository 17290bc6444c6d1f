package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// TestQuickStart holds the README's quick start to what a newcomer sees:
// `go run ./cmd/gpulint lint examples/` ends with the summary line the
// README quotes and exits 1, because the examples are misconfigured on
// purpose.
func TestQuickStart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("ends with `([^`]*files checked[^`]*)`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md's quick start quotes no summary line (\"ends with `N files checked: ...`\")")
	}
	ios, _, out, errOut := iostreams.Test()
	code := cli.Run([]string{"lint", "--no-cache", "."}, ios, cli.Env{},
		cli.Assets{Policies: policies.FS, Schemas: schemas.FS})
	if code != 1 {
		t.Errorf("exit %d, want 1 (the README says the examples exit 1); stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got := lines[len(lines)-1]; got != string(m[1]) {
		t.Errorf("the run ends with %q; README.md says %q", got, m[1])
	}
}
