package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpulint/gpulint/internal/config"
	"github.com/gpulint/gpulint/internal/finding"
	"github.com/gpulint/gpulint/internal/source"
)

// skipDirs are never walked into.
var skipDirs = map[string]bool{".git": true, "vendor": true, "node_modules": true, ".hg": true, ".svn": true}

// configExts are the file extensions a directory walk picks up. Explicit
// file arguments are always read, whatever their name.
var configExts = map[string]bool{".json": true, ".yaml": true, ".yml": true}

// Collection is what CollectAll found.
type Collection struct {
	Files []string
	// Unreadable are the directories below an argument that the walk
	// could not list, each with the OS path and the reason. The files
	// around them are still in Files; Linter.AddUnreadable reports them.
	Unreadable []*fs.PathError
	// Helm are the Helm chart templates found (files under templates/ of
	// a directory holding Chart.yaml): Go templates, not YAML, so they
	// are not read; callers say so.
	Helm []string
}

// CollectOptions adjust CollectAll.
type CollectOptions struct {
	// DirFS opens a directory argument for the walk; nil means os.DirFS.
	// Tests wrap it to make a directory fail to list, which chmod 000
	// cannot do for root.
	DirFS func(dir string) fs.FS
	// Exclude are globs of files and directories to leave out, matched
	// against the path as the argument names it (config.MatchExclude).
	Exclude []string
}

// Collect is CollectAll that treats a directory it cannot list as an
// error, for callers that have no report to show it in.
func Collect(args []string) ([]string, error) {
	c, err := CollectAll(args, CollectOptions{})
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(c.Unreadable))
	for i, e := range c.Unreadable {
		errs[i] = e
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c.Files, nil
}

// CollectAll expands the arguments into a sorted, de-duplicated list of
// files: directories are walked (skipping .git, vendor, node_modules and
// files other than JSON/YAML), files are taken as given. An argument that
// is neither a regular file nor a directory (a named pipe, a device, a
// socket) is refused before anything opens it, since opening a pipe
// blocks until a writer comes. A directory below an argument that cannot
// be listed does not stop the walk: it is recorded in Unreadable.
func CollectAll(args []string, opts CollectOptions) (Collection, error) {
	dirFS := opts.DirFS
	if dirFS == nil {
		dirFS = os.DirFS
	}
	seen := map[string]bool{}
	var c Collection
	helmCharts := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if seen[p] || excluded(opts.Exclude, p) {
			return
		}
		seen[p] = true
		if helmTemplate(p, helmCharts) {
			c.Helm = append(c.Helm, p)
			return
		}
		c.Files = append(c.Files, p)
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Collection{}, fmt.Errorf("%s: no such file or directory", a)
			}
			return Collection{}, fmt.Errorf("stat %s: %w", a, err)
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				return Collection{}, fmt.Errorf("%s: not a regular file but %s; gpulint reads only files and directories", a, fileType(st.Mode()))
			}
			add(a)
			continue
		}
		err = fs.WalkDir(dirFS(a), ".", func(p string, d fs.DirEntry, err error) error {
			osPath := filepath.Join(a, filepath.FromSlash(p))
			if err != nil {
				if p != "." && d != nil && d.IsDir() {
					c.Unreadable = append(c.Unreadable, &fs.PathError{Op: "list directory", Path: osPath, Err: unwrapPath(err)})
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() {
				if p != "." && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") ||
					excluded(opts.Exclude, osPath)) {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
				return nil
			}
			ext := strings.ToLower(filepath.Ext(p))
			switch {
			case configExts[ext] && !strings.HasPrefix(d.Name(), ".gpulint"):
				add(osPath)
			case sniffExts[ext] && sniffDeepSpeed(osPath):
				add(osPath)
			}
			return nil
		})
		if err != nil {
			return Collection{}, fmt.Errorf("walk %s: %w", a, err)
		}
	}
	sort.Strings(c.Files)
	sort.Strings(c.Helm)
	return c, nil
}

// excluded matches path, made relative to the working directory when it
// lies below it, against the exclude globs.
func excluded(globs []string, path string) bool {
	if len(globs) == 0 {
		return false
	}
	if filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
				path = r
			}
		}
	}
	return config.MatchExclude(globs, filepath.ToSlash(path)) != ""
}

// helmTemplate reports whether path lies under templates/ of a directory
// holding a Chart.yaml; charts caches the answer per directory.
func helmTemplate(path string, charts map[string]bool) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for d := filepath.Dir(abs); filepath.Dir(d) != d; d = filepath.Dir(d) {
		if filepath.Base(d) != "templates" {
			continue
		}
		chart := filepath.Dir(d)
		is, ok := charts[chart]
		if !ok {
			st, err := os.Stat(filepath.Join(chart, "Chart.yaml"))
			is = err == nil && st.Mode().IsRegular()
			charts[chart] = is
		}
		if is {
			return true
		}
	}
	return false
}

// unwrapPath drops the fs.FS-relative path from a walk error, so that the
// error shows the OS path once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileType names a mode that is neither a regular file nor a directory.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// AddUnreadable reports each directory the walk could not list as a
// parse-error finding at the directory, so that the report names the
// path and the verdict counts the files that went unchecked.
func (l *Linter) AddUnreadable(res *Result, unreadable []*fs.PathError) {
	if len(unreadable) == 0 {
		return
	}
	for _, e := range unreadable {
		res.Findings = append(res.Findings, l.parseFinding(&source.Error{
			File: e.Path, Pos: finding.Pos{Line: 1, Col: 1},
			Msg: fmt.Sprintf("directory not checked: cannot list it: %v", e.Err),
		}))
	}
	res.Findings = finding.Sort(res.Findings)
	finding.SplitLong(res.Findings)
}

// sniffExts are the extensions a walk reads by content: DeepSpeed configs
// named ds_config.conf or zero3.config are JSON all the same: DeepSpeed
// reads the path it is given whatever its name (deepspeedai/DeepSpeed
// deepspeed/runtime/config.py, DeepSpeedConfig.__init__: hjson.load of
// any existing path).
var sniffExts = map[string]bool{".conf": true, ".config": true, ".cfg": true}

// sniffLimit bounds the files sniffed and the bytes read of each, so a
// walk over a tree full of .conf files stays fast.
const sniffLimit = 64 << 10

// sniffDeepSpeed reports whether a small file is a JSON object naming a
// DeepSpeed key, from its first bytes only; kind detection proper runs
// when the file is linted.
func sniffDeepSpeed(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > sniffLimit {
		return false
	}
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	head := bytes.TrimLeft(buf[:n], " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	for _, k := range deepSpeedKeys {
		if bytes.Contains(head, k) {
			return true
		}
	}
	return false
}

// deepSpeedKeys are top-level keys only DeepSpeed configs write
// (deepspeed/runtime/constants.py).
var deepSpeedKeys = [][]byte{[]byte(`"zero_optimization"`), []byte(`"train_micro_batch_size_per_gpu"`),
	[]byte(`"train_batch_size"`), []byte(`"gradient_accumulation_steps"`)}

// CollectNamed is the collection of one file known by name only, such as
// standard input given a name: excluded, a Helm template, or the file.
func CollectNamed(name string, opts CollectOptions) Collection {
	switch {
	case excluded(opts.Exclude, name):
		return Collection{}
	case helmTemplate(name, map[string]bool{}):
		return Collection{Helm: []string{name}}
	}
	return Collection{Files: []string{name}}
}
