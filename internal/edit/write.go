package edit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// TempPattern is the os.CreateTemp pattern of the temporary files
// WriteFile creates next to the file it replaces. A crash between
// writing and renaming can leave one behind; CleanupTemp removes them.
const TempPattern = ".gpulint-*.tmp"

// ErrChanged is returned (wrapped) by WriteFile when the file no longer
// holds the bytes the new content was computed from: someone changed it
// since it was read, and writing would lose their edit.
var ErrChanged = errors.New("changed since it was read")

// ErrReadOnly is returned (wrapped) by WriteFile for a file without any
// write permission bit, unless WriteOptions.Force is set. The refusal is
// by mode bits, so it holds for root too.
var ErrReadOnly = errors.New("read-only (no write permission bits)")

// WriteOptions tune WriteFile.
type WriteOptions struct {
	// Force writes a file that has no write permission bits.
	Force bool
}

// writer holds the file-system steps of WriteFile so tests can make any
// of them fail. realWriter returns the one that uses the os package.
type writer struct {
	create  func(dir, pattern string) (*os.File, error)
	write   func(f *os.File, p []byte) (int, error)
	sync    func(f *os.File) error
	chmod   func(f *os.File, mode fs.FileMode) error
	chown   func(f *os.File, uid, gid int) error
	close   func(f *os.File) error
	rename  func(oldpath, newpath string) error
	syncDir func(dir string) error
}

func realWriter() writer {
	return writer{
		create:  os.CreateTemp,
		write:   (*os.File).Write,
		sync:    (*os.File).Sync,
		chmod:   (*os.File).Chmod,
		chown:   (*os.File).Chown,
		close:   (*os.File).Close,
		rename:  os.Rename,
		syncDir: syncDir,
	}
}

// WriteFile atomically replaces the contents of an existing regular file
// with data, provided it still holds exactly old (the bytes data was
// computed from). path is relative to root unless it is absolute; after
// resolving symlinks it must lie inside root, so a symlink inside root is
// followed (its target is replaced and the link kept) and one that leads
// out of root is refused. A file without write permission bits is refused
// (ErrReadOnly) unless opts.Force is set.
//
// WriteFile compares the file with old before it starts and again right
// before the rename, then also its size, modification time and identity
// with what it saw at the start; any difference refuses the write
// (ErrChanged), so an edit made meanwhile is never lost. The window left
// is the rename itself.
//
// It writes a temporary file (named after TempPattern) in the target's
// directory, gives it the original's owner where the process may (an EPERM
// is ignored) and mode bits (whatever the umask), syncs it, renames it over
// the original and syncs the directory. On any failure before the rename
// the temporary file is removed and the original is left byte-identical.
// A hard link to the original keeps the old contents.
func WriteFile(root, path string, old, data []byte, opts WriteOptions) error {
	return realWriter().writeFile(root, path, old, data, opts)
}

func (w writer) writeFile(root, path string, old, data []byte, opts WriteOptions) (err error) {
	target, before, err := resolveTarget(root, path)
	if err != nil {
		return err
	}
	mode := before.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if mode&0o222 == 0 && !opts.Force {
		return fmt.Errorf("write %s: %w (mode %v)", path, ErrReadOnly, mode.Perm())
	}
	if err := unchanged(target, old, before); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	dir := filepath.Dir(target)
	f, err := w.create(dir, TempPattern)
	if err != nil {
		return fmt.Errorf("write %s: create temporary file: %w", path, err)
	}
	tmp := f.Name()
	closed, renamed := false, false
	// Deferred, so the temporary file goes even if a step panics.
	defer func() {
		if renamed {
			return
		}
		if !closed {
			_ = f.Close() // the write already failed; its error is the one to report
		}
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove temporary file: %w", rerr))
		}
	}()

	if err := writeAll(w, f, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Owner first: a chown may clear setuid and setgid bits, which the
	// chmod then restores.
	if uid, gid, ok := owner(before); ok {
		if err := w.chown(f, uid, gid); err != nil && !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("write %s: set owner: %w", path, err)
		}
	}
	// chmod before the sync, so the sync makes the mode durable too.
	if err := w.chmod(f, mode); err != nil {
		return fmt.Errorf("write %s: set mode: %w", path, err)
	}
	if err := w.sync(f); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	closed = true
	if err := w.close(f); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err := unchanged(target, old, before); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.rename(tmp, target); err != nil {
		return fmt.Errorf("write %s: rename: %w", path, err)
	}
	renamed = true
	if err := w.syncDir(dir); err != nil {
		return fmt.Errorf("write %s: replaced, but sync of directory failed: %w", path, err)
	}
	return nil
}

// writeAll calls w.write until data is written or it fails; a short
// write without an error is an error.
func writeAll(w writer, f *os.File, data []byte) error {
	for len(data) > 0 {
		n, err := w.write(f, data)
		if err != nil {
			return err
		}
		if n <= 0 {
			return fmt.Errorf("short write")
		}
		data = data[n:]
	}
	return nil
}

// unchanged checks that target still holds old and is the same file, of
// the same size and modification time, as before.
func unchanged(target string, old []byte, before fs.FileInfo) error {
	now, err := os.Stat(target)
	if err != nil {
		return err
	}
	if !os.SameFile(before, now) || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		return fmt.Errorf("%w (size or modification time differ); refusing to write", ErrChanged)
	}
	cur, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, old) {
		return fmt.Errorf("%w (content differs); refusing to write", ErrChanged)
	}
	return nil
}

// resolveTarget returns the real path of the file to replace and what
// Stat said of it, or an error if it lies outside root or is not a
// regular file.
func resolveTarget(root, path string) (string, fs.FileInfo, error) {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, path)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", nil, fmt.Errorf("write %s: resolve root: %w", path, err)
	}
	realRoot, err = filepath.Abs(realRoot)
	if err != nil {
		return "", nil, fmt.Errorf("write %s: resolve root: %w", path, err)
	}
	target, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", nil, fmt.Errorf("write %s: resolve: %w", path, err)
	}
	target, err = filepath.Abs(target)
	if err != nil {
		return "", nil, fmt.Errorf("write %s: resolve: %w", path, err)
	}
	if !within(realRoot, target) {
		return "", nil, fmt.Errorf("write %s: resolves to %s, outside %s: refusing to write", path, target, realRoot)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", nil, fmt.Errorf("write %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("write %s: not a regular file (%s): refusing to write", path, fi.Mode().Type())
	}
	return target, fi, nil
}

// within reports whether path lies strictly inside dir; both are clean
// absolute paths.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// syncDir flushes a directory entry change (the rename) to disk. Windows
// cannot sync a directory, so there it does nothing.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	return errors.Join(serr, cerr)
}

// CleanupTemp removes the temporary files WriteFile left in dir after a
// crash (regular files matching TempPattern) and returns their names.
// Do not run it while another gpulint may be writing in dir.
func CleanupTemp(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("clean up %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if ok, _ := filepath.Match(TempPattern, e.Name()); !ok || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := os.Remove(name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("clean up %s: %w", dir, errors.Join(errs...))
	}
	return removed, nil
}
