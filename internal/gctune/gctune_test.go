package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, BaseLimit},
		{9 << 20, BaseLimit}, // a 1000-file run holds 5-9 MiB
		{10 << 20, BaseLimit},
		{11 << 20, 30 << 20},
		{40 << 20, 88 << 20},
		{1 << 62, 2<<60 + headroom}, // no overflow
	} {
		if got := LimitFor(tc.live); got != tc.want {
			t.Errorf("LimitFor(%d MiB) = %d MiB, want %d MiB", tc.live>>20, got>>20, tc.want>>20)
		}
	}
}

// TestApplyLeavesUserSettings runs first: Apply without GOMEMLIMIT (the
// next test) leaves its governor running in this test binary.
func TestApplyLeavesUserSettings(t *testing.T) {
	gc := debug.SetGCPercent(123)
	limit := debug.SetMemoryLimit(456 << 20)
	defer debug.SetGCPercent(gc)
	defer debug.SetMemoryLimit(limit)
	Apply(func(string) (string, bool) { return "set", true })
	if got := debug.SetGCPercent(123); got != 123 {
		t.Errorf("GOGC set by the user: Apply changed it to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 456<<20 {
		t.Errorf("GOMEMLIMIT set by the user: Apply changed it to %d MiB", got>>20)
	}
}

// TestApplyFollowsLiveHeap: the limit starts at the base, rises when the
// live heap grows past what the base leaves room for, and comes back down.
func TestApplyFollowsLiveHeap(t *testing.T) {
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	defer debug.SetGCPercent(gc)
	Apply(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(goGC); got != goGC {
		t.Errorf("GOGC = %d, want %d", got, goGC)
	}
	if got := debug.SetMemoryLimit(-1); got != BaseLimit {
		t.Errorf("limit = %d MiB, want the base %d MiB", got>>20, BaseLimit>>20)
	}
	hold := make([]byte, 64<<20)
	for i := range hold {
		hold[i] = 1
	}
	waitLimit(t, func(l int64) bool { return l >= LimitFor(64<<20) }, "rise above twice a 64 MiB live heap")
	runtime.KeepAlive(hold)
	hold = nil
	waitLimit(t, func(l int64) bool { return l == BaseLimit }, "return to the base once the heap is freed")
}

// waitLimit collects until the limit satisfies ok: the governor runs on
// the cleanup goroutine after a collection, not within runtime.GC.
func waitLimit(t *testing.T, ok func(int64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		l := debug.SetMemoryLimit(-1)
		if ok(l) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB did not %s", l>>20, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
