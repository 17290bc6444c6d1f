//go:build unix

package lint

import (
	"os"
	"syscall"
)

// deviceOf returns the filesystem holding dir, for repoBoundary's stop
// at a mount point; false when it cannot tell.
func deviceOf(dir string) (uint64, bool) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is int32 on some unix systems
}
