package hooks

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"
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

// maxHeld is the most a corked connection holds back. net/http's
// connection buffer flushes 4 KiB at a time; room for two such flushes
// lets a response of up to 8 KiB leave in one write with no writev.
const maxHeld = 8 << 10

// heldBuffers recycles the buffers of corked connections: a connection
// holds one only while it answers, not while it idles.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxHeld); return &b }}

// coalescingListener is the main server's listener: it wraps each TCP
// connection in a coalescingConn, and closes at once a connection whose
// client is over its cap of open connections.
type coalescingListener struct {
	net.Listener
	// limit caps the open connections per client; nil: no cap.
	limit *connLimit
	// onSend, when set (by tests), is told of each write that reaches
	// the socket: the connection and the bytes written.
	onSend func(c net.Conn, n int)
}

// listenMain binds the main server's address itself, where PocketBase
// would, with a coalescing listener that caps each client's connections
// (--max-conns-per-ip), and sets the server's header and keep-alive
// timeouts (see conns.go). It binds before the OnServe hooks bound after
// sitedrop's run; those must not change the address or the listener. It
// returns nil for a test harness (no server) or a listener that was
// already set; Close accepts nil.
func (sd *sitedrop) listenMain(se *core.ServeEvent) (*coalescingListener, error) {
	if se.Server == nil {
		return nil, nil
	}
	sd.cfg.Serve.serverTimeouts(se.Server)
	if sd.conns == nil {
		sd.conns = newConnLimit(sd.cfg.Serve.MaxConnsPerIP, sd.proxies)
	}
	if se.Listener != nil {
		return nil, nil
	}
	addr := se.Server.Addr
	if addr == "" { // PocketBase's default, as net/http's
		addr = ":http"
		if sd.cfg.Serve.HTTPSAddr != "" {
			addr = ":https"
		}
	}
	ln, err := net.Listen("tcp", addr) // its error names the address
	if err != nil {
		return nil, err
	}
	cl := &coalescingListener{Listener: ln, limit: sd.conns, onSend: sd.cfg.Serve.onSend}
	se.Listener = cl
	se.Server.ConnContext = coalescingConnContext
	return cl, nil
}

// Close closes the listener; it accepts nil.
func (l *coalescingListener) Close() error {
	if l == nil {
		return nil
	}
	return l.Listener.Close()
}

// Accept wraps TCP connections; any other kind is returned as it is. A
// connection over its client's cap is closed at once (see connLimit), and
// the next one is accepted.
func (l *coalescingListener) Accept() (net.Conn, error) {
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
		cc := &coalescingConn{tcp: tc, onSend: l.onSend}
		if key.IsValid() {
			cc.counted = countedConn{limit: l.limit, key: key}
		}
		return cc, nil
	}
}

// coalescingConn is a TCP connection whose writes can be corked. It
// keeps the *net.TCPConn in a field rather than embedding it, so that no
// way of writing around what is held (SyscallConn, net's writev) is
// promoted; it forwards what net/http uses: the net.Conn methods,
// CloseWrite, and ReadFrom (sendfile), which sends what is held first.
type coalescingConn struct {
	tcp    *net.TCPConn
	onSend func(c net.Conn, n int)
	// counted holds the connection's place under its client's cap.
	counted countedConn

	// mu guards the fields below: under TLS, closing the server writes
	// an alert from another goroutine.
	mu     sync.Mutex
	corked bool
	held   *[]byte // nil when nothing is held
	vec    [2][]byte
	bufs   net.Buffers
	err    error // the first failed write; every later write fails too
}

// Write sends p, or holds it while corked when it fits.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	held := c.heldLen()
	if c.corked && held+len(p) <= maxHeld {
		if c.held == nil {
			c.held = heldBuffers.Get().(*[]byte)
		}
		*c.held = append(*c.held, p...)
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
func (c *coalescingConn) ReadFrom(r io.Reader) (int64, error) {
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
type connWriter struct{ c *coalescingConn }

func (w connWriter) Write(p []byte) (int, error) { return w.c.Write(p) }

// Read, Close, CloseWrite, the addresses and the deadlines are the TCP
// connection's.

func (c *coalescingConn) Read(p []byte) (int, error)         { return c.tcp.Read(p) }
func (c *coalescingConn) CloseWrite() error                  { return c.tcp.CloseWrite() }
func (c *coalescingConn) LocalAddr() net.Addr                { return c.tcp.LocalAddr() }
func (c *coalescingConn) RemoteAddr() net.Addr               { return c.tcp.RemoteAddr() }
func (c *coalescingConn) SetDeadline(t time.Time) error      { return c.tcp.SetDeadline(t) }
func (c *coalescingConn) SetReadDeadline(t time.Time) error  { return c.tcp.SetReadDeadline(t) }
func (c *coalescingConn) SetWriteDeadline(t time.Time) error { return c.tcp.SetWriteDeadline(t) }

// Close closes the connection and frees its place under its client's cap.
func (c *coalescingConn) Close() error {
	err := c.tcp.Close()
	c.counted.closed()
	return err
}

// cork starts holding small writes back.
func (c *coalescingConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork ends a corked response: it has w flush net/http's buffer, so
// that the end of the response joins what is held, and sends it all.
// net/http would otherwise send the end in a write of its own after the
// handler returns.
func (c *coalescingConn) uncork(w http.ResponseWriter) {
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
func (c *coalescingConn) flushLocked() error {
	if c.err != nil || c.held == nil {
		return c.err
	}
	_, err := c.send(*c.held)
	c.release()
	return err
}

// send writes p to the socket.
func (c *coalescingConn) send(p []byte) (int, error) {
	n, err := c.tcp.Write(p)
	c.sent(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *coalescingConn) sent(n int) {
	if c.onSend != nil {
		c.onSend(c, n)
	}
}

func (c *coalescingConn) heldLen() int {
	if c.held == nil {
		return 0
	}
	return len(*c.held)
}

// release returns the held buffer to the pool.
func (c *coalescingConn) release() {
	*c.held = (*c.held)[:0]
	heldBuffers.Put(c.held)
	c.held = nil
}

// coalescingConnKey is the request context key of the connection.
type coalescingConnKey struct{}

// coalescingConnContext is the main server's ConnContext: it makes the
// coalescingConn under a connection (TLS or not) known to its requests.
func coalescingConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if cc, ok := c.(*coalescingConn); ok {
		return context.WithValue(ctx, coalescingConnKey{}, cc)
	}
	return ctx
}

// corkResponse corks r's connection for the response to r, when it is an
// HTTP/1 request on a coalescing connection, and returns it (nil
// otherwise). Call its uncork, which accepts nil, when the handler has
// written the response.
func corkResponse(r *http.Request) *coalescingConn {
	if r.ProtoMajor != 1 {
		return nil
	}
	c, ok := r.Context().Value(coalescingConnKey{}).(*coalescingConn)
	if !ok {
		return nil
	}
	c.cork()
	return c
}
