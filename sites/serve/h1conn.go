package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// HTTP1 is sitedrop's own HTTP/1.1 server for site hosts, a ConnServer
// (see NewHTTP1): per connection, one goroutine (the caller's) reads
// requests into a buffer, parses them strictly (see parseH1) and answers
// those to a site host itself, in order, pipelined ones included, with
// keep-alive; the first request it does not answer (another host, a
// method or a form it does not take, see parseH1) and all that follow go
// to net/http with the bytes already read put back (NewReplayConn).
//
// Two levels answer. The fast answer: a live, public site's file, GET or
// HEAD, 200 or 304 (If-None-Match), no Range, no rule adding anything
// for the path, a body under maxCachedFile: its head is appended from
// the file's prepared header values (appendHead), the Date line is
// cached per second, the body comes from the content cache, and all of it leaves in
// one write (writev for a larger body), with nothing allocated. The
// general path: any other site request, answered by the site handler
// (Options.Serve: ServeSite, as net/http's handler calls it) through a
// lean ResponseWriter (h1Writer) that writes what net/http would, byte
// for byte, in as few writes. The two give the same bytes
// (TestH1FastMatchesGeneral, TestH1MatchesNetHTTP).
//
// Timeouts are net/http's: HeaderTimeout for a request's head, from the
// connection's start or from the first byte of the next request;
// IdleTimeout between requests; WriteTimeout for an answer's writes.
// The request's context ends when the connection does.
type HTTP1 struct {
	o HTTP1Options
	// down is set by Shutdown: answers close their connection, idle
	// connections close.
	down atomic.Bool
	mu   sync.Mutex
	// conns are the connections being served.
	conns map[*h1conn]struct{}
}

// HTTP1Options configure NewHTTP1.
type HTTP1Options struct {
	// SiteLabel tells whether host is a site host, and its label (the
	// front door's sites.HostSplit.SiteLabel: the one place deciding).
	// Requests to any other host go to net/http.
	SiteLabel func(host string) (label string, isSiteHost bool)
	// Serve answers a site host's request on the general path: the
	// front door's site handler (panics recovered, metrics counted).
	Serve func(w http.ResponseWriter, r *http.Request, label string)
	// Sites, when set, gives the fast answers (see HTTP1); nil: every
	// request takes the general path.
	Sites *Server
	// Count, when set, counts each fast answer as the metrics count the
	// general path's (status, body bytes, time taken).
	Count func(status int, bytes int64, d time.Duration)
	// HeaderTimeout, IdleTimeout and WriteTimeout are the server's (see
	// the type's comment). Zero: 10 s, 1 min, 5 min.
	HeaderTimeout, IdleTimeout, WriteTimeout time.Duration
	// Logger receives the panics of the fast path; nil: slog.Default.
	Logger *slog.Logger
	// BaseContext is the parent of the connections' contexts; nil:
	// context.Background.
	BaseContext context.Context
}

// NewHTTP1 returns the HTTP/1.1 ConnServer of site hosts. The main
// listener runs it (ListenFront.HTTP1) on each plain connection, and on
// each TLS one whose client did not choose h2, in the connection's own
// goroutine, and hands a returned connection to net/http through its
// Accept; its Shutdown is the listener's ConnServerShutdown. The front
// door builds it (hooks/server's Front.HTTP1: SiteLabel, Serve, Sites,
// Count and the timeouts):
//
//	ln.Serve(serve.ListenFront{..., HTTP1: front.HTTP1(srv.ReadHeaderTimeout, srv.IdleTimeout)})
func NewHTTP1(o HTTP1Options) *HTTP1 {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BaseContext == nil {
		o.BaseContext = context.Background()
	}
	return &HTTP1{o: o, conns: map[*h1conn]struct{}{}}
}

// Shutdown has the server answer no more requests (see
// ConnServerShutdown): a connection closes after the answer it is
// writing (which says Connection: close), an idle one at once. It
// returns once every connection has ended, or with ctx's error.
func (s *HTTP1) Shutdown(ctx context.Context) error {
	s.down.Store(true)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		for cn := range s.conns {
			if cn.idle.Load() {
				_ = cn.c.SetReadDeadline(aLongTimeAgo) // wakes its Read
			}
		}
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// aLongTimeAgo is a deadline in the past: it ends a Read at once.
var aLongTimeAgo = time.Unix(1, 0)

// h1ReadBuffer is a connection's read buffer to begin with; a head that
// does not fit grows it up to h1MaxHead.
const h1ReadBuffer = 4 << 10

// h1OutMax is the most a connection's output gathers before it writes.
const h1OutMax = 32 << 10

// h1CopyMax is the largest body the fast path copies behind its head;
// a larger one goes in the same writev without a copy.
const h1CopyMax = 4 << 10

// tlsRecord is the most plaintext a TLS record carries.
const tlsRecord = 16 << 10

// outBuffers recycle the connections' output buffers: a connection holds
// one only while it answers.
var outBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// h1conn is a connection served by HTTP1.
type h1conn struct {
	s *HTTP1
	c net.Conn
	// buf holds what was read; the unparsed bytes are buf[start:end].
	buf        []byte
	start, end int
	h          h1Head

	// out gathers the answer's bytes; outp is its pooled buffer.
	out  []byte
	outp *[]byte
	werr error
	// rdl and wdl are the read and write deadlines set; headTimed: the
	// read deadline is the current head's HeaderTimeout.
	rdl, wdl  time.Time
	headTimed bool
	// idle: the connection waits for a request's first byte (Shutdown
	// closes it then).
	idle atomic.Bool
	// date is the Date value of the current second (see h1DateNow).
	date []byte

	ctx    context.Context
	cancel context.CancelFunc
	req    *http.Request
	url    url.URL
	w      h1Writer
	remote string
	tls    *tls.ConnectionState
	// The strings of the previous request, reused when the next one
	// sends the same bytes: a keep-alive connection asks the same host,
	// and mostly the same header values, again and again.
	host, label   string
	isSite        bool
	target        string
	values        map[string][]string
	path, rawPath string
}

// ServeConn serves c (see HTTP1 and ConnServer).
func (s *HTTP1) ServeConn(c net.Conn) (handoff net.Conn) {
	cn := &h1conn{s: s, c: c, buf: make([]byte, h1ReadBuffer), values: map[string][]string{}}
	s.mu.Lock()
	s.conns[cn] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, cn)
		s.mu.Unlock()
		if cn.cancel != nil {
			cn.cancel()
		}
		cn.releaseOut()
		if rec := recover(); rec != nil {
			s.o.Logger.Error("http1 fast path panic", "remote", c.RemoteAddr().String(), "panic", rec)
			c.Close()
			handoff = nil
		}
	}()
	return cn.serve()
}

// errHandoff tells serve to hand the connection to net/http.
var errHandoff = errors.New("hand off")

// serve is the connection's loop.
func (cn *h1conn) serve() net.Conn {
	s := cn.s
	now := time.Now()
	cn.setReadDeadline(now.Add(s.o.HeaderTimeout))
	first := true
	for {
		res := parseH1(cn.buf[cn.start:cn.end], &cn.h)
		if res == h1More {
			if err := cn.readMore(first); err != nil {
				if err == errHandoff {
					return cn.handoff()
				}
				cn.close(false)
				return nil
			}
			continue
		}
		if res == h1Handoff {
			return cn.handoff()
		}
		first = false
		keep, ok := cn.answer()
		if !ok {
			return cn.handoff()
		}
		cn.start += cn.h.size
		cn.headTimed = false
		if cn.start == cn.end {
			cn.start, cn.end = 0, 0
		}
		if cn.werr == nil && (!keep || cn.start == cn.end || len(cn.out) >= h1OutMax) {
			cn.flushOut() // pipelined answers wait for the next, up to h1OutMax
		}
		if cn.werr != nil {
			cn.close(false)
			return nil
		}
		if !keep {
			cn.close(true)
			return nil
		}
		cn.releaseOut()
	}
}

// readMore reads more of a head. Before a request's first byte the wait
// is the idle timeout (the header timeout for the connection's first
// request, set at its start); from its first byte, the header timeout.
func (cn *h1conn) readMore(first bool) error {
	s := cn.s
	if cn.start > 0 {
		// make room: the partial head goes to the front
		cn.end = copy(cn.buf, cn.buf[cn.start:cn.end])
		cn.start = 0
	}
	if cn.end == len(cn.buf) {
		if len(cn.buf) >= h1MaxHead {
			return errHandoff
		}
		nb := make([]byte, h1MaxHead)
		copy(nb, cn.buf[:cn.end])
		cn.buf = nb
	}
	// answers held back behind pipelined requests leave before the wait
	if cn.flushOut(); cn.werr != nil {
		return cn.werr
	}
	empty := cn.end == 0
	switch {
	case first:
		// the connection's first head: HeaderTimeout from its start
	case empty:
		cn.releaseOut()
		now := time.Now()
		if want := now.Add(s.o.IdleTimeout); cn.rdl.Before(want.Add(-s.o.IdleTimeout / 8)) {
			cn.setReadDeadline(want)
		}
	case !cn.headTimed:
		// a part of a pipelined head came with the previous one
		cn.setReadDeadline(time.Now().Add(s.o.HeaderTimeout))
		cn.headTimed = true
	}
	if empty {
		// between requests: Shutdown closes the connection now
		cn.idle.Store(true)
		defer cn.idle.Store(false)
		if s.down.Load() {
			return net.ErrClosed
		}
	}
	n, err := cn.c.Read(cn.buf[cn.end:])
	cn.end += n
	if n > 0 && empty && !first {
		// a request's first bytes: its head has HeaderTimeout from now,
		// set only when they are not the whole head
		if parseH1(cn.buf[:cn.end], &cn.h) == h1More {
			cn.setReadDeadline(time.Now().Add(s.o.HeaderTimeout))
			cn.headTimed = true
		}
	}
	if n > 0 {
		return nil
	}
	if err == nil {
		return nil
	}
	return err // EOF, a timeout (a head cut by it too): closed, as net/http does
}

// setReadDeadline sets the read deadline, remembered.
func (cn *h1conn) setReadDeadline(t time.Time) {
	cn.rdl = t
	_ = cn.c.SetReadDeadline(t)
}

// armWrite makes sure a write deadline of about WriteTimeout is set
// before a write: it moves only when it has come an eighth of the
// timeout closer, not for every answer.
func (cn *h1conn) armWrite() {
	wt := cn.s.o.WriteTimeout
	want := time.Now().Add(wt)
	if cn.wdl.Before(want.Add(-wt / 8)) {
		cn.wdl = want
		_ = cn.c.SetWriteDeadline(want)
	}
}

// handoff returns the connection for net/http, with what was read of
// the request it did not answer (and what follows) put back.
func (cn *h1conn) handoff() net.Conn {
	if cn.werr == nil {
		cn.flushOut()
	}
	if cn.werr != nil {
		cn.close(false)
		return nil
	}
	// net/http sets its own deadlines; clear ours
	_ = cn.c.SetDeadline(time.Time{})
	return NewReplayConn(cn.c, cn.buf[cn.start:cn.end])
}

// close closes the connection; graceful: as net/http does after an
// answer that closes it (the write side shut first, then a pause so
// that a client still sending gets the answer before a reset).
func (cn *h1conn) close(graceful bool) {
	if graceful {
		if cw, ok := cn.c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			time.Sleep(rstAvoidanceDelay)
		}
	}
	_ = cn.c.Close()
}

// rstAvoidanceDelay is net/http's.
const rstAvoidanceDelay = 500 * time.Millisecond

// getOut takes an output buffer when the connection has none.
func (cn *h1conn) getOut() {
	if cn.outp == nil {
		cn.outp = outBuffers.Get().(*[]byte)
		cn.out = (*cn.outp)[:0]
	}
}

// releaseOut gives the output buffer back.
func (cn *h1conn) releaseOut() {
	if cn.outp != nil && len(cn.out) == 0 {
		if cap(cn.out) <= 64<<10 {
			*cn.outp = cn.out[:0]
			outBuffers.Put(cn.outp)
		}
		cn.outp, cn.out = nil, nil
	}
}

// flushOut writes what out holds.
func (cn *h1conn) flushOut() error {
	if cn.werr != nil || len(cn.out) == 0 {
		cn.out = cn.out[:0]
		return cn.werr
	}
	cn.armWrite()
	err := cn.write(cn.out)
	cn.out = cn.out[:0]
	if err != nil {
		cn.werr = err
	}
	return err
}

// write writes b to the connection. Through TLS, b of more than a
// record is several records, each a write of the TLS connection to the
// TCP one: they leave in one write (gathered) instead of a system call
// each.
func (cn *h1conn) write(b []byte) error {
	if len(b) > tlsRecord {
		if tc, ok := cn.c.(*tls.Conn); ok {
			if cc, ok := tc.NetConn().(*Conn); ok {
				cc.startGathering()
				_, err := tc.Write(b)
				if ferr := cc.endGathering(); err == nil {
					err = ferr
				}
				return err
			}
		}
	}
	_, err := cn.c.Write(b)
	return err
}

// writeBody adds p to the output: copied behind what out holds while it
// fits, else written with it in one writev.
func (cn *h1conn) writeBody(p []byte) {
	if cn.werr != nil {
		return
	}
	if len(cn.out)+len(p) <= h1OutMax {
		cn.out = append(cn.out, p...)
		return
	}
	cn.writeTwo(p)
}

// writeTwo writes out, then p, in one writev when the connection can.
func (cn *h1conn) writeTwo(p []byte) {
	cn.armWrite()
	var err error
	switch c := cn.c.(type) {
	case *Conn:
		err = c.writeTwo(cn.out, p)
	case *net.TCPConn:
		bufs := net.Buffers{cn.out, p}
		_, err = bufs.WriteTo(c)
	case *tls.Conn:
		if len(cn.out)+len(p) <= tlsRecord {
			// one record, one write
			cn.out = append(cn.out, p...)
			_, err = c.Write(cn.out)
			break
		}
		// The head's record is filled with the body's start, so that
		// the answer takes the fewest records its length needs (a
		// record for the head alone would be one more to seal and
		// send); the records leave in as few writes as gathering
		// holds (see Conn.Write).
		fill := min(len(p), max(0, tlsRecord-len(cn.out)))
		cn.out = append(cn.out, p[:fill]...)
		p = p[fill:]
		cc, _ := c.NetConn().(*Conn)
		if cc != nil {
			cc.startGathering()
		}
		if _, err = c.Write(cn.out); err == nil && len(p) > 0 {
			_, err = c.Write(p)
		}
		if cc != nil {
			if ferr := cc.endGathering(); err == nil {
				err = ferr
			}
		}
	default:
		if len(cn.out) > 0 {
			_, err = c.Write(cn.out)
		}
		if err == nil {
			_, err = c.Write(p)
		}
	}
	cn.out = cn.out[:0]
	if err != nil {
		cn.werr = err
	}
}

// h1DateCache is the Date value of the current second, shared by the
// connections (see h1DateNow).
var h1DateCache atomic.Pointer[h1DateLine]

type h1DateLine struct {
	sec  int64
	line []byte
}

// h1DateNow is the Date value for now: formatted once a second.
func h1DateNow(now time.Time) []byte {
	sec := now.Unix()
	if d := h1DateCache.Load(); d != nil && d.sec == sec {
		return d.line
	}
	d := &h1DateLine{sec: sec, line: h1HTTPDate(sec)}
	h1DateCache.Store(d)
	return d.line
}

// answer answers the parsed request cn.h; ok is false when the request
// is not a site host's (the connection goes to net/http from it on), and
// keep false when the connection closes after the answer.
func (cn *h1conn) answer() (keep, ok bool) {
	s := cn.s
	h := &cn.h
	if string(h.host) != cn.host {
		cn.host = string(h.host)
		cn.label, cn.isSite = s.o.SiteLabel(cn.host)
	}
	if !cn.isSite {
		return false, false
	}
	if s.down.Load() {
		h.close = true // shutting down: this answer is the last
	}
	start := time.Now()
	cn.date = h1DateNow(start)
	cn.getOut()
	r := cn.request()
	if site := s.o.Sites; site != nil {
		if done, keep := cn.fast(site, r, start); done {
			return keep, true
		}
	}
	w := &cn.w
	w.cn = cn
	if w.hdr == nil {
		w.hdr = http.Header{}
	}
	w.reset(h)
	u, err := url.ParseRequestURI(cn.target)
	if err != nil {
		return false, false // parseH1 lets no such target through: net/http's answer
	}
	r.URL = u
	s.o.Serve(w, r, cn.label)
	keep = w.finish()
	return keep, true
}

// request fills the connection's request for cn.h, as net/http's
// ReadRequest would.
func (cn *h1conn) request() *http.Request {
	h := &cn.h
	if cn.req == nil {
		cn.ctx, cn.cancel = context.WithCancel(cn.s.o.BaseContext)
		cn.req = (&http.Request{}).WithContext(cn.ctx)
		cn.req.Header = http.Header{}
		cn.remote = cn.c.RemoteAddr().String()
		if tc, ok := cn.c.(interface{ ConnectionState() tls.ConnectionState }); ok {
			st := tc.ConnectionState()
			cn.tls = &st
		}
	}
	r := cn.req
	if string(h.target) != cn.target {
		cn.target = string(h.target)
		cn.path, cn.rawPath = "", ""
	}
	r.Method = http.MethodGet
	if h.head {
		r.Method = http.MethodHead
	}
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	if h.http10 {
		r.Proto, r.ProtoMinor = "HTTP/1.0", 0
	}
	hd := r.Header
	clear(hd)
	if len(cn.values) > 2*h1MaxFields {
		clear(cn.values) // a client that sends new names at every request keeps no more
	}
	for i := range h.n {
		f := &h.fields[i]
		if prev, ok := hd[f.name]; ok {
			hd[f.name] = append(prev[:len(prev):len(prev)], string(f.value))
			continue
		}
		v := cn.values[f.name]
		if len(v) != 1 || v[0] != string(f.value) {
			v = []string{string(f.value)}
			cn.values[f.name] = v
		}
		hd[f.name] = v
	}
	if pragma := hd["Pragma"]; len(pragma) > 0 && pragma[0] == "no-cache" {
		if _, ok := hd["Cache-Control"]; !ok {
			hd["Cache-Control"] = noCacheValue
		}
	}
	r.Body, r.ContentLength, r.Close = http.NoBody, 0, h.close
	r.Host, r.RemoteAddr, r.RequestURI, r.TLS = cn.host, cn.remote, cn.target, cn.tls
	r.Form, r.PostForm, r.MultipartForm, r.Trailer, r.TransferEncoding = nil, nil, nil, nil, nil
	r.GetBody, r.Response, r.Pattern = nil, nil, ""
	return r
}
