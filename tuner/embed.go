package tuner

import (
	"embed"
	"io/fs"
)

//go:embed profiles/gpus.yaml profiles/models.yaml
var profilesFS embed.FS

// Paths of the embedded data files inside ProfilesFS.
const (
	GPUProfilesPath   = "profiles/gpus.yaml"
	ModelProfilesPath = "profiles/models.yaml"
)

// ProfilesFS returns the embedded catalog data files, for schema tests and
// for tools that want the raw YAML.
func ProfilesFS() fs.FS { return profilesFS }
