package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

// TestDepsShareValidator checks that the dependencies use the validator a
// short run warms before building them, with and without custom policies.
func TestDepsShareValidator(t *testing.T) {
	f := &Factory{Assets: Assets{Policies: policies.FS, Schemas: schemas.FS}}
	v := f.Validator()
	d, err := f.Deps()
	if err != nil {
		t.Fatal(err)
	}
	if d.Validator != v {
		t.Error("Deps built its own validator")
	}
	dir := t.TempDir()
	rule := "# METADATA\n# title: Probe\n# custom:\n#   id: TEAM001\n#   slug: team-probe\n#   severity: info\n#   rationale: A probe.\n#   remediation: None.\n#   kinds: [\"*\"]\n#   since: 0.1.0\n#   fixable: false\npackage team.probe\n\nfindings := set()\n"
	if err := os.WriteFile(filepath.Join(dir, "probe.rego"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	custom, err := withCustomPolicies(f, []string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if custom.Validator != v {
		t.Error("custom-policy deps built their own validator")
	}
}
