package edit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	oldContent = "train_batch_size: 48\n"
	newContent = "train_batch_size: 64\n"
)

// mustWrite creates path (and its directory) with content and exactly
// mode, whatever the umask.
func mustWrite(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// temps lists the WriteFile temporary files in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if ok, _ := filepath.Match(TempPattern, e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	return names
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name  string
		mode  fs.FileMode
		force bool
		// setup creates files under root and returns the path to pass
		// and the real file that must change.
		setup func(t *testing.T, root string) (path, real string)
	}{
		{name: "relative path", mode: 0o644, setup: func(t *testing.T, root string) (string, string) {
			mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o644)
			return "ds.yaml", filepath.Join(root, "ds.yaml")
		}},
		{name: "absolute path in a subdirectory", mode: 0o644, setup: func(t *testing.T, root string) (string, string) {
			p := filepath.Join(root, "sub", "ds.yaml")
			mustWrite(t, p, oldContent, 0o644)
			return p, p
		}},
		{name: "mode 0600 kept", mode: 0o600, setup: func(t *testing.T, root string) (string, string) {
			mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o600)
			return "ds.yaml", filepath.Join(root, "ds.yaml")
		}},
		{name: "mode 0755 kept", mode: 0o755, setup: func(t *testing.T, root string) (string, string) {
			mustWrite(t, filepath.Join(root, "run.sh"), oldContent, 0o755)
			return "run.sh", filepath.Join(root, "run.sh")
		}},
		// 0666 is wider than any usual umask allows for new files.
		{name: "mode 0666 kept despite umask", mode: 0o666, setup: func(t *testing.T, root string) (string, string) {
			mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o666)
			return "ds.yaml", filepath.Join(root, "ds.yaml")
		}},
		{name: "read-only file with force", mode: 0o444, force: true, setup: func(t *testing.T, root string) (string, string) {
			mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o444)
			return "ds.yaml", filepath.Join(root, "ds.yaml")
		}},
		{name: "symlink inside root is followed", mode: 0o640, setup: func(t *testing.T, root string) (string, string) {
			real := filepath.Join(root, "configs", "real.yaml")
			mustWrite(t, real, oldContent, 0o640)
			mustSymlink(t, filepath.Join("configs", "real.yaml"), filepath.Join(root, "link.yaml"))
			return "link.yaml", real
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("unix mode bits")
			}
			root := t.TempDir()
			path, real := tc.setup(t, root)
			linkBefore, _ := os.Lstat(filepath.Join(root, path))
			if err := WriteFile(root, path, []byte(oldContent), []byte(newContent), WriteOptions{Force: tc.force}); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			if diff := cmp.Diff(newContent, readString(t, real)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			fi, err := os.Stat(real)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tc.mode {
				t.Errorf("mode = %v, want %v", got, tc.mode)
			}
			if linkBefore != nil && linkBefore.Mode()&fs.ModeSymlink != 0 {
				after, err := os.Lstat(filepath.Join(root, path))
				if err != nil || after.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("symlink %s was replaced by a file", path)
				}
			}
			if left := temps(t, filepath.Dir(real)); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestWriteFileRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string) (path string, keep []string)
		want  string // part of the error
		// old is the content the caller read; oldContent unless set.
		old string
	}{
		{name: "changed since it was read", want: "changed since it was read (content differs)", old: "train_batch_size: 32\n",
			setup: func(t *testing.T, root, _ string) (string, []string) {
				mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o644)
				return "ds.yaml", []string{filepath.Join(root, "ds.yaml")}
			}},
		// Root may write a 0444 file, so the refusal must be by mode bits.
		{name: "read-only file", want: "read-only (no write permission bits) (mode -r--r--r--)", setup: func(t *testing.T, root, _ string) (string, []string) {
			mustWrite(t, filepath.Join(root, "ds.yaml"), oldContent, 0o444)
			return "ds.yaml", []string{filepath.Join(root, "ds.yaml")}
		}},
		{name: "symlink out of root", want: "outside", setup: func(t *testing.T, root, outside string) (string, []string) {
			target := filepath.Join(outside, "secret.yaml")
			mustWrite(t, target, oldContent, 0o644)
			mustSymlink(t, target, filepath.Join(root, "ds.yaml"))
			return "ds.yaml", []string{target}
		}},
		{name: "directory symlinked out of root", want: "outside", setup: func(t *testing.T, root, outside string) (string, []string) {
			target := filepath.Join(outside, "ds.yaml")
			mustWrite(t, target, oldContent, 0o644)
			mustSymlink(t, outside, filepath.Join(root, "configs"))
			return filepath.Join("configs", "ds.yaml"), []string{target}
		}},
		{name: "relative path escaping root", want: "outside", setup: func(t *testing.T, root, outside string) (string, []string) {
			target := filepath.Join(outside, "ds.yaml")
			mustWrite(t, target, oldContent, 0o644)
			rel, err := filepath.Rel(root, target)
			if err != nil {
				t.Fatal(err)
			}
			return rel, []string{target}
		}},
		{name: "directory", want: "not a regular file", setup: func(t *testing.T, root, _ string) (string, []string) {
			if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			return "d", nil
		}},
		{name: "missing file", want: "no such file", setup: func(t *testing.T, root, _ string) (string, []string) {
			return "absent.yaml", nil
		}},
		{name: "read-only directory", want: "permission denied", setup: func(t *testing.T, root, _ string) (string, []string) {
			if os.Geteuid() == 0 || runtime.GOOS == "windows" {
				t.Skip("permissions are not enforced here; TestWriteFileStepFailures covers EACCES")
			}
			dir := filepath.Join(root, "ro")
			target := filepath.Join(dir, "ds.yaml")
			mustWrite(t, target, oldContent, 0o644)
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
			return filepath.Join("ro", "ds.yaml"), []string{target}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			path, keep := tc.setup(t, root, outside)
			old := oldContent
			if tc.old != "" {
				old = tc.old
			}
			err := WriteFile(root, path, []byte(old), []byte(newContent), WriteOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteFile error = %v, want one containing %q", err, tc.want)
			}
			for _, k := range keep {
				if got := readString(t, k); got != oldContent {
					t.Errorf("%s changed to %q", k, got)
				}
				if left := temps(t, filepath.Dir(k)); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			}
		})
	}
}

// errAfter returns a write step that writes at most limit bytes in all
// and then fails with ENOSPC, as a full disk does.
func errAfter(limit int) func(*os.File, []byte) (int, error) {
	written := 0
	return func(f *os.File, p []byte) (int, error) {
		if room := limit - written; len(p) > room {
			n, err := f.Write(p[:room])
			written += n
			if err != nil {
				return n, err
			}
			return n, syscall.ENOSPC
		}
		n, err := f.Write(p)
		written += n
		return n, err
	}
}

const concurrentContent = "train_batch_size: 96 # edited by hand meanwhile\n"

// editTarget plays another program that writes ds.yaml beside the
// temporary file f while gpulint is writing it, and sets its modification
// time to mtime unless that is zero.
func editTarget(f *os.File, content string, mtime time.Time) {
	target := filepath.Join(filepath.Dir(f.Name()), "ds.yaml")
	if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
		panic(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(target, mtime, mtime); err != nil {
			panic(err)
		}
	}
}

// crash is the panic value of a simulated crash.
type crash struct{}

func TestWriteFileStepFailures(t *testing.T) {
	tests := []struct {
		name     string
		change   func(w *writer)
		want     error // errors.Is target; nil for the crash
		replaced bool  // the rename happened before the failure
		// content is the file's content afterwards when neither the old
		// nor the new one (someone else wrote it).
		content string
	}{
		{name: "file edited during the write", want: ErrChanged, content: concurrentContent, change: func(w *writer) {
			w.sync = func(f *os.File) error {
				editTarget(f, concurrentContent, time.Time{})
				return f.Sync()
			}
		}},
		// Same bytes back, but touched meanwhile: the size and time check.
		{name: "file rewritten with the same bytes during the write", want: ErrChanged, change: func(w *writer) {
			w.sync = func(f *os.File) error {
				editTarget(f, oldContent, time.Unix(1e9, 0))
				return f.Sync()
			}
		}},
		{name: "chown fails other than EPERM", want: syscall.EIO, change: func(w *writer) {
			w.chown = func(*os.File, int, int) error { return syscall.EIO }
		}},
		{name: "chown EPERM is ignored", replaced: true, change: func(w *writer) {
			w.chown = func(*os.File, int, int) error { return syscall.EPERM }
		}},
		{name: "directory not writable", want: fs.ErrPermission, change: func(w *writer) {
			w.create = func(string, string) (*os.File, error) { return nil, syscall.EACCES }
		}},
		{name: "disk full after 5 bytes", want: syscall.ENOSPC, change: func(w *writer) { w.write = errAfter(5) }},
		{name: "disk full at once", want: syscall.ENOSPC, change: func(w *writer) { w.write = errAfter(0) }},
		{name: "fsync fails", want: syscall.EIO, change: func(w *writer) {
			w.sync = func(*os.File) error { return syscall.EIO }
		}},
		{name: "chmod fails", want: syscall.EPERM, change: func(w *writer) {
			w.chmod = func(*os.File, fs.FileMode) error { return syscall.EPERM }
		}},
		{name: "close fails", want: syscall.EIO, change: func(w *writer) {
			w.close = func(f *os.File) error { _ = f.Close(); return syscall.EIO }
		}},
		{name: "rename fails", want: syscall.EXDEV, change: func(w *writer) {
			w.rename = func(string, string) error { return syscall.EXDEV }
		}},
		{name: "crash between write and rename", change: func(w *writer) {
			w.rename = func(string, string) error { panic(crash{}) }
		}},
		{name: "directory sync fails after the rename", want: syscall.EIO, replaced: true, change: func(w *writer) {
			w.syncDir = func(string) error { return syscall.EIO }
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "ds.yaml")
			mustWrite(t, target, oldContent, 0o644)
			w := realWriter()
			tc.change(&w)
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						if _, ok := r.(crash); !ok {
							panic(r)
						}
						err = errors.New("crashed")
					}
				}()
				return w.writeFile(root, "ds.yaml", []byte(oldContent), []byte(newContent), WriteOptions{})
			}()
			switch {
			case tc.want == nil && tc.replaced:
				if err != nil {
					t.Errorf("writeFile = %v, want success", err)
				}
			case tc.want == nil && (err == nil || err.Error() != "crashed"):
				t.Errorf("writeFile = %v, want the simulated crash", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("writeFile = %v, want %v", err, tc.want)
			}
			want := oldContent
			if tc.replaced {
				want = newContent
			}
			if tc.content != "" {
				want = tc.content
			}
			if diff := cmp.Diff(want, readString(t, target)); diff != "" {
				t.Errorf("file content (-want +got):\n%s", diff)
			}
			if left := temps(t, root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestWriteFileKeepsOwner: the replacement gets the original's uid and
// gid. Only root may give a file away, so elsewhere there is nothing to
// show and the test says so.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 || runtime.GOOS == "windows" {
		t.Skip("only root can give a file another owner; the tests run as root in CI")
	}
	root := t.TempDir()
	target := filepath.Join(root, "ds.yaml")
	mustWrite(t, target, oldContent, 0o644)
	const uid, gid = 4242, 4343
	if err := os.Chown(target, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(root, "ds.yaml", []byte(oldContent), []byte(newContent), WriteOptions{}); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	gotUID, gotGID, _ := owner(fi)
	if diff := cmp.Diff([2]int{uid, gid}, [2]int{gotUID, gotGID}); diff != "" {
		t.Errorf("owner (-want +got):\n%s", diff)
	}
	if got := readString(t, target); got != newContent {
		t.Errorf("content %q", got)
	}
}

func TestCleanupTemp(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".gpulint-123.tmp", ".gpulint-abc.tmp", "ds.yaml", "gpulint-1.tmp", ".gpulint-1.tmp.bak"} {
		mustWrite(t, filepath.Join(dir, name), "x", 0o644)
	}
	if err := os.Mkdir(filepath.Join(dir, ".gpulint-dir.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	removed, err := CleanupTemp(dir)
	if err != nil {
		t.Fatalf("CleanupTemp: %v", err)
	}
	want := []string{filepath.Join(dir, ".gpulint-123.tmp"), filepath.Join(dir, ".gpulint-abc.tmp")}
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{".gpulint-1.tmp.bak", ".gpulint-dir.tmp", "ds.yaml", "gpulint-1.tmp"}, left); diff != "" {
		t.Errorf("left in dir (-want +got):\n%s", diff)
	}
}
