package tuner

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// The Hugging Face hub cache keeps each downloaded model repository as
// models--<org>--<name>/ with refs/<revision> files holding a commit hash
// and snapshots/<commit>/ holding the files of that commit (symbolic links
// into blobs/). Layout: huggingface/huggingface_hub src/huggingface_hub
// file_download.py (repo_folder_name joins "models" and the id's parts
// with "--"; refs/main is written on download) at commit 03333b6.

// HFCacheSnapshot finds the snapshot of model repository id in a Hugging
// Face hub cache: the directory refs/main names, else the only snapshot
// when there is exactly one. The id is matched as written, then ignoring
// case. It returns the snapshot's path inside cache; ok is false when the
// cache holds no snapshot of id with a config.json, or several and no
// refs/main to choose between them. Nothing but cache is read.
func HFCacheSnapshot(cache fs.FS, id string) (dir string, ok bool) {
	org, name, found := strings.Cut(strings.TrimSpace(id), "/")
	if !found || org == "" || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	repo := "models--" + org + "--" + name
	if !fs.ValidPath(repo) {
		return "", false
	}
	if _, err := fs.Stat(cache, repo); err != nil {
		entries, err := fs.ReadDir(cache, ".")
		if err != nil {
			return "", false
		}
		repo = ""
		for _, e := range entries {
			if e.IsDir() && strings.EqualFold(e.Name(), "models--"+org+"--"+name) {
				repo = e.Name()
				break
			}
		}
		if repo == "" {
			return "", false
		}
	}
	snap := ""
	if ref, err := fs.ReadFile(cache, path.Join(repo, "refs", "main")); err == nil {
		commit := strings.TrimSpace(string(ref))
		if commit == "" || strings.ContainsAny(commit, "/\\") || commit == "." || commit == ".." {
			return "", false
		}
		snap = path.Join(repo, "snapshots", commit)
	} else {
		entries, err := fs.ReadDir(cache, path.Join(repo, "snapshots"))
		if err != nil || len(entries) != 1 || !entries[0].IsDir() {
			return "", false
		}
		snap = path.Join(repo, "snapshots", entries[0].Name())
	}
	if _, err := fs.Stat(cache, path.Join(snap, "config.json")); err != nil {
		return "", false
	}
	return snap, true
}

// ModelFromHFCache reads model repository id from a Hugging Face hub
// cache: the snapshot HFCacheSnapshot finds, read as ModelFromDir reads a
// model directory (config.json and safetensors headers, never weights).
// It returns the snapshot's path inside cache for the evidence; the
// model's ID is id. ok is false when the cache has no usable snapshot;
// err reports a snapshot that is there but cannot be read.
func ModelFromHFCache(cache fs.FS, id string) (m *Model, dir string, ok bool, err error) {
	dir, ok = HFCacheSnapshot(cache, id)
	if !ok {
		return nil, "", false, nil
	}
	sub, err := fs.Sub(cache, dir)
	if err != nil {
		return nil, "", false, fmt.Errorf("hugging face cache %s: %w", dir, err)
	}
	m, err = ModelFromDir(sub)
	if errors.Is(err, fs.ErrNotExist) {
		// A safetensors file the index names but the download left out:
		// the architecture is still in config.json.
		var data []byte
		if data, err = fs.ReadFile(sub, "config.json"); err == nil {
			m, err = ModelFromHFConfig(data)
		}
	}
	if err != nil {
		return nil, dir, true, fmt.Errorf("hugging face cache %s: %w", dir, err)
	}
	m.ID = strings.TrimSpace(id)
	return m, dir, true, nil
}
