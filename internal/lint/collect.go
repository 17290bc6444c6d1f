package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// skipDirs are never walked into.
var skipDirs = map[string]bool{".git": true, "vendor": true, "node_modules": true, ".hg": true, ".svn": true}

// configExts are the file extensions a directory walk picks up. Explicit
// file arguments are always read, whatever their name.
var configExts = map[string]bool{".json": true, ".yaml": true, ".yml": true}

// Collect expands the arguments into a sorted, de-duplicated list of
// files: directories are walked (skipping .git, vendor, node_modules and
// files other than JSON/YAML), files are taken as given.
func Collect(args []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such file or directory", a)
			}
			return nil, fmt.Errorf("stat %s: %w", a, err)
		}
		if !st.IsDir() {
			add(a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != a && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
				return nil
			}
			if configExts[strings.ToLower(filepath.Ext(p))] && !strings.HasPrefix(d.Name(), ".gpulint") {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", a, err)
		}
	}
	sort.Strings(out)
	return out, nil
}
