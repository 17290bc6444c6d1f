package tuner

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const catalogDataFile = "catalog_data.go"

// TestCatalogData keeps the compiled-in catalog (catalog_data.go) equal to
// the YAML files it is generated from: the file must be what
// tuner/internal/gencatalog writes for them today, and the data it holds must decode to the same
// values the YAML does.
func TestCatalogData(t *testing.T) {
	want := decodeCatalogYAML(t)
	src, err := CatalogDataSource()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(catalogDataFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("%s is stale: run go generate ./...", catalogDataFile)
	}
	// The generator writes every value back as it read it.
	if diff := cmp.Diff(want, catalogData()); diff != "" {
		t.Errorf("compiled-in catalog differs from the YAML (-yaml +compiled):\n%s", diff)
	}
}

// TestCatalogDataDetectsChange proves the staleness check can fail: a
// catalog that differs in one number renders differently.
func TestCatalogDataDetectsChange(t *testing.T) {
	d := decodeCatalogYAML(t)
	before, err := renderCatalogData(d)
	if err != nil {
		t.Fatal(err)
	}
	d.GPUs.GPUs[0].Memory.DriverMiB++
	after, err := renderCatalogData(d)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Fatal("a changed catalog renders the same source")
	}
}

func decodeCatalogYAML(t *testing.T) catalogDoc {
	t.Helper()
	d, err := decodeCatalogFiles()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
