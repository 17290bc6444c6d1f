package ruledoc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/golden"
	"github.com/gpulint/gpulint/internal/ruledoc"
	"github.com/gpulint/gpulint/internal/rules"
	"github.com/gpulint/gpulint/policies"
)

func catalog(t *testing.T) *rules.Catalog {
	t.Helper()
	_, cat, err := rules.LoadFS(policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestDocsCurrent regenerates docs/rules.md and the README's rule table
// and fails on any difference; -update rewrites them.
func TestDocsCurrent(t *testing.T) {
	cat := catalog(t)
	root := filepath.Join("..", "..")
	golden.Check(t, filepath.Join(root, "docs", "rules.md"), []byte(ruledoc.Reference(cat)))

	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ruledoc.Splice(string(readme), ruledoc.Table(cat))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, readmePath, []byte(want))
}

func TestEveryRuleDocumented(t *testing.T) {
	cat := catalog(t)
	ref := ruledoc.Reference(cat)
	for _, r := range cat.All() {
		if !strings.Contains(ref, "\n## "+strings.ToLower(r.ID)+"\n") {
			t.Errorf("%s has no section (anchor #%s)", r.ID, strings.ToLower(r.ID))
		}
		if !strings.Contains(ruledoc.Explain(r), r.Remediation) {
			t.Errorf("%s: explain lacks the remediation", r.ID)
		}
	}
}
