// Command machinescale measures how well this machine runs two goroutines
// at once, for work that only computes and for work that allocates
// (small objects, as parsing and rule evaluation do), so that the
// two-worker speed-up bench/compare.sh reports can be read against what
// the machine allows. It prints the median of -runs runs of each.
//
//	go run ./bench/machinescale
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
)

type node struct {
	l, r *node
	v    int
}

func build(d int) *node {
	if d == 0 {
		return &node{v: 1}
	}
	return &node{build(d - 1), build(d - 1), d}
}

func (n *node) sum() int {
	if n.l == nil {
		return n.v
	}
	return n.v + n.l.sum() + n.r.sum()
}

// run does the same total work with w goroutines and returns how long it
// took.
func run(w int, alloc bool) time.Duration {
	const total = 64
	start := time.Now()
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for range total / w {
				if alloc {
					_ = build(14).sum()
				} else {
					for range 4 {
						sha256.Sum256(buf)
					}
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func median(w int, alloc bool, runs int) time.Duration {
	prev := runtime.GOMAXPROCS(w)
	defer runtime.GOMAXPROCS(prev)
	ds := make([]time.Duration, runs)
	for i := range ds {
		ds[i] = run(w, alloc)
	}
	slices.Sort(ds)
	return ds[runs/2]
}

func main() {
	runs := flag.Int("runs", 7, "runs of each case (median)")
	flag.Parse()
	for _, c := range []struct {
		name  string
		alloc bool
	}{{"compute only (sha256)", false}, {"allocating (binary trees)", true}} {
		one, two := median(1, c.alloc, *runs), median(2, c.alloc, *runs)
		fmt.Printf("%-26s 1 goroutine %8.1f ms  2 goroutines %8.1f ms  speed-up %.2f\n",
			c.name, one.Seconds()*1000, two.Seconds()*1000, one.Seconds()/two.Seconds())
	}
}
