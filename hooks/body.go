package hooks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// How deploy and upload bodies must arrive: after bodyGrace, at least
// bodyMinRate bytes a second on average since the body began; slower
// bodies are refused with 408 (a client trickling a byte at a time would
// otherwise hold its memory and connection for as long as it likes).
const (
	bodyGrace   = 10 * time.Second
	bodyMinRate = 16 << 10 // bytes a second: 128 kbit/s
	// answerWithin is how long the answer may take to write once the
	// body has come, as PocketBase's own WriteTimeout (which counts from
	// the request's start) would allow a quick body.
	answerWithin = 5 * time.Minute
)

// Waiting for the --deploy-memory budget: how long a request waits for
// other deploys to release memory before it is refused with 503, and the
// Retry-After it is then given.
const (
	memoryWait       = 3 * time.Second
	memoryRetryAfter = 5 // seconds
)

// Small bodies (JSON of the API, page forms, form submissions: a limit of
// at most smallBodyMax) take their memory from a pool of their own,
// smallBodyMemory, rather than --deploy-memory: deploys that fill it
// cannot make sign-in, forms or submissions 503. They keep the rate and
// grace rules, so a slow client holds its bytes for bodyGrace plus
// smallBodyMax/bodyMinRate (14 s) at most.
const (
	smallBodyMax    = 64 << 10
	smallBodyMemory = 16 << 20
)

// Collections that a reservation runs (see memBudget): no sooner than
// collectSpacing after the last one, unless a collectShare of the budget
// has been given back since it.
const (
	collectSpacing = time.Second
	collectShare   = 4 // a quarter
)

const msgServerBusy = "Server busy: try again"

// memBudget is a weighted semaphore of bytes: the memory that every
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
type memBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
	// garbage is what was given back since the last collection.
	garbage int64
	// lastCollect is when the last collection started.
	lastCollect time.Time
	// collecting serializes the collections take runs.
	collecting sync.Mutex
	// freed is closed (and replaced) whenever bytes are given back or
	// collected, to wake the requests waiting for them.
	freed chan struct{}
	// gc collects the garbage: debug.FreeOSMemory.
	gc func()
}

func newMemBudget(max int64) *memBudget {
	return &memBudget{max: max, freed: make(chan struct{}), gc: debug.FreeOSMemory}
}

// take reserves n bytes, waiting at most wait for others to give bytes
// back (or for a collection to free them); false when they could not be
// had (or ctx ended). See memBudget for the collections it runs.
func (b *memBudget) take(ctx context.Context, n int64, wait time.Duration) bool {
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
func (b *memBudget) collectDueLocked(now time.Time) time.Duration {
	if b.garbage*collectShare >= b.max {
		return 0
	}
	return max(0, b.lastCollect.Add(collectSpacing).Sub(now))
}

// collect runs the garbage collector, which frees what was given back
// before it started, unless another collection did meanwhile (or ran too
// recently: see collectDueLocked).
func (b *memBudget) collect() {
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

// give returns n bytes to the budget (as garbage, until a collection).
func (b *memBudget) give(n int64) {
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
func (b *memBudget) unreserve(n int64) {
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
func (b *memBudget) tryTake(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+b.garbage+n > b.max {
		return false
	}
	b.used += n
	return true
}

// wakeLocked wakes the requests waiting for bytes; b.mu is held.
func (b *memBudget) wakeLocked() {
	close(b.freed)
	b.freed = make(chan struct{})
}

// inUse is the number of bytes reserved now.
func (b *memBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// memLease is what one request holds of a memory budget: it grows as
// bytes arrive and is given back whole when the request ends. It may grow
// from several goroutines (an MCP request's tool and its answer, a
// deploy's compression workers), so it never touches the response: a
// refusal is an error (with its Retry-After) that the request's own
// goroutine answers.
type memLease struct {
	budget *memBudget
	ctx    context.Context // the request's
	wait   time.Duration
	mu     sync.Mutex // guards held
	held   int64
}

// memoryLease starts the lease of a deploy or upload on --deploy-memory;
// release it when the request ends (defer), whatever the outcome.
func (g *bodyGuards) memoryLease(e *core.RequestEvent) *memLease {
	return &memLease{budget: g.memory, ctx: e.Request.Context(), wait: g.memoryWait}
}

// bodyLease starts the lease of a body of at most limit bytes: a small
// one (smallBodyMax or less) on the small bodies' pool, any other on
// --deploy-memory. Release it when the request ends.
func (g *bodyGuards) bodyLease(e *core.RequestEvent, limit int64) *memLease {
	if limit <= smallBodyMax {
		return &memLease{budget: g.smallMemory, ctx: e.Request.Context(), wait: g.memoryWait}
	}
	return g.memoryLease(e)
}

// reserve adds n bytes to the lease, or returns the 503 (with its
// Retry-After) of a budget that stays exhausted. A nil lease reserves
// nothing (a body read and dropped).
func (l *memLease) reserve(n int64) error {
	if l.grow(n) {
		return nil
	}
	if l.ctx.Err() != nil {
		return fail(statusClientClosed, msgClientClosed) // nobody to answer
	}
	return errServerBusy()
}

// errServerBusy is the refusal of a memory budget that stays exhausted.
func errServerBusy() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Message: msgServerBusy, RetryAfter: memoryRetryAfter}
}

// grow adds n bytes to the lease, waiting for the budget as reserve does;
// false when they could not be had (or the request ended). A nil lease
// grows without limit.
func (l *memLease) grow(n int64) bool {
	if l == nil || n <= 0 {
		return true
	}
	if !l.budget.take(l.ctx, n, l.wait) {
		return false
	}
	l.add(n)
	return true
}

func (l *memLease) add(n int64) {
	l.mu.Lock()
	l.held += n
	l.mu.Unlock()
}

// Reserve is reserve, for sites.Memory: n bytes about to be allocated.
func (l *memLease) Reserve(n int64) error { return l.reserve(n) }

// TryReserve adds n bytes to the lease if the budget has them now,
// without waiting (sites.Memory).
func (l *memLease) TryReserve(n int64) bool {
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
func (l *memLease) Release(n int64, allocated bool) {
	if l == nil || n <= 0 {
		return
	}
	l.mu.Lock()
	n = min(n, l.held)
	l.held -= n
	l.mu.Unlock()
	if allocated {
		l.budget.give(n)
	} else {
		l.budget.unreserve(n)
	}
}

// release gives back everything the lease holds.
func (l *memLease) release() {
	l.mu.Lock()
	held := l.held
	l.held = 0
	l.mu.Unlock()
	l.budget.give(held)
}

// guardedBody reads a request body within a byte limit (413 past it) and a
// minimum rate (408 below it), reserving each byte read from a memory
// lease (none when lease is nil).
//
// The rate is kept with read deadlines on the connection. At the body's
// end the deadline is lifted, so that the connection's later reads
// (net/http watches for the client going away) are not cut. A body left
// unread keeps its last deadline, which bounds how long net/http drains
// it afterwards. The write deadline moves along with the read deadline
// (and is answerWithin past the body's end): the server's WriteTimeout
// counts from the request's start, so a long upload at a fair rate would
// otherwise be committed and then lose its answer (HTTP/1), or be cut
// (HTTP/2).
type guardedBody struct {
	r       io.Reader
	rc      *http.ResponseController
	lease   *memLease
	limit   int64
	start   time.Time
	grace   time.Duration
	minRate int64
	got     int64
	// deadlines is false where the connection cannot take read
	// deadlines (a test recorder).
	deadlines bool
}

// guardBody wraps e's body; see guardedBody. A body whose Content-Length
// is over limit is refused (413) before any of it is read.
func (g *bodyGuards) guardBody(e *core.RequestEvent, limit int64, lease *memLease) (*guardedBody, error) {
	if e.Request.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	return &guardedBody{
		r:         http.MaxBytesReader(e.Response, unwrapBody(e.Request.Body), limit),
		rc:        http.NewResponseController(e.Response),
		lease:     lease,
		limit:     limit,
		start:     time.Now(),
		grace:     g.bodyGrace,
		minRate:   g.bodyMinRate,
		deadlines: true,
	}, nil
}

// Read reads on, after setting the time by which the next bytes must
// arrive: start + grace + got/minRate.
func (g *guardedBody) Read(p []byte) (int, error) {
	if g.deadlines {
		due := g.start.Add(g.grace + time.Duration(float64(g.got)/float64(g.minRate)*float64(time.Second)))
		if err := g.rc.SetReadDeadline(due); err != nil {
			g.deadlines = false // not supported: no rate is enforced
		} else {
			_ = g.rc.SetWriteDeadline(due.Add(answerWithin))
		}
	}
	n, err := g.r.Read(p)
	g.got += int64(n)
	if rerr := g.lease.reserve(int64(n)); rerr != nil {
		return 0, rerr
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		if g.deadlines {
			_ = g.rc.SetReadDeadline(time.Time{})
			_ = g.rc.SetWriteDeadline(time.Now().Add(answerWithin))
		}
	case errors.As(err, &mbe):
		return n, tooLarge(g.limit)
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return n, fail(http.StatusRequestTimeout, "Request body too slow: after %s it must arrive at %s a second or more", g.grace, sites.FormatBytes(g.minRate))
	default:
		return n, fail(http.StatusBadRequest, "reading the body: %s", err.Error())
	}
	return n, err
}

// readAll reads the whole guarded body.
func (g *guardedBody) readAll() ([]byte, error) {
	return io.ReadAll(g)
}

// bodyGuards is the state that bounds how deploy and upload bodies are
// read and what they may store; part of sitedrop.
type bodyGuards struct {
	// memory is the --deploy-memory budget shared by deploys and uploads.
	memory *memBudget
	// smallMemory is the small bodies' pool (smallBodyMemory; see
	// bodyLease).
	smallMemory *memBudget
	// memoryWait is how long a request waits for the budget (memoryWait;
	// tests shorten it).
	memoryWait time.Duration
	// bodyGrace and bodyMinRate are how bodies must arrive (tests change
	// them).
	bodyGrace   time.Duration
	bodyMinRate int64
	// anonStorage bounds the bytes anonymous deploys from one client
	// store in an --anon-ttl window (--anon-storage-per-ip).
	anonStorage *limiter
	// keyedDeployWork and anonDeployWork are the work budgets of one
	// deploy (see deployWork; tests shorten them).
	keyedDeployWork, anonDeployWork time.Duration
}

func newBodyGuards(cfg *Config) bodyGuards {
	return bodyGuards{
		memory:          newMemBudget(cfg.DeployMemory),
		smallMemory:     newMemBudget(smallBodyMemory),
		memoryWait:      memoryWait,
		bodyGrace:       bodyGrace,
		bodyMinRate:     bodyMinRate,
		anonStorage:     newLimiter(int(min(cfg.AnonStoragePerIP, 1<<62)), cfg.AnonTTL),
		keyedDeployWork: keyedDeployWork,
		anonDeployWork:  anonDeployWork,
	}
}
