package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/edit"
	"github.com/gpulint/gpulint/internal/iostreams"
	"github.com/gpulint/gpulint/policies"
	"github.com/gpulint/gpulint/schemas"
)

const fixInput = `{
  "train_micro_batch_size_per_gpu": 4,
  "fp16": {"enabled": false}
}
`

// TestFixWriteNeverLosesAnEdit: between the lint that read a file and
// the write of its fixes, someone else changes the file or its directory.
// The real writer runs after the change; fix --write must leave the other
// party's bytes alone, say which file it did not write, not count it as
// fixed, and exit non-zero.
func TestFixWriteNeverLosesAnEdit(t *testing.T) {
	const edited = `{"train_micro_batch_size_per_gpu": 8, "fp16": {"enabled": false}}` + "\n"
	tests := []struct {
		name string
		// meanwhile runs just before the write, on the file's path.
		meanwhile  func(t *testing.T, path string)
		wantStderr string
		// wantFile is the file's content afterwards ("" for no file).
		wantFile string
	}{
		{
			name: "file edited after lint",
			meanwhile: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantStderr: "not written: write " + "%s: changed since it was read (content differs); refusing to write (run gpulint fix again)",
			wantFile:   edited,
		},
		{
			// Fails for root too: the directory is a file now.
			name: "directory replaced by a file",
			meanwhile: func(t *testing.T, path string) {
				dir := filepath.Dir(path)
				if err := os.Rename(dir, dir+".old"); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(dir, []byte("not a directory\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantStderr: "not written: write %s: resolve: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "train", "ds.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(fixInput), 0o644); err != nil {
				t.Fatal(err)
			}
			ios, _, _, errOut := iostreams.Test()
			f := &Factory{IO: ios, Env: Env{Getenv: func(string) string { return "" }}, Assets: Assets{Policies: policies.FS, Schemas: schemas.FS}}
			cmd := NewCmdFix(f, func(o *FixOptions) error {
				o.writeFile = func(root, p string, old, data []byte, opts edit.WriteOptions) error {
					tc.meanwhile(t, p)
					return edit.WriteFile(root, p, old, data, opts)
				}
				return runFix(context.Background(), o)
			})
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetArgs([]string{"--write", "--no-cache", "--gpu", "H100", "--fail-on", "never", path})
			err := cmd.Execute()
			if code := exitCode(ios, err); code != ExitInternal {
				t.Errorf("exit code %d, want %d", code, ExitInternal)
			}
			stderr := errOut.String()
			for _, w := range []string{strings.ReplaceAll(tc.wantStderr, "%s", path), "gpulint: fixed 0 findings in 0 files\n", "gpulint: 1 file not written\n"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			got, err := os.ReadFile(path)
			if tc.wantFile == "" {
				if err == nil {
					t.Errorf("%s is a file again: %q", path, got)
				}
				return
			}
			if string(got) != tc.wantFile {
				t.Errorf("file content %q, want the edit made meanwhile %q", got, tc.wantFile)
			}
		})
	}
}
