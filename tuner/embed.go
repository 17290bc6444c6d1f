package tuner

import (
	"embed"
	"io/fs"
)

//go:embed profiles/gpus.yaml profiles/models.yaml profiles/catalog.json
var profilesFS embed.FS

// Paths of the embedded data files inside ProfilesFS. The YAML files are
// the source of truth; CatalogJSONPath is their JSON rendition, generated
// by `go test ./tuner -run TestCatalogJSON -update` and checked by that
// test, because encoding/json reads it several times faster than yaml.v3
// reads the YAML - and the catalog is loaded on every run.
const (
	GPUProfilesPath   = "profiles/gpus.yaml"
	ModelProfilesPath = "profiles/models.yaml"
	CatalogJSONPath   = "profiles/catalog.json"
)

// ProfilesFS returns the embedded catalog data files, for schema tests and
// for tools that want the raw YAML.
func ProfilesFS() fs.FS { return profilesFS }
