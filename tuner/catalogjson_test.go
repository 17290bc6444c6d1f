package tuner

import (
	"io/fs"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogJSON keeps the JSON rendition LoadCatalog reads identical to
// the YAML source of truth, and checks both load to the same catalog.
func TestCatalogJSON(t *testing.T) {
	g, err := fs.ReadFile(profilesFS, GPUProfilesPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fs.ReadFile(profilesFS, ModelProfilesPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderCatalogJSON(g, m)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(CatalogJSONPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := fs.ReadFile(profilesFS, CatalogJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run go test ./tuner -run TestCatalogJSON -update", CatalogJSONPath)
	}
	fromJSON, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := ParseCatalog(g, m)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(len(fromYAML.GPUs()), len(fromJSON.GPUs())); diff != "" {
		t.Errorf("gpu count (-yaml +json):\n%s", diff)
	}
	for i, gy := range fromYAML.GPUs() {
		gj := fromJSON.GPUs()[i]
		if gy.Key != gj.Key || gy.UsableBytes != gj.UsableBytes || gy.CC != gj.CC || len(gy.MIGProfiles()) != len(gj.MIGProfiles()) {
			t.Errorf("gpu %s differs between YAML and JSON", gy.Key)
		}
	}
	for i, my := range fromYAML.Models() {
		mj := fromJSON.Models()[i]
		if my.ID != mj.ID || my.Params() != mj.Params() {
			t.Errorf("model %s differs between YAML and JSON", my.ID)
		}
	}
}
