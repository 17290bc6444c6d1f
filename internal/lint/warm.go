package lint

import (
	"os"
	"slices"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/source"
)

// A short run (a pre-commit hook, a few named files) spends much of its
// time waiting for what its first file of each kind needs: the kind's
// rules loaded (about 3 ms) and its schema checks built (0.1-0.3 ms).
// SniffKinds lets the caller start both before the dependencies are
// built, the files collected and the project files read, instead of
// after.

// sniffMaxFiles and sniffMaxBytes bound the files SniffKinds reads ahead:
// it pays off only while the read is small beside the work it brings
// forward.
const (
	sniffMaxFiles = 8
	sniffMaxBytes = 256 << 10
)

// SniffKinds returns the kinds of the files a run over paths will lint,
// when paths name at most a few regular files, each small; nil otherwise.
// A file that cannot be read, parsed or classified adds nothing. The
// files are read again by the run itself.
func SniffKinds(paths []string) []source.Kind {
	if len(paths) > sniffMaxFiles {
		return nil
	}
	var kinds []source.Kind
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Size() > sniffMaxBytes {
			return nil // a directory or a large file: a longer run
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f, err := source.Parse(p, data, source.Limits{MaxBytes: sniffMaxBytes})
		if err != nil {
			continue
		}
		if k := source.Detect(f); k != source.KindUnknown && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// schemasFor lists the schemas the documents of a kind are checked
// against: subjects uses the first, or for a MIG file the one of the two
// its content calls for. Fine-tuning recipes have none: they are
// open-ended, and unknown keys are no error.
func schemasFor(kind source.Kind) []string {
	switch kind {
	case source.KindDeepSpeed, source.KindAccelerate, source.KindVLLM, source.KindKubernetes:
		return []string{string(kind)}
	case source.KindMIG:
		return []string{"mig-parted", "device-plugin"}
	}
	return nil
}

// WarmSchemas builds the schema checks of kinds in the background.
func WarmSchemas(v *normalize.Validator, kinds []source.Kind) {
	for _, k := range kinds {
		for _, s := range schemasFor(k) {
			go v.Compile(s) //nolint:errcheck // Validate reports a broken schema
		}
	}
}

// Warm starts loading the rules of kinds in the background.
func (d *Deps) Warm(kinds []source.Kind) {
	for _, k := range kinds {
		d.Engine.Warm(string(k))
	}
}
