package check

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/topdown"
)

// DefaultPolicyMemory is the policy memory limit unless WithPolicyMemory
// sets another: the Go heap may hold this much while custom policies
// evaluate.
const DefaultPolicyMemory = 1 << 30

// WithPolicyMemory bounds the Go heap while custom policies evaluate
// (bytes; 0 means DefaultPolicyMemory). OPA has no memory limit of its
// own: a watchdog reads the heap every few milliseconds and cancels an
// evaluation once the heap a collection found live exceeds the limit.
// Built-ins that build large values (numbers.range, comprehensions) check
// for cancellation as they go. Built-in rules are never watched.
func WithPolicyMemory(bytes uint64) Option {
	return func(o *engineOptions) { o.policyMemory = bytes }
}

// ErrMemoryLimit reports an evaluation stopped by the policy memory limit.
var ErrMemoryLimit = errors.New("policy evaluation grew the heap past its limit")

const (
	// heapTick is how often the watchdog reads the heap: two metrics,
	// a few hundred nanoseconds.
	heapTick = 2 * time.Millisecond
	// minForcedGC is the least time between collections the watchdog
	// forces (it counts the runtime's own collections too). A collection
	// of a heap near 1 GiB costs hundreds of milliseconds; forcing one per
	// tick, as a heap hovering at the limit made the first watchdog do,
	// took 11-19 s to stop a policy.
	minForcedGC = 100 * time.Millisecond
	// maxForcedGC caps the backoff after collections that found the heap
	// under the limit (garbage, not live data, had pushed it over).
	maxForcedGC = 1600 * time.Millisecond
)

// heapGuard is an engine's policy memory limit and the gate that lets one
// of its watchdogs force a collection at a time: files evaluated in
// parallel each have a watchdog, and one collection answers for all.
type heapGuard struct {
	limit uint64
	gc    sync.Mutex
}

// heapSample is what the watchdog reads of the runtime.
type heapSample struct {
	// objects is the heap's objects, live and not yet swept garbage
	// (/memory/classes/heap/objects:bytes): it rises as soon as a policy
	// allocates.
	objects uint64
	// live is the heap the last completed collection marked live
	// (/gc/heap/live:bytes): garbage is not in it.
	live uint64
	// cycles counts completed collections (/gc/cycles/total:gc-cycles).
	cycles uint64
}

var heapMetrics = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/live:bytes",
	"/gc/cycles/total:gc-cycles",
}

// readHeap reads a heapSample into buf (one per watchdog).
func readHeap(buf []metrics.Sample) heapSample {
	metrics.Read(buf)
	u := func(i int) uint64 {
		if buf[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return buf[i].Value.Uint64()
	}
	return heapSample{objects: u(0), live: u(1), cycles: u(2)}
}

type heapAction int

const (
	heapWait    heapAction = iota // under the limit, or a collection was too recent
	heapCollect                   // over the limit by objects: collect to tell live from garbage
	heapCancel                    // a collection during this evaluation found more live than the limit
)

// heapWatch decides, from successive samples, when to force a collection
// and when to cancel. It holds no runtime state, so tests drive it with
// made-up samples.
type heapWatch struct {
	limit       uint64
	startCycles uint64        // collections completed before the evaluation began
	lastCycles  uint64        // collections seen so far
	lastGC      time.Time     // when the latest collection was seen complete
	interval    time.Duration // least time from one collection to a forced one
	// threshold is the objects bytes past which a collection is forced:
	// the limit until a collection during the evaluation has found live
	// bytes L under it, then 2*limit - L.
	threshold uint64
}

func newHeapWatch(limit uint64, s heapSample) *heapWatch {
	return &heapWatch{limit: limit, startCycles: s.cycles, lastCycles: s.cycles, interval: minForcedGC, threshold: limit}
}

// next is the action for sample s taken at now. Live bytes count only
// from a collection that completed during the evaluation: one from before
// may have marked another file's data.
//
// Objects past the threshold force a collection, at most once per
// interval. Before any collection the threshold is the limit. After one
// that found L live bytes, live bytes can pass the limit only once objects
// have grown by limit - L; the threshold waits for twice that growth, so
// that a collection forced while a policy's data is still growing likely
// finds it past the limit and stops it, instead of finding garbage and
// running again a moment later (each costs about a second near 1 GiB).
// Objects then peak near 2*limit - L: least over the limit when a policy's
// data fills the heap.
func (w *heapWatch) next(s heapSample, now time.Time) heapAction {
	if s.cycles != w.lastCycles {
		w.lastCycles, w.lastGC = s.cycles, now
		if s.live <= w.limit {
			w.threshold = 2*w.limit - s.live
		}
	}
	switch {
	case s.cycles != w.startCycles && s.live > w.limit:
		return heapCancel
	case s.objects <= w.threshold:
		return heapWait
	case !w.lastGC.IsZero() && now.Sub(w.lastGC) < w.interval:
		return heapWait
	}
	return heapCollect
}

// collected takes the sample read right after a forced collection. If the
// collection found the heap under the limit, garbage had pushed objects
// over it: the next forced collection waits twice as long (up to
// maxForcedGC), so a policy that churns garbage near the limit costs a
// bounded share of collections.
func (w *heapWatch) collected(s heapSample, now time.Time) heapAction {
	a := w.next(s, now)
	if a != heapCancel {
		w.interval = min(2*w.interval, maxForcedGC)
	}
	return a
}

// watchHeap cancels c once a collection during the evaluation finds more
// live heap than g's limit, until stop is closed; fired says whether it
// did.
func watchHeap(g *heapGuard, c topdown.Cancel, stop <-chan struct{}, fired *atomic.Bool) {
	buf := make([]metrics.Sample, len(heapMetrics))
	for i, n := range heapMetrics {
		buf[i].Name = n
	}
	w := newHeapWatch(g.limit, readHeap(buf))
	t := time.NewTicker(heapTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		a := w.next(readHeap(buf), time.Now())
		if a == heapCollect && g.gc.TryLock() {
			// Another watchdog's collection in flight answers for this
			// one too: its cycle shows at the next tick.
			runtime.GC()
			g.gc.Unlock()
			a = w.collected(readHeap(buf), time.Now())
		}
		if a == heapCancel {
			fired.Store(true)
			c.Cancel()
			return
		}
	}
}

// formatBytes names a limit the way a user would write it.
func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatUint(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatUint(n>>20, 10) + " MiB"
	}
	return strconv.FormatUint(n, 10) + " bytes"
}
