package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFixWriteRefusals: fix --write never reports a file as fixed that it
// did not write, and exits non-zero for it; a read-only file is written
// only with --force. The failures are real ones that hold for root too.
func TestFixWriteRefusals(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the path to fix and the real file behind it.
		setup      func(t *testing.T, dir string) (path, real string)
		args       []string
		wantCode   int
		wantStderr []string
		wantFixed  bool
		wantMode   os.FileMode
	}{
		{
			name: "read-only file refused",
			setup: func(t *testing.T, dir string) (string, string) {
				p := write(t, dir, "ds.json", fp32DS)
				chmod(t, p, 0o444)
				return p, p
			},
			wantCode: 3,
			wantStderr: []string{
				"ds.json: not written: write ", "read-only (no write permission bits) (mode -r--r--r--) (use --force to write it anyway)",
				"gpulint: fixed 0 findings in 0 files\n", "gpulint: 1 file not written\n",
			},
			wantMode: 0o444,
		},
		{
			name: "read-only file with --force",
			setup: func(t *testing.T, dir string) (string, string) {
				p := write(t, dir, "ds.json", fp32DS)
				chmod(t, p, 0o444)
				return p, p
			},
			args:       []string{"--force"},
			wantCode:   0,
			wantStderr: []string{"gpulint: fixed 1 finding in 1 file\n"},
			wantFixed:  true,
			wantMode:   0o444,
		},
		{
			// The symlink leads out of the directory fix may write in:
			// the write fails whoever runs it.
			name: "failed write",
			setup: func(t *testing.T, dir string) (string, string) {
				real := write(t, dir, "elsewhere/ds.json", fp32DS)
				link := filepath.Join(dir, "configs", "ds.json")
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(real, link); err != nil {
					t.Fatal(err)
				}
				return link, real
			},
			wantCode:   3,
			wantStderr: []string{"configs/ds.json: not written: ", "outside", "gpulint: fixed 0 findings in 0 files\n", "gpulint: 1 file not written\n"},
			wantMode:   0o644,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, real := tc.setup(t, dir)
			args := append([]string{"fix", "--write", "--gpu", "H100", "--fail-on", "never"}, tc.args...)
			_, stderr, code := run(t, false, nil, append(args, path)...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			data, err := os.ReadFile(real)
			if err != nil {
				t.Fatal(err)
			}
			if fixed := strings.Contains(string(data), `"bf16"`); fixed != tc.wantFixed {
				t.Errorf("file fixed: %v, want %v:\n%s", fixed, tc.wantFixed, data)
			}
			fi, err := os.Stat(real)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantMode, fi.Mode().Perm()); diff != "" {
				t.Errorf("mode (-want +got):\n%s", diff)
			}
		})
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
