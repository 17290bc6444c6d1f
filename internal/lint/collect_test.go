package lint_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/lint"
)

// failingDirFS lists every directory as os.DirFS does, except the one
// named bad (slash-separated, relative to its root), which fails as a
// directory without read permission would: chmod 000 does not stop root,
// who runs these tests here and in CI.
type failingDirFS struct {
	fs.FS
	bad string
}

func (f failingDirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "readdirent", Path: name, Err: fs.ErrPermission}
	}
	return fs.ReadDir(f.FS, name)
}

// TestCollectUnreadableDir: a directory the walk cannot list is recorded
// with its path and reason, the readable files around it are still
// collected, and the linter reports it as a finding at the directory.
func TestCollectUnreadableDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a/ds.json", "locked/inner.json", "z/ds.yaml"} {
		writeFile(t, filepath.Join(dir, name), "{}\n")
	}
	opts := lint.CollectOptions{DirFS: func(d string) fs.FS { return failingDirFS{os.DirFS(d), "locked"} }}
	c, err := lint.CollectAll([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "a", "ds.json"), filepath.Join(dir, "z", "ds.yaml")}, c.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range c.Unreadable {
		got = append(got, e.Error())
	}
	if diff := cmp.Diff([]string{"list directory " + filepath.Join(dir, "locked") + ": permission denied"}, got); diff != "" {
		t.Errorf("unreadable (-want +got):\n%s", diff)
	}

	l := newLinter(t, lint.Options{})
	res, err := l.Run(context.Background(), c.Files)
	if err != nil {
		t.Fatal(err)
	}
	l.AddUnreadable(res, c.Unreadable)
	var shown []string
	for _, f := range res.Findings {
		if f.Slug == "parse-error" {
			shown = append(shown, f.Range.File+": "+f.Message)
		}
	}
	want := []string{filepath.Join(dir, "locked") + ": directory not checked: cannot list it: permission denied"}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("parse-error findings (-want +got):\n%s", diff)
	}
	if len(res.Files) != 2 {
		t.Errorf("%d files linted, want the 2 readable ones", len(res.Files))
	}
}

// TestCollectRefusesSpecialFiles: a named pipe given as a file is refused
// before anything opens it (opening one blocks until a writer comes).
func TestCollectRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ds.json"), "{}\n")
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"named pipe as argument", []string{fifo}, nil, fifo + ": not a regular file but a named pipe"},
		{"device as argument", []string{os.DevNull}, nil, os.DevNull + ": not a regular file but a character device"},
		{"named pipe in a walk is passed over", []string{dir}, []string{filepath.Join(dir, "ds.json")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lint.Collect(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Collect(%q) = %q, %v; want error %q", tc.args, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCollectSniffsDeepSpeedConf: a directory walk takes a DeepSpeed JSON
// saved as .conf, found by its content, and leaves other .conf files.
func TestCollectSniffsDeepSpeedConf(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ds_z3.conf"), "{\n  \"zero_optimization\": {\"stage\": 3},\n  \"train_micro_batch_size_per_gpu\": 1\n}\n")
	writeFile(t, filepath.Join(dir, "nginx.conf"), "server { listen 80; }\n")
	writeFile(t, filepath.Join(dir, "app.cfg"), "[section]\ntrain_batch_size = 4\n")
	c, err := lint.CollectAll([]string{dir}, lint.CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "ds_z3.conf")}, c.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	res, err := newLinter(t, lint.Options{}).Run(context.Background(), c.Files)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Files[0].Kind; got != "deepspeed" {
		t.Errorf("kind %q, want deepspeed", got)
	}
}
