package intake

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"sitedrop/sites"
)

// Collections that a reservation runs (see Budget): no sooner than
// collectSpacing after the last one, unless a collectShare of the budget
// has been given back since it.
const (
	collectSpacing = time.Second
	collectShare   = 4 // a quarter
)

// Budget is a weighted semaphore of bytes: the memory that every
// deploy and blob upload together may hold (--deploy-memory), or the small
// bodies' pool.
//
// Bytes given back are not free memory yet: they are garbage until the
// garbage collector runs, which the runtime paces on the heap's growth,
// so fresh reservations would add to them and the process hold up to
// twice the budget. So given-back bytes count as held (garbage) until a
// collection. A reservation that does not fit with them runs one,
// bounded: at most one per reservation, none for a request that has
// ended, and one no sooner than collectSpacing after the last unless a
// 1/collectShare of the budget has been given back since (so forced
// collections cost at most one per that many bytes deployed, like the
// runtime's own pacing, or one a second); otherwise the reservation
// waits, within its time, for bytes or for the next collection.
//
// The collection also returns the freed pages to the system
// (debug.FreeOSMemory, not runtime.GC alone): the next reservations'
// allocations (a 16 MiB file, say) may not fit the holes the freed pieces
// leave, and would add to them. Measured with TestArchiveDeployPeakMemory
// (--deploy-memory 64 MiB): 66-76 MiB at the peak with it, 69-87 MiB with
// runtime.GC alone. Bounded as it is, its cost (returning and faulting
// back the free pages) is small next to the deploys' own.
type Budget struct {
	mu   sync.Mutex
	max  int64
	used int64
	// garbage is what was given back since the last collection.
	garbage int64
	// lastCollect is when the last collection started.
	lastCollect time.Time
	// collecting serializes the collections Take runs.
	collecting sync.Mutex
	// freed is closed (and replaced) whenever bytes are given back or
	// collected, to wake the requests waiting for them.
	freed chan struct{}
	// gc collects the garbage: debug.FreeOSMemory.
	gc func()
}

// NewBudget is a budget of max bytes.
func NewBudget(max int64) *Budget {
	return &Budget{max: max, freed: make(chan struct{}), gc: debug.FreeOSMemory}
}

// Take reserves n bytes, waiting at most wait for others to give bytes
// back (or for a collection to free them); false when they could not be
// had (or ctx ended). See Budget for the collections it runs.
func (b *Budget) Take(ctx context.Context, n int64, wait time.Duration) bool {
	if n > b.max {
		return false // never fits
	}
	collected := false
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+b.garbage+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return true
		}
		freed := b.freed
		// a collection would make room: now, or when it is due
		collectIn := time.Duration(-1)
		if !collected && b.used+n <= b.max {
			collectIn = b.collectDueLocked(time.Now())
		}
		b.mu.Unlock()
		if ctx.Err() != nil {
			return false
		}
		if collectIn == 0 {
			collected = true
			b.collect()
			continue
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		var due <-chan time.Time
		var dueTimer *time.Timer
		if collectIn > 0 {
			dueTimer = time.NewTimer(collectIn)
			due = dueTimer.C
		}
		select {
		case <-freed:
		case <-due:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
		if dueTimer != nil {
			dueTimer.Stop()
		}
	}
}

// collectDueLocked is how long until a collection may run (0: now); b.mu
// is held.
func (b *Budget) collectDueLocked(now time.Time) time.Duration {
	if b.garbage*collectShare >= b.max {
		return 0
	}
	return max(0, b.lastCollect.Add(collectSpacing).Sub(now))
}

// collect runs the garbage collector, which frees what was given back
// before it started, unless another collection did meanwhile (or ran too
// recently: see collectDueLocked).
func (b *Budget) collect() {
	b.collecting.Lock()
	defer b.collecting.Unlock()
	b.mu.Lock()
	freed := b.garbage
	if freed == 0 || b.collectDueLocked(time.Now()) > 0 {
		b.mu.Unlock()
		return // another collection freed it, or has just run
	}
	b.lastCollect = time.Now()
	b.mu.Unlock()
	b.gc()
	b.mu.Lock()
	b.garbage -= freed // what was given back during the collection stays
	b.wakeLocked()
	b.mu.Unlock()
}

// Give returns n bytes to the budget (as garbage, until a collection).
func (b *Budget) Give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.garbage += n
	b.wakeLocked()
	b.mu.Unlock()
}

// unreserve returns n bytes that were reserved and never allocated: free
// at once, no garbage.
func (b *Budget) unreserve(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.wakeLocked()
	b.mu.Unlock()
}

// tryTake reserves n bytes if they are free now, without a collection or
// a wait.
func (b *Budget) tryTake(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+b.garbage+n > b.max {
		return false
	}
	b.used += n
	return true
}

// wakeLocked wakes the requests waiting for bytes; b.mu is held.
func (b *Budget) wakeLocked() {
	close(b.freed)
	b.freed = make(chan struct{})
}

// InUse is the number of bytes reserved now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Lease is what one request holds of a memory budget: it grows as
// bytes arrive and is given back whole when the request ends. It may grow
// from several goroutines (an MCP request's tool and its answer, a
// deploy's compression workers), so it never touches the response: a
// refusal is an error (with its Retry-After) that the request's own
// goroutine answers.
type Lease struct {
	budget *Budget
	ctx    context.Context // the request's
	wait   time.Duration
	mu     sync.Mutex // guards held
	held   int64
}

// Reserve adds n bytes to the lease, or returns ErrBusy for a budget
// that stays exhausted (the request's context error when it ended). A nil lease reserves
// nothing (a body read and dropped).
func (l *Lease) Reserve(n int64) error {
	if l.grow(n) {
		return nil
	}
	if err := l.ctx.Err(); err != nil {
		return fmt.Errorf("waiting for memory: %w", err) // nobody to answer
	}
	return ErrBusy
}

// grow adds n bytes to the lease, waiting for the budget as Reserve does;
// false when they could not be had (or the request ended). A nil lease
// grows without limit.
func (l *Lease) grow(n int64) bool {
	if l == nil || n <= 0 {
		return true
	}
	if !l.budget.Take(l.ctx, n, l.wait) {
		return false
	}
	l.add(n)
	return true
}

func (l *Lease) add(n int64) {
	l.mu.Lock()
	l.held += n
	l.mu.Unlock()
}

// TryReserve adds n bytes to the lease if the budget has them now,
// without waiting (sites.Memory).
func (l *Lease) TryReserve(n int64) bool {
	if l == nil || n <= 0 {
		return true
	}
	if !l.budget.tryTake(n) {
		return false
	}
	l.add(n)
	return true
}

// Release gives back n bytes of the lease before the request ends
// (sites.Memory): allocated ones become garbage until a collection, ones
// never allocated are free at once.
func (l *Lease) Release(n int64, allocated bool) {
	if l == nil || n <= 0 {
		return
	}
	l.mu.Lock()
	n = min(n, l.held)
	l.held -= n
	l.mu.Unlock()
	if allocated {
		l.budget.Give(n)
	} else {
		l.budget.unreserve(n)
	}
}

// End gives back everything the lease holds: the request is over.
func (l *Lease) End() {
	l.mu.Lock()
	held := l.held
	l.held = 0
	l.mu.Unlock()
	l.budget.Give(held)
}

// Max is the budget's size in bytes.
func (b *Budget) Max() int64 { return b.max }

// NewLease starts a lease on b for a request whose context is ctx: it
// waits at most wait for bytes. End it when the request ends (defer),
// whatever the outcome.
func (b *Budget) NewLease(ctx context.Context, wait time.Duration) *Lease {
	return &Lease{budget: b, ctx: ctx, wait: wait}
}

// HoldPastBudget adds n bytes to the lease at once, past the budget's
// maximum if need be, never waiting nor failing: for memory already
// allocated for an action that happened (an MCP answer), which refusing
// would not free. The budget counts it until the lease ends, so that
// other requests wait for it.
func (l *Lease) HoldPastBudget(n int64) {
	b := l.budget
	b.mu.Lock()
	b.used += n
	b.mu.Unlock()
	l.add(n)
}

var _ sites.Memory = (*Lease)(nil)
