package hooks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
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

const msgServerBusy = "Server busy: try again"

// memBudget is a weighted semaphore of bytes: the memory that every
// deploy and blob upload together may hold (--deploy-memory).
//
// Bytes given back are not free memory yet: they are garbage until the
// garbage collector runs, which the runtime paces on the heap's growth,
// so fresh reservations would add to them and the process hold up to
// twice the budget. So given-back bytes count as held (garbage) until a
// collection: a reservation that does not fit with them first runs one
// (debug.FreeOSMemory, one at a time), which frees them.
type memBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
	// garbage is what was given back since the last collection.
	garbage int64
	// collecting serializes the collections take runs.
	collecting sync.Mutex
	// freed is closed (and replaced) whenever bytes are given back, to
	// wake the requests waiting for them.
	freed chan struct{}
}

func newMemBudget(max int64) *memBudget {
	return &memBudget{max: max, freed: make(chan struct{})}
}

// take reserves n bytes, waiting at most wait for others to give bytes
// back; false when they could not be had (or ctx ended).
func (b *memBudget) take(ctx context.Context, n int64, wait time.Duration) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+b.garbage+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return true
		}
		freed, garbage := b.freed, b.garbage
		b.mu.Unlock()
		if n > b.max {
			return false // never fits
		}
		if garbage > 0 && b.used+n <= b.max {
			b.collect()
			continue
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// collect runs the garbage collector, which frees what was given back
// before it started, unless another collection did meanwhile.
func (b *memBudget) collect() {
	b.collecting.Lock()
	defer b.collecting.Unlock()
	b.mu.Lock()
	freed := b.garbage
	b.mu.Unlock()
	if freed == 0 {
		return // another collection freed it
	}
	// a collection that also returns the freed pages to the system: the
	// next reservations' allocations may not fit the holes the freed
	// pieces leave, and would add to them
	debug.FreeOSMemory()
	b.mu.Lock()
	b.garbage -= freed // what was given back during the collection stays
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
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse is the number of bytes reserved now.
func (b *memBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// memLease is what one request holds of the memory budget: it grows as
// bytes arrive and is given back whole when the request ends. It may grow
// from several goroutines (an MCP request's tool and its answer).
type memLease struct {
	budget *memBudget
	e      *core.RequestEvent
	wait   time.Duration
	mu     sync.Mutex // guards held
	held   int64
}

// memoryLease starts the lease of a deploy or upload; release it when
// the request ends (defer), whatever the outcome.
func (sd *sitedrop) memoryLease(e *core.RequestEvent) *memLease {
	return &memLease{budget: sd.memory, e: e, wait: sd.memoryWait}
}

// reserve adds n bytes to the lease, or answers 503 (with Retry-After)
// when the budget stays exhausted. A nil lease reserves nothing (a body
// read and dropped).
func (l *memLease) reserve(n int64) error {
	if l.grow(n) {
		return nil
	}
	if l.e.Request.Context().Err() != nil {
		return fail(statusClientClosed, msgClientClosed) // nobody to answer
	}
	l.e.Response.Header().Set("Retry-After", strconv.Itoa(memoryRetryAfter))
	return fail(http.StatusServiceUnavailable, msgServerBusy)
}

// grow adds n bytes to the lease, waiting for the budget as reserve does;
// false when they could not be had (or the request ended). A nil lease
// grows without limit.
func (l *memLease) grow(n int64) bool {
	if l == nil || n <= 0 {
		return true
	}
	if !l.budget.take(l.e.Request.Context(), n, l.wait) {
		return false
	}
	l.mu.Lock()
	l.held += n
	l.mu.Unlock()
	return true
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
func (sd *sitedrop) guardBody(e *core.RequestEvent, limit int64, lease *memLease) (*guardedBody, error) {
	if e.Request.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	return &guardedBody{
		r:         http.MaxBytesReader(e.Response, unwrapBody(e.Request.Body), limit),
		rc:        http.NewResponseController(e.Response),
		lease:     lease,
		limit:     limit,
		start:     time.Now(),
		grace:     sd.bodyGrace,
		minRate:   sd.bodyMinRate,
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
		memoryWait:      memoryWait,
		bodyGrace:       bodyGrace,
		bodyMinRate:     bodyMinRate,
		anonStorage:     newLimiter(int(min(cfg.AnonStoragePerIP, 1<<62)), cfg.AnonTTL),
		keyedDeployWork: keyedDeployWork,
		anonDeployWork:  anonDeployWork,
	}
}
