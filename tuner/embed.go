package tuner

import (
	"embed"
	"io/fs"
)

//go:embed profiles/gpus.yaml profiles/models.yaml
var profilesFS embed.FS

// Paths of the embedded data files inside ProfilesFS. They are the source
// of truth. The catalog every run loads is compiled in from them
// (catalog_data.go, written by tuner/internal/gencatalog through `go
// generate ./...` and checked by TestCatalogData): decoding the files took about a
// millisecond of every run's start-up, decoding compiled-in data takes none.
const (
	GPUProfilesPath   = "profiles/gpus.yaml"
	ModelProfilesPath = "profiles/models.yaml"
)

// ProfilesFS returns the embedded catalog data files, for schema tests and
// for tools that want the raw YAML.
func ProfilesFS() fs.FS { return profilesFS }
