package intake

import (
	"context"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// TestBudgetConcurrent: reservations and returns from many goroutines
// at once (run it with -race) leave the budget as it was.
func TestBudgetConcurrent(t *testing.T) {
	b := NewBudget(64 << 10)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range 200 {
				n := int64(1+i%7) << 10
				if b.Take(t.Context(), n, 50*time.Millisecond) {
					b.Give(n)
				}
			}
		})
	}
	wg.Wait()
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d bytes still reserved", n)
	}
}

// forcedCollections is how many collections the process forced so far
// (runtime.GC, debug.FreeOSMemory).
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestBudgetCollections: bytes given back count until a collection
// frees them, and a reservation they block runs one, but collections on
// the request path are bounded: at most one per reservation, none for a
// request that has ended, and no sooner than a second after the last
// unless a quarter of the budget has been given back since.
func TestBudgetCollections(t *testing.T) {
	const max = 1 << 20
	b := NewBudget(max)
	ctx := t.Context()
	forced := forcedCollections()
	collections := func() uint64 { return forcedCollections() - forced }

	if !b.Take(ctx, 900<<10, 0) {
		t.Fatal("first reservation")
	}
	b.Give(100 << 10) // garbage until a collection
	if !b.Take(ctx, 200<<10, 0) {
		t.Fatal("a reservation that fits once the garbage is collected was refused")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections, want 1", n)
	}

	// a little garbage, right after a collection: none, wait instead
	b.Give(100 << 10)
	if b.Take(ctx, 100<<10, 0) {
		t.Fatal("a reservation blocked by fresh garbage did not wait for the next collection")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections: a second one within a second of the first", n)
	}
	// a request that has ended collects nothing
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if b.Take(gone, 100<<10, time.Second) {
		t.Fatal("a reservation of an ended request")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections: one for an ended request", n)
	}
	// waiting: the next collection is due within the wait
	if !b.Take(ctx, 100<<10, 3*time.Second) {
		t.Fatal("a reservation that waited for the next collection was refused")
	}
	if n := collections(); n != 2 {
		t.Fatalf("%d collections, want 2", n)
	}

	// a quarter of the budget given back: collected at once
	b.Give(300 << 10)
	if !b.Take(ctx, 300<<10, 0) {
		t.Fatal("a reservation blocked by a quarter of the budget in garbage was refused")
	}
	if n := collections(); n != 3 {
		t.Fatalf("%d collections, want 3", n)
	}
}
