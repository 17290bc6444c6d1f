package check

import (
	"testing"
	"time"
)

// TestHeapWatch drives the watchdog's decisions with made-up samples: it
// forces a collection at once when objects first pass the limit, cancels
// only on live bytes from a collection during the evaluation, forces
// again only after objects grew twice what the last collection left under
// the limit, at most once per interval, and backs off when collections
// find garbage rather than live data.
func TestHeapWatch(t *testing.T) {
	const limit = 100
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type step struct {
		at        time.Duration
		s         heapSample
		collected bool // the sample read right after a forced collection
		want      heapAction
	}
	tests := []struct {
		name  string
		start heapSample
		steps []step
	}{
		{"under the limit", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 100, live: 10, cycles: 3}, false, heapWait},
		}},
		{"runaway: one collection, then cancel", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 101, live: 10, cycles: 3}, false, heapCollect},
			{ms(3), heapSample{objects: 150, live: 140, cycles: 4}, true, heapCancel},
		}},
		{"live from before the evaluation does not cancel", heapSample{objects: 150, live: 140, cycles: 3}, []step{
			{ms(2), heapSample{objects: 150, live: 140, cycles: 3}, false, heapCollect},
			{ms(3), heapSample{objects: 20, live: 20, cycles: 4}, true, heapWait},
		}},
		{"the runtime's own collection cancels", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 90, live: 120, cycles: 4}, false, heapCancel},
		}},
		{"garbage: one collection per interval, backing off", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 120, live: 10, cycles: 3}, false, heapCollect},
			{ms(3), heapSample{objects: 60, live: 60, cycles: 4}, true, heapWait}, // threshold 140, interval 200 ms
			{ms(50), heapSample{objects: 130, live: 60, cycles: 4}, false, heapWait},
			{ms(150), heapSample{objects: 150, live: 60, cycles: 4}, false, heapWait},
			{ms(203), heapSample{objects: 150, live: 60, cycles: 4}, false, heapCollect},
			{ms(205), heapSample{objects: 70, live: 70, cycles: 5}, true, heapWait}, // threshold 130, interval 400 ms
			{ms(500), heapSample{objects: 140, live: 70, cycles: 5}, false, heapWait},
			{ms(605), heapSample{objects: 140, live: 70, cycles: 5}, false, heapCollect},
		}},
		{"after a collection, objects must grow twice what the limit leaves", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 90, live: 80, cycles: 4}, false, heapWait}, // threshold 120
			{ms(200), heapSample{objects: 120, live: 80, cycles: 4}, false, heapWait},
			{ms(201), heapSample{objects: 121, live: 80, cycles: 4}, false, heapCollect},
		}},
		{"a recent collection by the runtime defers a forced one", heapSample{objects: 10, live: 10, cycles: 3}, []step{
			{ms(2), heapSample{objects: 50, live: 40, cycles: 4}, false, heapWait}, // threshold 160
			{ms(60), heapSample{objects: 170, live: 40, cycles: 4}, false, heapWait},
			{ms(102), heapSample{objects: 170, live: 40, cycles: 4}, false, heapCollect},
		}},
		{"backoff stops at the cap", heapSample{objects: 10, live: 10, cycles: 0}, []step{
			{ms(0), heapSample{objects: 10, live: 10, cycles: 1}, true, heapWait},
			{ms(1), heapSample{objects: 10, live: 10, cycles: 2}, true, heapWait},
			{ms(2), heapSample{objects: 10, live: 10, cycles: 3}, true, heapWait},
			{ms(3), heapSample{objects: 10, live: 10, cycles: 4}, true, heapWait},
			{ms(4), heapSample{objects: 10, live: 10, cycles: 5}, true, heapWait},
			{ms(5), heapSample{objects: 10, live: 10, cycles: 6}, true, heapWait},
			{ms(5) + maxForcedGC - 1, heapSample{objects: 200, live: 10, cycles: 6}, false, heapWait},
			{ms(5) + maxForcedGC, heapSample{objects: 200, live: 10, cycles: 6}, false, heapCollect},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			w := newHeapWatch(limit, tc.start)
			for i, st := range tc.steps {
				var got heapAction
				if st.collected {
					got = w.collected(st.s, t0.Add(st.at))
				} else {
					got = w.next(st.s, t0.Add(st.at))
				}
				if got != st.want {
					t.Fatalf("step %d at %s (%+v): got action %d, want %d", i, st.at, st.s, got, st.want)
				}
			}
		})
	}
}

// TestFormatBytes: the limit reads as it would be written.
func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{1 << 30, "1 GiB"}, {3 << 30, "3 GiB"}, {128 << 20, "128 MiB"}, {1536 << 20, "1536 MiB"}, {1000, "1000 bytes"},
	} {
		if got := formatBytes(tc.n); got != tc.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
