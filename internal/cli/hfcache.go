package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// hfHubCache is the Hugging Face hub cache directory as huggingface_hub
// finds it (src/huggingface_hub/constants.py at 03333b6): HF_HUB_CACHE,
// else the legacy HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub, with a
// leading ~ expanded. It is "" when that directory does not exist, so a
// machine without a cache reads nothing.
func hfHubCache(e Env) string {
	home := e.get("HOME")
	expand := func(p string) string {
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				return ""
			}
			return filepath.Join(home, p[1:])
		}
		return p
	}
	dir := ""
	switch {
	case e.get("HF_HUB_CACHE") != "":
		dir = expand(e.get("HF_HUB_CACHE"))
	case e.get("HUGGINGFACE_HUB_CACHE") != "":
		dir = expand(e.get("HUGGINGFACE_HUB_CACHE"))
	case e.get("HF_HOME") != "":
		if h := expand(e.get("HF_HOME")); h != "" {
			dir = filepath.Join(h, "hub")
		}
	case e.get("XDG_CACHE_HOME") != "":
		if x := expand(e.get("XDG_CACHE_HOME")); x != "" {
			dir = filepath.Join(x, "huggingface", "hub")
		}
	case home != "":
		dir = filepath.Join(home, ".cache", "huggingface", "hub")
	}
	if dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) && e.Dir != "" {
		dir = filepath.Join(e.Dir, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}
