package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// The Hugging Face cache is found as huggingface_hub finds it, and only
// when the directory is there.
func TestHFHubCache(t *testing.T) {
	root := t.TempDir()
	mk := func(p ...string) string {
		d := filepath.Join(append([]string{root}, p...)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	hubCache := mk("hub-cache")
	legacy := mk("legacy")
	hfHome := mk("hf-home")
	mk("hf-home", "hub")
	xdg := mk("xdg")
	mk("xdg", "huggingface", "hub")
	home := mk("home")
	mk("home", ".cache", "huggingface", "hub")
	bareHome := mk("bare-home")

	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"HF_HUB_CACHE wins", map[string]string{"HF_HUB_CACHE": hubCache, "HUGGINGFACE_HUB_CACHE": legacy, "HF_HOME": hfHome, "HOME": home}, hubCache},
		{"legacy HUGGINGFACE_HUB_CACHE", map[string]string{"HUGGINGFACE_HUB_CACHE": legacy, "HF_HOME": hfHome, "HOME": home}, legacy},
		{"HF_HOME/hub", map[string]string{"HF_HOME": hfHome, "XDG_CACHE_HOME": xdg, "HOME": home}, filepath.Join(hfHome, "hub")},
		{"XDG_CACHE_HOME/huggingface/hub", map[string]string{"XDG_CACHE_HOME": xdg, "HOME": home}, filepath.Join(xdg, "huggingface", "hub")},
		{"~/.cache/huggingface/hub", map[string]string{"HOME": home}, filepath.Join(home, ".cache", "huggingface", "hub")},
		{"~ in HF_HOME", map[string]string{"HF_HOME": "~/.cache/huggingface", "HOME": home}, filepath.Join(home, ".cache", "huggingface", "hub")},
		{"no cache directory", map[string]string{"HOME": bareHome}, ""},
		{"set but absent", map[string]string{"HF_HUB_CACHE": filepath.Join(root, "nope"), "HOME": home}, ""},
		{"no environment", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Env{Getenv: func(k string) string { return tc.env[k] }}
			if got := hfHubCache(e); got != tc.want {
				t.Errorf("hfHubCache = %q, want %q", got, tc.want)
			}
		})
	}
}
