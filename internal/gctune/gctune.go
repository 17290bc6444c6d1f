// Package gctune sets gpulint's garbage-collector policy.
//
// Most runs are short (a hook, a few files): with GOGC 400 they finish
// without collecting, which took one-file CPU time from about 50 to 30 ms.
// A soft memory limit holds larger runs to a small footprint: 1000 files
// peak at about 38.5 MiB under the 28 MiB limit, against 48-49 MiB under
// 40 MiB, for about 10% more wall time (docs/performance.md).
//
// A fixed limit alone fails the largest runs: results grow with the files
// (findings, and the bytes of the files that have them), and once the
// live heap nears the limit the collector runs back to back. 20000 files
// took 5.5 s under a fixed 40 MiB limit against 2.4 s without one. So after
// every collection the limit is set again from the live heap: the base
// while the live heap is small, and room for it to double beyond that
// (the pacing of GOGC 100), so memory grows with what the run must hold
// and the collector never thrashes.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

const (
	// BaseLimit is the soft memory limit while the live heap is small.
	BaseLimit = 28 << 20
	// headroom is what the runtime needs beside a doubled live heap:
	// stacks, GC metadata and free spans not yet returned (the heap goal
	// under a limit L was about L-13 MiB in gctrace of 1000-file runs).
	headroom = 8 << 20
	// goGC is the GOGC of short runs.
	goGC = 400
)

// Apply sets GOGC and the soft memory limit unless the user set GOGC or
// GOMEMLIMIT (lookupEnv is os.LookupEnv), and when it set the limit, keeps
// it in step with the live heap after every collection. It also turns off
// heap-profile sampling, which gpulint never reads: its stack buckets
// held 1.4 MiB at the end of a 1000-file run (runtime/metrics,
// /memory/classes/profiling/buckets). Call it first thing in main.
func Apply(lookupEnv func(string) (string, bool)) {
	runtime.MemProfileRate = 0
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(goGC)
	}
	if _, set := lookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(BaseLimit)
		afterEachGC(func() { debug.SetMemoryLimit(LimitFor(liveHeap())) })
	}
}

// LimitFor is the soft memory limit for a live heap of live bytes.
func LimitFor(live uint64) int64 {
	return max(BaseLimit, 2*int64(min(live, 1<<60))+headroom)
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap reads the heap marked live by the last collection. Only the
// cleanup goroutine calls it, one collection at a time.
func liveHeap() uint64 {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return liveSample[0].Value.Uint64()
}

// afterEachGC runs f after each collection: a sentinel object's cleanup
// runs once a collection finds it unreachable, and arms the next one.
func afterEachGC(f func()) {
	type sentinel struct{ _ *int } // pointerful, so never a tiny allocation batched with others
	var arm func(int)
	arm = func(int) {
		f()
		runtime.AddCleanup(&sentinel{}, arm, 0)
	}
	runtime.AddCleanup(&sentinel{}, arm, 0)
}
