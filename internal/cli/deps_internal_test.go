package cli

import (
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
	custom, err := withCustomPolicies(f, []string{t.TempDir()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if custom.Validator != v {
		t.Error("custom-policy deps built their own validator")
	}
}
