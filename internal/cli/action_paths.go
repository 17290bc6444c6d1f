package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A pull request controls the workspace's contents, symlinks included, and
// may control the Action's inputs too. Every path input is therefore
// resolved against the workspace and must stay inside it, written and
// resolved: sarif-file is written, the others (paths, config, model) only
// read, but none may lead the Action outside.

// workspacePath resolves the path input p against the workspace (an
// absolute p must already lie inside it) and refuses one whose written
// form leaves it ("..", an absolute path elsewhere).
func (o *ActionOptions) workspacePath(input, p string) (string, error) {
	abs := filepath.Clean(filepath.FromSlash(p))
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(o.Workspace, abs)
	}
	if !within(o.Workspace, abs) {
		return "", &usageError{fmt.Errorf("input %s: %s lies outside the workspace %s", input, p, o.Workspace)}
	}
	return abs, nil
}

// readablePath resolves a path input that is only read: its written form
// and, where it exists, its real location (every symlink resolved) must
// lie inside the workspace.
func (o *ActionOptions) readablePath(input, p string) (string, error) {
	abs, err := o.workspacePath(input, p)
	if err != nil {
		return "", err
	}
	realWS, err := filepath.EvalSymlinks(o.Workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, nil // the reader says it is missing, with its name
	}
	if err != nil {
		return "", &usageError{fmt.Errorf("input %s: %w", input, err)}
	}
	if !within(realWS, real) {
		return "", &usageError{fmt.Errorf("input %s: %s is a symlink that leads outside the workspace", input, p)}
	}
	return abs, nil
}

// within reports whether p is root or lies below it (both clean and
// absolute, compared as written).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

// writeInWorkspace writes data to the file at abs, a path workspacePath
// returned. It creates the missing directories, refuses a directory chain
// that leads outside the workspace through a symlink, and never follows a
// symlink at abs itself: it writes a temporary file beside it and renames
// it over whatever abs names, so a link is replaced, not written through.
func (o *ActionOptions) writeInWorkspace(input, abs string, data []byte) error {
	realWS, err := filepath.EvalSymlinks(o.Workspace)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	name := relTo(o.Workspace, abs)
	dir := filepath.Dir(abs)
	if err := mkdirInside(o.Workspace, realWS, dir); err != nil {
		return &usageError{fmt.Errorf("input %s: %s: %w", input, name, err)}
	}
	if st, err := os.Lstat(abs); err == nil && st.IsDir() {
		return &usageError{fmt.Errorf("input %s: %s is a directory", input, name)}
	}
	tmp, err := os.CreateTemp(dir, ".gpulint-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; this cleans up a failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// mkdirInside makes sure dir (inside ws, as written) exists and that each
// directory from ws down to it is, with its symlinks resolved, inside
// realWS: a symlink on the way that leads out, or nowhere, is refused.
func mkdirInside(ws, realWS, dir string) error {
	rel, err := filepath.Rel(ws, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return errors.New("its directory lies outside the workspace")
	}
	cur := ws
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		case st.Mode()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return fmt.Errorf("%s is a symlink that leads nowhere", relTo(ws, cur))
			}
			if !within(realWS, real) {
				return fmt.Errorf("%s is a symlink that leads outside the workspace", relTo(ws, cur))
			}
			if st, err = os.Stat(real); err != nil {
				return err
			}
		}
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory", relTo(ws, cur))
		}
	}
	// Once more as a whole, as the kernel will resolve it.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if !within(realWS, real) {
		return errors.New("its directory leads outside the workspace")
	}
	return nil
}
