package serve

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Site responses in one write.
//
// net/http buffers the first 4 KiB of an HTTP/1 response (status line,
// headers and the start of the body) and writes the rest of a larger body
// straight to the connection: two write syscalls for every answer over
// 4 KiB, where nginx makes one writev. On loopback that second write costs
// about a quarter of the throughput for a 16 KB script. While a site
// response is written, its connection is "corked": a small write is held
// back (copied) and sent with the next one in a single writev, and what is
// still held when the handler returns goes out in one write.
//
// Only HTTP/1 site responses are corked: they are written by the
// connection's own goroutine and never stream. API and dashboard
// responses (server-sent events among them) are written as they come.
//
// An HTTP/2 connection (over TLS) batches its writes instead, once it has
// carried a site request (see Cork): net/http's frame writer flushes each
// frame it has no successor for at once, so a response's HEADERS leave in
// a TLS record and a write of their own before its handler has even
// queued the DATA, and each stream of a connection costs two writes or
// more, where nginx makes one for several. A batching connection holds a
// write and sends it from a goroutine that first yields to every
// goroutine ready to run (the handlers and the frame writer): what they
// write meanwhile joins it, and all of it leaves in one write. Nothing
// waits on a timer: once the ready goroutines have run, what is held goes.

// maxHeld is the most a corked connection holds back. net/http's
// connection buffer flushes 4 KiB at a time; room for two such flushes
// lets a response of up to 8 KiB leave in one write with no writev.
const maxHeld = 8 << 10

// maxGathered is the most gatherWrites holds back: the TLS records of
// an H2Server's flush (up to h2WriteBuffer and a frame), four records.
const maxGathered = 64 << 10

// maxBatched is the most a batching connection holds back: a few full
// HTTP/2 DATA frames (16 KiB each) and the records around them.
const maxBatched = 64 << 10

// heldBuffers recycles the buffers of corked connections: a connection
// holds one only while it answers, not while it idles.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxHeld); return &b }}

// Listener is the main server's listener (see NewListener): it wraps each
// TCP connection in a Conn, and closes at once a connection whose client
// is over its cap of open connections.
type Listener struct {
	net.Listener
	// limit caps the open connections per client; nil: no cap.
	limit *ConnLimit
	// onSend, when set (by tests), is told of each write that reaches
	// the socket: the connection and the bytes written.
	onSend func(c net.Conn, n int)
	// front runs TLS and the ConnServers ahead of net/http once Serve
	// was called (see accept.go); nil: Accept hands every connection to
	// net/http as it comes.
	front *listenerFront
}

// NewListener wraps ln: each TCP connection it accepts is a Conn whose
// writes can be corked (see Cork), and a connection over its client's cap
// under limit (nil: no cap) is closed at once. onSend, when not nil (for
// tests), is told of each write that reaches the socket: the connection
// and the bytes written. A server on it sets ConnContext as its
// ConnContext, so that its requests find their Conn.
func NewListener(ln net.Listener, limit *ConnLimit, onSend func(c net.Conn, n int)) *Listener {
	return &Listener{Listener: ln, limit: limit, onSend: onSend}
}

// Close closes the listener; it accepts nil.
func (l *Listener) Close() error {
	if l == nil {
		return nil
	}
	if l.front != nil {
		l.front.close()
	}
	return l.Listener.Close()
}

// Accept wraps TCP connections; any other kind is returned as it is. A
// connection over its client's cap is closed at once (see ConnLimit), and
// the next one is accepted. Once Serve was called, it returns the
// connections that TLS and the ConnServers hand to net/http (see
// accept.go).
func (l *Listener) Accept() (net.Conn, error) {
	if l.front != nil {
		return l.front.accept()
	}
	return l.acceptConn()
}

// acceptConn accepts the next connection under its client's cap.
func (l *Listener) acceptConn() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, ok := c.(*net.TCPConn)
		if !ok {
			return c, nil
		}
		key, ok := l.limit.acquire(tc.RemoteAddr())
		if !ok {
			refuse(tc)
			continue
		}
		cc := &Conn{tcp: tc, onSend: l.onSend}
		if key.IsValid() {
			cc.counted = countedConn{limit: l.limit, key: key}
		}
		return cc, nil
	}
}

// Conn is a TCP connection whose writes can be corked. It
// keeps the *net.TCPConn in a field rather than embedding it, so that no
// way of writing around what is held (SyscallConn, net's writev) is
// promoted; it forwards what net/http uses: the net.Conn methods,
// CloseWrite, and ReadFrom (sendfile), which sends what is held first.
type Conn struct {
	tcp    *net.TCPConn
	onSend func(c net.Conn, n int)
	// counted holds the connection's place under its client's cap.
	counted countedConn

	// mu guards the fields below: under TLS, closing the server writes
	// an alert from another goroutine.
	mu     sync.Mutex
	corked bool
	// gathering: every write is held, up to maxGathered, and sent at
	// the end of gatherWrites.
	gathering bool
	// batching: writes are held and sent by a goroutine (flushSoon),
	// one write for all that the ready goroutines add; flushing tells
	// that one is on its way.
	flushing bool
	// batching is set once (see batch) and read without mu too (see
	// flushBatched).
	batching atomic.Bool
	held     *[]byte // nil when nothing is held
	vec      [2][]byte
	bufs     net.Buffers
	err      error // the first failed write; every later write fails too
}

// Write sends p, or holds it while corked or batching when it fits.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	held := c.heldLen()
	if c.corked && held+len(p) <= maxHeld || c.batching.Load() && held+len(p) <= maxBatched || c.gathering && held+len(p) <= maxGathered {
		if c.held == nil {
			c.held = heldBuffers.Get().(*[]byte)
		}
		*c.held = append(*c.held, p...)
		if c.batching.Load() && !c.flushing {
			c.flushing = true
			go c.flushSoon()
		}
		return len(p), nil
	}
	if held == 0 {
		return c.send(p)
	}
	// what is held and p, in one writev
	c.vec = [2][]byte{*c.held, p}
	c.bufs = c.vec[:] // fields, not locals: no allocation
	n, err := c.bufs.WriteTo(c.tcp)
	c.vec, c.bufs = [2][]byte{}, nil
	c.sent(int(n))
	c.release()
	if err != nil {
		c.err = err
	}
	return max(0, int(n)-held), err
}

// ReadFrom copies r to the socket. net/http uses it for bodies copied
// with io.Copy: files (sendfile) and Range answers. While corked, a reader
// that is not a file goes through Write, so its bytes join what is held;
// otherwise what is held is sent first and the copy goes to the socket
// (sendfile for a file). The lock is not held during the copy: while a
// handler answers, only its goroutine writes.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	c.mu.Lock()
	through := c.corked && !isFile(r)
	err := c.err
	if !through {
		err = c.flushLocked()
	}
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if through {
		return io.Copy(connWriter{c}, r)
	}
	n, err := c.tcp.ReadFrom(r)
	if n > 0 {
		c.sent(int(n))
	}
	if err != nil {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
	}
	return n, err
}

// isFile tells whether r is a file, or a part of one, which the kernel
// copies (sendfile) without passing its bytes through memory.
func isFile(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	_, ok := r.(*os.File)
	return ok
}

// connWriter hides ReadFrom, so that io.Copy writes through Write.
type connWriter struct{ c *Conn }

func (w connWriter) Write(p []byte) (int, error) { return w.c.Write(p) }

// flushSoon sends what a batching connection holds, once the goroutines
// ready to run have run (and added to it what they write).
func (c *Conn) flushSoon() {
	runtime.Gosched()
	c.mu.Lock()
	c.flushing = false
	_ = c.flushLocked() // a failure is kept in c.err for the next write
	c.mu.Unlock()
}

// Read, the addresses and the read deadline are the TCP connection's.

func (c *Conn) Read(p []byte) (int, error)        { return c.tcp.Read(p) }
func (c *Conn) LocalAddr() net.Addr               { return c.tcp.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr              { return c.tcp.RemoteAddr() }
func (c *Conn) SetReadDeadline(t time.Time) error { return c.tcp.SetReadDeadline(t) }

// SetWriteDeadline sends what a batching connection holds, then sets the
// new deadline: TLS's Close writes its close_notify under a 5 s
// deadline, then sets one in the past, and what it wrote must not meet
// that one.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.flushBatched()
	return c.tcp.SetWriteDeadline(t)
}

// SetDeadline is SetReadDeadline and SetWriteDeadline.
func (c *Conn) SetDeadline(t time.Time) error {
	c.flushBatched()
	return c.tcp.SetDeadline(t)
}

// flushTimeout bounds the sending of what a batching connection holds
// when its deadline changes or it closes: a peer that reads nothing
// must not hold those calls (and so the connection, its goroutines and
// its place under its client's cap) for as long as it stays silent.
// TLS's own close_notify has the same bound. A variable for the tests.
var flushTimeout = 5 * time.Second

// flushBatched sends what a batching connection holds, within
// flushTimeout: the deadline it sets first also applies to a send
// already blocked (in flushSoon), which then lets go of mu. Every caller
// sets its own deadline, or closes the socket, right after.
func (c *Conn) flushBatched() {
	if c.batching.Load() {
		c.flushHeld()
	}
}

// CloseWrite sends what is held (within flushTimeout), then shuts the
// sending side down.
func (c *Conn) CloseWrite() error {
	c.flushHeld()
	return c.tcp.CloseWrite()
}

// Close sends what is held (a TLS close_notify, the last frames of a
// batching connection: within flushTimeout), then closes the connection
// and frees its place under its client's cap.
func (c *Conn) Close() error {
	c.flushHeld()
	err := c.tcp.Close()
	c.counted.closed()
	return err
}

// flushHeld sends what is held, corked or batching, within flushTimeout
// (see flushBatched), before the socket is shut.
func (c *Conn) flushHeld() {
	_ = c.tcp.SetWriteDeadline(time.Now().Add(flushTimeout))
	c.mu.Lock()
	_ = c.flushLocked()
	c.mu.Unlock()
}

// gatherWrites runs write, holding what it writes to the connection
// (up to maxGathered), and sends it in one write: an H2Server's flush
// through TLS is several records, each a write of its own otherwise.
func (c *Conn) gatherWrites(write func() error) error {
	c.startGathering()
	err := write()
	if ferr := c.endGathering(); err == nil {
		err = ferr
	}
	return err
}

// writeTwo writes a and b to the socket in one writev (what is held is
// sent first: nothing is held outside a corked answer).
func (c *Conn) writeTwo(a, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	c.vec = [2][]byte{a, b}
	c.bufs = c.vec[:]
	n, err := c.bufs.WriteTo(c.tcp)
	c.vec, c.bufs = [2][]byte{}, nil
	c.sent(int(n))
	if err != nil {
		c.err = err
	}
	return err
}

// startGathering holds every write (up to maxGathered) until
// endGathering, which sends what is held in one write: gatherWrites
// without a closure, for a caller on the per-request path.
func (c *Conn) startGathering() {
	c.mu.Lock()
	c.gathering = true
	c.mu.Unlock()
}

// endGathering stops holding writes and sends what is held.
func (c *Conn) endGathering() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gathering = false
	return c.flushLocked()
}

// cork starts holding small writes back.
func (c *Conn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Uncork ends a corked response: it has w flush net/http's buffer, so
// that the end of the response joins what is held, and sends it all.
// net/http would otherwise send the end in a write of its own after the
// handler returns.
func (c *Conn) Uncork(w http.ResponseWriter) {
	if c == nil {
		return
	}
	c.mu.Lock()
	holding := c.held != nil && c.err == nil
	c.mu.Unlock()
	if holding {
		// Something is held, so the headers are out (but under TLS, in
		// rare cases, what is held is a TLS record of its own, such as a
		// key update; flushing then sends a response without a length as
		// chunked, which is only another valid framing).
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	c.mu.Lock()
	c.corked = false
	_ = c.flushLocked() // a failure is kept in c.err for net/http's next write
	c.mu.Unlock()
}

// flushLocked sends what is held.
func (c *Conn) flushLocked() error {
	if c.err != nil || c.held == nil {
		return c.err
	}
	_, err := c.send(*c.held)
	c.release()
	return err
}

// send writes p to the socket.
func (c *Conn) send(p []byte) (int, error) {
	n, err := c.tcp.Write(p)
	c.sent(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *Conn) sent(n int) {
	if c.onSend != nil {
		c.onSend(c, n)
	}
}

func (c *Conn) heldLen() int {
	if c.held == nil {
		return 0
	}
	return len(*c.held)
}

// release returns the held buffer to the pool.
func (c *Conn) release() {
	*c.held = (*c.held)[:0]
	heldBuffers.Put(c.held)
	c.held = nil
}

// connKey is the request context key of the connection.
type connKey struct{}

// ConnContext is the main server's ConnContext: it makes the
// Conn under a connection (TLS or not) known to its requests.
//
// A connection handed over by a ConnServer (a ReplayConn) over TLS keeps
// its TLS state there, which net/http does not see: RestoreTLS gives it
// back to its requests.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if rc, ok := c.(*ReplayConn); ok {
		if st := rc.TLS(); st != nil {
			ctx = context.WithValue(ctx, tlsStateKey{}, st)
		}
		c = rc.Conn
	}
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if cc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// tlsStateKey is the request context key of a handed over connection's
// TLS state (see ConnContext).
type tlsStateKey struct{}

// RestoreTLS sets r.TLS for a request that came on a TLS connection a
// ConnServer handed to net/http after reading from it (see ConnContext):
// net/http sets it for a *tls.Conn only. The server's outermost handler
// calls it, so every handler after it sees the request as HTTPS.
func RestoreTLS(r *http.Request) {
	if r.TLS != nil {
		return
	}
	if st, ok := r.Context().Value(tlsStateKey{}).(*tls.ConnectionState); ok {
		r.TLS = st
	}
}

// Cork corks r's connection for the response to r, when it is an
// HTTP/1 request on a coalescing connection, and returns it (nil
// otherwise). Call its Uncork, which accepts nil, when the handler has
// written the response. An HTTP/2 request's connection is not corked: it
// batches its writes from then on (see the top of this file), and Cork
// returns nil.
func Cork(r *http.Request) *Conn {
	c, ok := r.Context().Value(connKey{}).(*Conn)
	if !ok {
		return nil
	}
	switch r.ProtoMajor {
	case 1:
		c.cork()
		return c
	case 2:
		c.batch()
	}
	return nil
}

// batch has the connection batch its writes (see flushSoon) from now on.
func (c *Conn) batch() {
	c.batching.Store(true)
}
