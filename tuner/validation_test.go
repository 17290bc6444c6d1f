package tuner_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/gpulint/gpulint/tuner/internal/validation"
)

// TestValidationAgainstPublishedMeasurements holds the memory model to the
// published measurements in tuner/internal/validation (every row's verdict
// and error bound, and the median error) and docs/validation.md to the
// table genvalidation writes for them.
func TestValidationAgainstPublishedMeasurements(t *testing.T) {
	r, err := validation.Run()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range r.Log() {
		t.Log(l)
	}
	for _, p := range r.Problems() {
		t.Error(p)
	}
	const doc = "../docs/validation.md"
	old, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.UpdateDoc(old)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if !bytes.Equal(old, want) {
		t.Errorf("%s is out of date: run go generate ./... and review the diff", doc)
	}
}
