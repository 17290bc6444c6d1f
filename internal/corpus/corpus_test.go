package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kindDirs are the corpus folders that hold configs; everything else at
// the top (MANIFEST.tsv, SOURCES.md, NOTES.md, LICENSES/) describes them.
var kindDirs = []string{"accelerate", "deepspeed", "finetune", "kubernetes", "mig", "vllm"}

// audit lists what is wrong with the corpus at dir: a manifest entry whose
// file is missing or differs from its sha256, a config file the manifest
// does not list, a repository without a licence file, or a licence the
// audit does not know.
func audit(dir string) ([]string, error) {
	var problems []string
	manifest, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(manifest), "\n"), "\n")
	if lines[0] != "kind\tcorpus_file\trepo\tpath_in_repo\tcommit\tsha256\tlabel" {
		return nil, fmt.Errorf("MANIFEST.tsv:1: unexpected header %q", lines[0])
	}
	listed := map[string]bool{}
	repos := map[string]bool{}
	for i, line := range lines[1:] {
		cols := strings.Split(line, "\t")
		if len(cols) != 7 {
			return nil, fmt.Errorf("MANIFEST.tsv:%d: %d columns, want 7", i+2, len(cols))
		}
		file, repo, sum := cols[1], cols[2], cols[5]
		listed[file] = true
		repos[repo] = true
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("MANIFEST.tsv:%d: %s: missing", i+2, file))
			continue
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			problems = append(problems, fmt.Sprintf("MANIFEST.tsv:%d: %s: sha256 %x, manifest says %s", i+2, file, got, sum))
		}
	}
	for _, k := range kindDirs {
		err := filepath.WalkDir(filepath.Join(dir, k), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			if !listed[filepath.ToSlash(rel)] {
				problems = append(problems, fmt.Sprintf("%s: not in MANIFEST.tsv", filepath.ToSlash(rel)))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}

	sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		return nil, err
	}
	sourced := map[string]bool{}
	for i, line := range strings.Split(string(sources), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 5 || !strings.Contains(cols[1], "/") {
			continue // not a row of the repository table
		}
		repo, licence := strings.TrimSpace(cols[1]), strings.TrimSpace(cols[3])
		sourced[repo] = true
		var want string
		switch licence {
		case "Apache-2.0":
			want = "Apache-2.0.txt" // one text; the licence carries no per-project line
		case "MIT", "MIT-0", "BSD-3-Clause":
			want = strings.ReplaceAll(repo, "/", "__") + ".txt" // the text names the copyright holder
		default:
			problems = append(problems, fmt.Sprintf("SOURCES.md:%d: %s: licence %q unknown to the audit", i+1, repo, licence))
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, "LICENSES", want)); err != nil || info.Size() == 0 {
			problems = append(problems, fmt.Sprintf("SOURCES.md:%d: %s (%s): no LICENSES/%s", i+1, repo, licence, want))
		}
	}
	for r := range repos {
		if !sourced[r] {
			problems = append(problems, fmt.Sprintf("MANIFEST.tsv: %s: not in SOURCES.md", r))
		}
	}
	slices.Sort(problems)
	return problems, nil
}

// TestCorpusAudit holds the corpus in the repository to its manifest and
// its licences.
func TestCorpusAudit(t *testing.T) {
	dir := Dir(t)
	problems, err := audit(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(manifest), "\n") - 1; n != 355 {
		t.Errorf("MANIFEST.tsv lists %d files, want the 355 SOURCES.md counts", n)
	}
}

// TestCorpusAuditFails damages a copy of the corpus one way at a time and
// checks that the audit names the damage.
func TestCorpusAuditFails(t *testing.T) {
	const (
		file = "mig/NVIDIA__mig-parted__examples__config.yaml"
		mit  = "LICENSES/sozercan__k8s-distributed-inference.txt"
	)
	tests := []struct {
		name   string
		damage func(dir string) error
		want   []string
	}{
		{"file removed", func(dir string) error { return os.Remove(filepath.Join(dir, file)) },
			[]string{"MANIFEST.tsv:%d: " + file + ": missing"}},
		{"file edited", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, file), []byte("version: v1\n"), 0o644)
		}, []string{"MANIFEST.tsv:%d: " + file + ": sha256 "}},
		{"file added", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "vllm", "extra.yaml"), nil, 0o644)
		}, []string{"vllm/extra.yaml: not in MANIFEST.tsv"}},
		{"MIT licence removed", func(dir string) error { return os.Remove(filepath.Join(dir, mit)) },
			[]string{"SOURCES.md:%d: sozercan/k8s-distributed-inference (MIT): no " + mit}},
		{"Apache licence removed", func(dir string) error {
			return os.Remove(filepath.Join(dir, "LICENSES", "Apache-2.0.txt"))
		}, []string{"(Apache-2.0): no LICENSES/Apache-2.0.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(Dir(t))); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(dir); err != nil {
				t.Fatal(err)
			}
			got, err := audit(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatal("the audit found nothing wrong")
			}
			for _, w := range tc.want {
				prefix, suffix, numbered := strings.Cut(w, "%d")
				found := slices.ContainsFunc(got, func(p string) bool {
					if !numbered {
						return strings.Contains(p, w)
					}
					_, rest, ok := strings.Cut(p, prefix)
					return ok && strings.Contains(rest, suffix)
				})
				if !found {
					t.Errorf("no problem matches %q in:\n%s", w, cmp.Diff(nil, got))
				}
			}
		})
	}
}
