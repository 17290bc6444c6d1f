package cli_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// finishes runs fn and fails the test if it has not returned within a few
// seconds: the old code blocked forever opening a named pipe.
func finishes(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still blocked after 10s (opening a named pipe?)")
	}
}

// TestSpecialFilesRefused: a named pipe given to lint as a file, or as
// GITHUB_EVENT_PATH, is refused at once with its name instead of
// blocking the run on open.
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("lint argument", func(t *testing.T) {
		var stderr string
		var code int
		finishes(t, func() { _, stderr, code = run(t, false, nil, "lint", "--gpu", "A100-80GB", fifo) })
		if code != 2 || !strings.Contains(stderr, fifo+": not a regular file but a named pipe") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("GITHUB_EVENT_PATH", func(t *testing.T) {
		a := newActionRun(t, "", "", map[string]string{"configs/ds.json": cleanDS})
		a.vars["GITHUB_EVENT_PATH"] = fifo
		var stderr string
		var code int
		finishes(t, func() { _, stderr, code = a.run(t, nil) })
		if code == 0 || !strings.Contains(stderr, "GITHUB_EVENT_PATH "+fifo+" is not a regular file") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
