package intake

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"sitedrop/sites/ratelimit"
)

// How deploy and upload bodies must arrive: after BodyGrace, at least
// BodyMinRate bytes a second on average since the body began; slower
// bodies are refused (a *TooSlowError: a client trickling a byte at a
// time would otherwise hold its memory and connection for as long as it
// likes).
const (
	BodyGrace   = 10 * time.Second
	BodyMinRate = 16 << 10 // bytes a second: 128 kbit/s
	// answerWithin is how long the answer may take to write once the
	// body has come, as PocketBase's own WriteTimeout (which counts from
	// the request's start) would allow a quick body.
	answerWithin = 5 * time.Minute
)

// MemoryWait is how long a request waits for other deploys to release
// memory of the --deploy-memory budget before it is refused (ErrBusy).
const MemoryWait = 3 * time.Second

// Small bodies (JSON of the API, page forms, form submissions: a limit of
// at most SmallBodyMax) take their memory from a pool of their own,
// SmallBodyMemory, rather than --deploy-memory: deploys that fill it
// cannot make sign-in, forms or submissions busy. They keep the rate and
// grace rules, so a slow client holds its bytes for BodyGrace plus
// SmallBodyMax/BodyMinRate (14 s) at most.
const (
	SmallBodyMax    = 64 << 10
	SmallBodyMemory = 16 << 20
)

// Guards bound how request bodies are read (a minimum rate after a
// grace, within a limit) and the memory they and what is made of them
// hold. One is shared by every route that reads a body.
type Guards struct {
	// Memory is the --deploy-memory budget shared by deploys and uploads.
	Memory *Budget
	// SmallMemory is the small bodies' pool (SmallBodyMemory; see
	// BodyLease).
	SmallMemory *Budget
	// MemoryWait is how long a request waits for its budget (MemoryWait;
	// tests shorten it).
	MemoryWait time.Duration
	// BodyGrace and BodyMinRate are how bodies must arrive (tests change
	// them).
	BodyGrace   time.Duration
	BodyMinRate int64
	// AnonStorage bounds the bytes anonymous deploys from one client
	// store in an --anon-ttl window (--anon-storage-per-ip).
	AnonStorage *ratelimit.Limiter
	// KeyedWork and AnonWork are the work budgets of one deploy (see
	// StartWork; tests shorten them).
	KeyedWork, AnonWork time.Duration
	// Unwrap returns a request body's original stream, when the router
	// keeps a copy of every body for re-reads that bodies read once do
	// not need (nil: the body as it is).
	Unwrap func(io.ReadCloser) io.ReadCloser
}

// NewGuards are the guards of a --deploy-memory of deployMemory bytes
// and an --anon-storage-per-ip of anonStorage bytes in each anonTTL,
// with the default rate, grace, wait and work budgets.
func NewGuards(deployMemory, anonStorage int64, anonTTL time.Duration) *Guards {
	return &Guards{
		AnonStorage: ratelimit.New(int(min(anonStorage, 1<<62)), anonTTL),
		KeyedWork:   KeyedDeployWork,
		AnonWork:    AnonDeployWork,
		Memory:      NewBudget(deployMemory),
		SmallMemory: NewBudget(SmallBodyMemory),
		MemoryWait:  MemoryWait,
		BodyGrace:   BodyGrace,
		BodyMinRate: BodyMinRate,
	}
}

// MemoryLease starts the lease of a deploy or upload (whose request's
// context is ctx) on --deploy-memory; End it when the request ends.
func (g *Guards) MemoryLease(ctx context.Context) *Lease {
	return g.Memory.NewLease(ctx, g.MemoryWait)
}

// BodyLease starts the lease of a body of at most limit bytes: a small
// one (SmallBodyMax or less) on the small bodies' pool, any other on
// --deploy-memory. End it when the request ends.
func (g *Guards) BodyLease(ctx context.Context, limit int64) *Lease {
	if limit <= SmallBodyMax {
		return g.SmallMemory.NewLease(ctx, g.MemoryWait)
	}
	return g.MemoryLease(ctx)
}

// Body reads a request body within a byte limit (*TooLargeError past it)
// and a minimum rate (*TooSlowError below it), reserving each byte read
// from a memory lease (none when lease is nil).
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
type Body struct {
	r       io.Reader
	rc      *http.ResponseController
	lease   *Lease
	limit   int64
	start   time.Time
	grace   time.Duration
	minRate int64
	// Got is the number of bytes read so far.
	Got int64
	// deadlines is false where the connection cannot take read
	// deadlines (a test recorder).
	deadlines bool
}

// Body wraps r's body, answered on w; see Body. A body whose
// Content-Length is over limit is refused before any of it is read.
func (g *Guards) Body(w http.ResponseWriter, r *http.Request, limit int64, lease *Lease) (*Body, error) {
	if r.ContentLength > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	body := r.Body
	if g.Unwrap != nil {
		body = g.Unwrap(body)
	}
	return &Body{
		r:         http.MaxBytesReader(w, body, limit),
		rc:        http.NewResponseController(w),
		lease:     lease,
		limit:     limit,
		start:     time.Now(),
		grace:     g.BodyGrace,
		minRate:   g.BodyMinRate,
		deadlines: true,
	}, nil
}

// Read reads on, after setting the time by which the next bytes must
// arrive: start + grace + Got/minRate.
func (b *Body) Read(p []byte) (int, error) {
	if b.deadlines {
		due := b.start.Add(b.grace + time.Duration(float64(b.Got)/float64(b.minRate)*float64(time.Second)))
		if err := b.rc.SetReadDeadline(due); err != nil {
			b.deadlines = false // not supported: no rate is enforced
		} else {
			_ = b.rc.SetWriteDeadline(due.Add(answerWithin))
		}
	}
	n, err := b.r.Read(p)
	b.Got += int64(n)
	if rerr := b.lease.Reserve(int64(n)); rerr != nil {
		return 0, rerr
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		if b.deadlines {
			_ = b.rc.SetReadDeadline(time.Time{})
			_ = b.rc.SetWriteDeadline(time.Now().Add(answerWithin))
		}
	case errors.As(err, &mbe):
		return n, &TooLargeError{Limit: b.limit}
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return n, &TooSlowError{Grace: b.grace, MinRate: b.minRate}
	default:
		return n, invalid("reading the body: %s", err.Error())
	}
	return n, err
}

// ReadAll reads the whole body.
func (b *Body) ReadAll() ([]byte, error) {
	return io.ReadAll(b)
}

// BodyRefusal tells an error of a Body's reads that answers the request
// as it is: a refusal of the body (too large, too slow, the memory
// budget, unreadable) or a client that went away.
func BodyRefusal(err error) bool {
	return Refusal(err) || errors.Is(err, context.Canceled)
}

// ReadJSON decodes r's body, at most limit bytes, into dst. The body is
// read as deploy bodies are (Body: the minimum rate after the grace, each
// byte held of a memory budget as it comes, until it is decoded: the
// small bodies' pool for a limit of SmallBodyMax or less, see BodyLease).
// Every failure is a refusal naming what is wrong: *TooLargeError past
// the limit, *TooSlowError, ErrBusy with the budget spent, an
// *InvalidError for malformed JSON, a wrong field type or trailing data.
func (g *Guards) ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	lease := g.BodyLease(r.Context(), limit)
	defer lease.End()
	body, err := g.Body(w, r, limit, lease)
	if err != nil {
		return err
	}
	return DecodeJSON(body, limit, dst)
}

// Discard deals with an HTTP/1 request body of at most limit bytes that
// is refused before it was read. Left unread, net/http would read up to
// 256 KiB of it and close the connection under a client still sending
// the rest, which then sees a reset instead of the answer: so it is read
// and dropped. A client that asked to wait (Expect: 100-continue) has
// sent nothing yet: the error answer closes the connection, and it sends
// nothing. It is read at the minimum rate of bodies, and holds no memory.
func (g *Guards) Discard(w http.ResponseWriter, r *http.Request, limit int64) {
	if WaitsToSendBody(r) || r.ProtoMajor != 1 {
		return // HTTP/2 resets the stream alone
	}
	if body, err := g.Body(w, r, limit, nil); err == nil { // nil: over the limit, not read
		_, _ = io.Copy(io.Discard, body)
	}
}

// WaitsToSendBody tells an HTTP/1 request whose client waits for
// "100 Continue" before it sends its body (the CLI's uploads).
func WaitsToSendBody(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ContentLength != 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// RefuseWaitingBody answers status with the JSON body to a client that
// has not sent its request's body (WaitsToSendBody), at once and closing
// the connection, so that it sends nothing. net/http does that itself
// when it sees such a request unread, but PocketBase's router hides the
// body it recognises them by; and the router's deferred close of the body
// would wait for up to 256 KiB of it (which the client only sends after
// its own timeout) before the answer left. So the answer has its length
// and is flushed here.
func RefuseWaitingBody(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}
