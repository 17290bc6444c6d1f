// Package baseline records a run's findings so that a later run reports
// only new ones: how a team adopts gpulint on a repository that already
// has findings without fixing them all first.
//
// A finding is keyed by its SARIF partial fingerprint (report.Fingerprints:
// rule, file, key path and message without digits, and its occurrence
// among equal ones), so edits above it or to its numbers keep it
// baselined. File paths are recorded relative to the baseline file, so the
// same baseline serves runs started from any directory.
package baseline

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/report"
)

// Version is the file format's version.
const Version = 1

// Entry is one recorded finding. Rule, File and Message are there for
// people reading the file; only Fingerprint is matched.
type Entry struct {
	Rule        string `json:"rule"`
	File        string `json:"file"`
	Message     string `json:"message"`
	Fingerprint string `json:"fingerprint"`
}

// File is a baseline as stored.
type File struct {
	Version  int     `json:"version"`
	Findings []Entry `json:"findings"`
}

// Baseline is a loaded baseline: its entries and the directory its paths
// are relative to.
type Baseline struct {
	dir  string
	keys map[string]bool
}

// keys returns each finding's fingerprint with its path made relative to
// dir, and the relative path.
func keys(dir string, fs []finding.Finding) ([]string, []string) {
	rel := make([]finding.Finding, len(fs))
	paths := make([]string, len(fs))
	for i, f := range fs {
		f.Range.File = relPath(dir, f.Range.File)
		paths[i] = f.Range.File
		rel[i] = f
	}
	return report.Fingerprints(rel), paths
}

func relPath(dir, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	r, err := filepath.Rel(dir, abs)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// Write records fs (sorted as reported) for a baseline stored at path.
func Write(w io.Writer, path string, fs []finding.Finding) error {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("resolve %s: %w", path, err)
	}
	fps, paths := keys(dir, fs)
	doc := File{Version: Version, Findings: []Entry{}}
	for i, f := range fs {
		doc.Findings = append(doc.Findings, Entry{Rule: f.Rule, File: paths[i], Message: f.Message, Fingerprint: fps[i]})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// Read loads a baseline stored at path from r.
func Read(r io.Reader, path string) (*Baseline, error) {
	var doc File
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	if doc.Version != Version {
		return nil, fmt.Errorf("baseline %s: version %d, want %d (write it again with --write-baseline)", path, doc.Version, Version)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", path, err)
	}
	b := &Baseline{dir: dir, keys: map[string]bool{}}
	for _, e := range doc.Findings {
		b.keys[e.Fingerprint] = true
	}
	return b, nil
}

// Filter returns the findings not in the baseline, in order, and how many
// were in it.
func (b *Baseline) Filter(fs []finding.Finding) ([]finding.Finding, int) {
	if b == nil {
		return fs, 0
	}
	fps, _ := keys(b.dir, fs)
	var out []finding.Finding
	for i, f := range fs {
		if !b.keys[fps[i]] {
			out = append(out, f)
		}
	}
	return slices.Clip(out), len(fs) - len(out)
}
