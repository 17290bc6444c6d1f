// Package corpus is the test helper for the data the guards read from the
// repository: the corpus of real public configs in testdata/corpus (with
// its MANIFEST.tsv, SOURCES.md and LICENSES/) and the reference documents
// in testdata/reference. The data lives in the repository so that the
// guards run in a fresh clone; a missing file fails the test, it never
// skips it.
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the repository root: the nearest directory at or above the
// test's working directory that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Dir returns testdata/corpus in the repository, relative to the test's
// working directory (so paths derived from it read the same on every
// machine), and fails the test when it is missing.
func Dir(t testing.TB) string {
	t.Helper()
	return existing(t, "testdata", "corpus")
}

// Reference returns the contents of testdata/reference/name, failing the
// test when it cannot be read.
func Reference(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(existing(t, "testdata", "reference", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func existing(t testing.TB, elem ...string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p, err := filepath.Rel(wd, filepath.Join(append([]string{Root(t)}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test data missing from the repository: %v", err)
	}
	return p
}
