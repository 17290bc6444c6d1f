package rules

import (
	"crypto/sha256"
	"reflect"
	"testing"

	"github.com/gpulint/gpulint/policies"
)

// TestMetadataCache: metadata taken from the cache equals metadata read
// from the YAML, for every built-in policy; a cache entry for another
// source, or a damaged one, is not used.
func TestMetadataCache(t *testing.T) {
	mods, err := ParseModules(policies.FS, false)
	if err != nil {
		t.Fatal(err)
	}
	enc := map[string][]byte{}
	sums := map[string][sha256.Size]byte{}
	withMeta := 0
	for _, m := range mods {
		b, err := EncodeMetadata(m)
		if err != nil {
			t.Fatalf("%s: %v", m.File, err)
		}
		enc[m.File], sums[m.File] = b, SourceSum(m.Source)
		if m.meta != nil {
			withMeta++
		}
	}
	if withMeta < 30 {
		t.Fatalf("only %d modules with metadata", withMeta)
	}
	used := 0
	cache := func(file string, sum [sha256.Size]byte) ([]byte, bool) {
		if sum != sums[file] {
			return nil, false
		}
		used++
		return enc[file], true
	}
	cached, err := ParseModulesCached(policies.FS, false, cache)
	if err != nil {
		t.Fatal(err)
	}
	if used != len(mods) {
		t.Fatalf("cache used for %d of %d modules", used, len(mods))
	}
	for i := range mods {
		if !reflect.DeepEqual(mods[i].meta, cached[i].meta) {
			t.Errorf("%s: cached metadata %#v, want %#v", mods[i].File, cached[i].meta, mods[i].meta)
		}
	}
	want, err := Load(mods)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(cached)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want.All(), got.All()) {
		t.Error("catalog from cached metadata differs")
	}

	// Damaged entries and entries for other sources fall back to the YAML.
	damaged := func(file string, sum [sha256.Size]byte) ([]byte, bool) {
		b := append([]byte(nil), enc[file]...)
		b[len(b)/2] ^= 0x5a
		return b[:len(b)-1], true
	}
	// A cache built from edited sources holds (wrong) entries under
	// other digests.
	other := func(file string, sum [sha256.Size]byte) ([]byte, bool) {
		for _, m := range mods {
			if m.File == file && sum == SourceSum(m.Source+"\n# edited\n") {
				return enc["lib/lib.rego"], true
			}
		}
		return nil, false
	}
	for name, c := range map[string]MetadataCache{"damaged": damaged, "other source": other} {
		ms, err := ParseModulesCached(policies.FS, false, c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range mods {
			if !reflect.DeepEqual(mods[i].meta, ms[i].meta) {
				t.Errorf("%s: %s: metadata %#v, want %#v", name, mods[i].File, ms[i].meta, mods[i].meta)
			}
		}
	}
}

// FuzzDecodeMetadata: no input makes the decoder panic.
func FuzzDecodeMetadata(f *testing.F) {
	mods, err := ParseModules(policies.FS, false)
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range mods[:5] {
		b, err := EncodeMetadata(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeMetadata(data)
	})
}
