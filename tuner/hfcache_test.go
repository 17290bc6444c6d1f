package tuner

import (
	"os"
	"path/filepath"
	"testing"
)

// hfCacheRepo writes models--<org>--<name> under cache the way
// huggingface_hub does: files in blobs/, the snapshot's entries symbolic
// links to them, refs/main naming the commit unless ref is "".
func hfCacheRepo(t *testing.T, cache, folder, ref string, snapshots map[string]map[string][]byte) {
	t.Helper()
	repo := filepath.Join(cache, folder)
	for commit, files := range snapshots {
		snap := filepath.Join(repo, "snapshots", commit)
		if err := os.MkdirAll(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			blob := filepath.Join(repo, "blobs", commit+"-"+name)
			if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(blob, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..", "..", "blobs", commit+"-"+name), filepath.Join(snap, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ref != "" {
		if err := os.MkdirAll(filepath.Join(repo, "refs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(ref), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModelFromHFCache(t *testing.T) {
	cache := t.TempDir()
	cfg := []byte(hfConfigs["llama3.1-8b"])
	// A fine-tune of Llama 3.1 8B the catalog does not know, with its
	// weights: the headers give the exact count and dtype.
	st := safetensorsFile(t, map[string]tensorInfo{
		"model.embed_tokens.weight": {Dtype: "BF16", Shape: []int64{128256, 4096}, DataOffsets: []int64{0, 0}},
		"lm_head.weight":            {Dtype: "BF16", Shape: []int64{128256, 4096}, DataOffsets: []int64{0, 0}},
	}, 0)
	hfCacheRepo(t, cache, "models--acme--llama-3.1-8b-sft-v2", "c0ffee\n", map[string]map[string][]byte{
		"c0ffee": {"config.json": cfg, "model.safetensors": st},
		"0ld":    {"config.json": []byte(`{"model_type": "bogus"}`)},
	})
	// Only config.json downloaded, one snapshot and no refs/main.
	hfCacheRepo(t, cache, "models--Acme--Mixtral-Tune", "", map[string]map[string][]byte{
		"abc": {"config.json": []byte(hfConfigs["mixtral"])},
	})
	// Two snapshots and no refs/main: which one runs is unknown.
	hfCacheRepo(t, cache, "models--acme--two", "", map[string]map[string][]byte{
		"a": {"config.json": cfg}, "b": {"config.json": cfg},
	})
	// refs/main names a snapshot outside the repository.
	hfCacheRepo(t, cache, "models--acme--escape", "../../models--acme--two/snapshots/a", map[string]map[string][]byte{
		"a": {"config.json": cfg},
	})
	// An index naming a shard the download left out: config.json still
	// gives the architecture.
	hfCacheRepo(t, cache, "models--acme--partial", "p1", map[string]map[string][]byte{
		"p1": {"config.json": cfg, "model.safetensors.index.json": []byte(`{"weight_map": {"a": "model-00001-of-00002.safetensors"}}`)},
	})
	fsys := os.DirFS(cache)

	tests := []struct {
		name, id    string
		wantOK      bool
		wantDir     string
		wantParams  int64
		wantExact   bool
		wantModelID string
	}{
		{"refs/main picks the snapshot", "acme/llama-3.1-8b-sft-v2", true, "models--acme--llama-3.1-8b-sft-v2/snapshots/c0ffee", 2 * 128256 * 4096, true, "acme/llama-3.1-8b-sft-v2"},
		{"case differs from the folder", "acme/mixtral-tune", true, "models--Acme--Mixtral-Tune/snapshots/abc", 46_702_792_704, false, "acme/mixtral-tune"},
		{"partial download reads config.json", "acme/partial", true, "models--acme--partial/snapshots/p1", 8_030_261_248, false, "acme/partial"},
		{"several snapshots, no ref", "acme/two", false, "", 0, false, ""},
		{"ref escaping the repository", "acme/escape", false, "", 0, false, ""},
		{"not in the cache", "acme/absent", false, "", 0, false, ""},
		{"bare name", "llama-3.1-8b-sft-v2", false, "", 0, false, ""},
		{"path-like id", "acme/../x", false, "", 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, dir, ok, err := ModelFromHFCache(fsys, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantOK || dir != tc.wantDir {
				t.Fatalf("ModelFromHFCache(%q) = dir %q, ok %v; want %q, %v", tc.id, dir, ok, tc.wantDir, tc.wantOK)
			}
			if !ok {
				return
			}
			if got := m.Params(); got != tc.wantParams {
				t.Errorf("params = %d, want %d", got, tc.wantParams)
			}
			if (m.ExactParams > 0) != tc.wantExact {
				t.Errorf("exact params from headers = %v, want %v", m.ExactParams > 0, tc.wantExact)
			}
			if m.ID != tc.wantModelID {
				t.Errorf("ID = %q, want %q", m.ID, tc.wantModelID)
			}
		})
	}
}

// A snapshot whose config.json is broken is an error naming the snapshot,
// not a silent fall-back to the catalog.
func TestModelFromHFCacheBrokenConfig(t *testing.T) {
	cache := t.TempDir()
	hfCacheRepo(t, cache, "models--acme--broken", "r", map[string]map[string][]byte{
		"r": {"config.json": []byte(`{"model_type": "mamba"}`)},
	})
	_, dir, ok, err := ModelFromHFCache(os.DirFS(cache), "acme/broken")
	if err == nil || !ok || dir != "models--acme--broken/snapshots/r" {
		t.Fatalf("got dir %q ok %v err %v; want an error for the snapshot", dir, ok, err)
	}
}
