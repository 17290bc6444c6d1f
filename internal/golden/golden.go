// Package golden is the test helper for golden files and txtar cases.
// The -update flag lives here, once, so `go test ./... -update` rewrites
// every want section; read the diff before committing it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// update is registered on the test binary's flag set by importing this
// package from a test.
var update = flag.Bool("update", false, "rewrite golden files and txtar want sections")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Check compares got with the golden file at path, or rewrites it with
// -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// Case is one txtar case file.
type Case struct {
	Path    string
	Archive *txtar.Archive
}

// Cases reads every *.txtar file under dir (recursively), sorted.
func Cases(t testing.TB, dir string) []Case {
	t.Helper()
	var out []Case
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".txtar") {
			return nil
		}
		a, err := txtar.ParseFile(p)
		if err != nil {
			return err
		}
		out = append(out, Case{Path: p, Archive: a})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// File returns the content of a section, and whether it exists.
func (c Case) File(name string) ([]byte, bool) {
	for _, f := range c.Archive.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Prefixed returns the sections whose names start with prefix, keyed by
// the rest of the name.
func (c Case) Prefixed(prefix string) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range c.Archive.Files {
		if rest, ok := strings.CutPrefix(f.Name, prefix); ok {
			out[rest] = f.Data
		}
	}
	return out
}

// Want compares got with a want section, or records it for -update.
// Sections missing from the case are an error unless updating.
func (c *Case) Want(t testing.TB, name string, got []byte) {
	t.Helper()
	if *update {
		c.set(name, got)
		return
	}
	want, ok := c.File(name)
	if !ok {
		t.Errorf("%s: no %q section (run with -update to record it)", c.Path, name)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s: %s mismatch (-want +got):\n%s", c.Path, name, diff)
	}
}

// Drop removes a want section that should not exist (with -update), or
// fails when it exists.
func (c *Case) Drop(t testing.TB, name string) {
	t.Helper()
	for i, f := range c.Archive.Files {
		if f.Name == name {
			if *update {
				c.Archive.Files = append(c.Archive.Files[:i], c.Archive.Files[i+1:]...)
				return
			}
			t.Errorf("%s: section %q should not exist", c.Path, name)
			return
		}
	}
}

func (c *Case) set(name string, data []byte) {
	for i, f := range c.Archive.Files {
		if f.Name == name {
			c.Archive.Files[i].Data = data
			return
		}
	}
	c.Archive.Files = append(c.Archive.Files, txtar.File{Name: name, Data: data})
}

// Save writes the case back with -update.
func (c *Case) Save(t testing.TB) {
	t.Helper()
	if !*update {
		return
	}
	if err := os.WriteFile(c.Path, txtar.Format(c.Archive), 0o644); err != nil {
		t.Fatal(err)
	}
}
