package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// What runs ahead of net/http on the main listener.
//
// Once Serve is called, the listener accepts connections itself, one
// goroutine each: it terminates TLS (with ListenFront.TLS), then gives the
// connection to the ConnServer for its protocol, which answers the
// requests it fully understands (site hosts) and hands the connection
// back for net/http at the first one it does not. Accept returns the
// handed back connections: net/http serves them as it would have served
// them from the start (a *tls.Conn it finds handshaken; a ReplayConn
// with the bytes already read put back, whose TLS state RestoreTLS gives
// back to its requests).

// ListenFront is what Serve runs on each accepted connection before net/http.
type ListenFront struct {
	// TLS, when set, terminates TLS in the listener: the server then
	// serves its connections with http.Server.Serve, not ServeTLS, and
	// its TLSConfig must list "h2" in NextProtos for HTTP/2 to be
	// configured (as certs.Manager's does).
	TLS *tls.Config
	// HandshakeTimeout bounds a TLS handshake, from the connection's
	// acceptance (net/http bounds it by its ReadHeaderTimeout).
	HandshakeTimeout time.Duration
	// HTTP1 serves HTTP/1.x connections: plain ones, and TLS ones whose
	// client did not choose h2. nil: net/http serves them.
	HTTP1 ConnServer
	// HTTP2 serves the h2 connections whose TLS server name HTTP2Names
	// accepts (a site host). nil: net/http serves them all.
	HTTP2      ConnServer
	HTTP2Names func(serverName string) bool
}

// listenerFront is a Listener's Front at work (see Serve).
type listenerFront struct {
	l     *Listener
	front ListenFront
	// ready passes handed over connections to Accept.
	ready chan net.Conn
	start sync.Once
	// done is closed with the listener; err is then the accept error.
	done      chan struct{}
	closeOnce sync.Once
	err       error

	mu sync.Mutex
	// conns are the connections in the front's hands: handshaking or
	// in a ConnServer.
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Serve has the listener run f on every connection before net/http (see
// ListenFront). Call it once, before the server's first Accept.
func (l *Listener) Serve(f ListenFront) {
	l.front = &listenerFront{
		l: l, front: f,
		ready: make(chan net.Conn),
		done:  make(chan struct{}),
		conns: map[net.Conn]struct{}{},
	}
}

// accept returns the next connection for net/http.
func (lf *listenerFront) accept() (net.Conn, error) {
	lf.start.Do(func() { go lf.loop() })
	select {
	case c := <-lf.ready:
		return c, nil
	case <-lf.done:
		return nil, lf.err
	}
}

// loop accepts connections until the listener closes.
func (lf *listenerFront) loop() {
	var delay time.Duration
	for {
		c, err := lf.l.acceptConn()
		if err != nil {
			// as net/http: a temporary error (EMFILE, ENFILE: out of file
			// descriptors under a flood of connections) backs off and goes
			// on; ending here would leave Accept failing, and the server
			// taking no connection, until a restart
			var ne net.Error
			if errors.As(err, &ne) && (ne.Timeout() || isTemporary(ne)) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(delay):
					continue
				case <-lf.done:
					return
				}
			}
			lf.fail(err)
			return
		}
		delay = 0
		if !lf.track(c) {
			c.Close()
			return
		}
		go lf.serve(c)
	}
}

// isTemporary is net/http's test of an Accept error it retries
// (net.Error's Temporary, deprecated but what Accept's errors still
// carry: EMFILE, ENFILE).
func isTemporary(err net.Error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// fail ends Accept with err (net.ErrClosed once the listener closed).
func (lf *listenerFront) fail(err error) {
	lf.mu.Lock() // so that track counts no connection once done is closed
	defer lf.mu.Unlock()
	lf.closeOnce.Do(func() {
		lf.err = err
		close(lf.done)
	})
}

// close ends Accept: the listener is closing.
func (lf *listenerFront) close() { lf.fail(net.ErrClosed) }

// track counts c as in the front's hands; false once the listener has
// closed (the caller closes c).
func (lf *listenerFront) track(c net.Conn) bool {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	select {
	case <-lf.done:
		return false
	default:
	}
	lf.conns[c] = struct{}{}
	lf.wg.Add(1)
	return true
}

func (lf *listenerFront) untrack(c net.Conn) {
	lf.mu.Lock()
	delete(lf.conns, c)
	lf.mu.Unlock()
	lf.wg.Done()
}

// serve runs the front on c, and hands what is left to net/http.
func (lf *listenerFront) serve(c net.Conn) {
	handoff := lf.run(c)
	lf.untrack(c)
	if handoff == nil {
		return
	}
	select {
	case lf.ready <- handoff:
	case <-lf.done:
		handoff.Close() // net/http accepts no more
	}
}

// run terminates TLS on c when the front does, and gives the connection
// to the ConnServer for its protocol. It returns the connection for
// net/http, nil when there is none (served to its end, or a failed
// handshake).
func (lf *listenerFront) run(c net.Conn) net.Conn {
	f := &lf.front
	if f.TLS == nil {
		if f.HTTP1 == nil {
			return c
		}
		return f.HTTP1.ServeConn(c)
	}
	tc := tls.Server(c, f.TLS)
	if f.HandshakeTimeout > 0 {
		_ = c.SetDeadline(time.Now().Add(f.HandshakeTimeout))
	}
	if err := tc.HandshakeContext(context.Background()); err != nil {
		// as net/http, which logs it to its ErrorLog: a scan, a client
		// that gave up, a name without a certificate
		tc.Close()
		return nil
	}
	_ = c.SetDeadline(time.Time{})
	st := tc.ConnectionState()
	switch st.NegotiatedProtocol {
	case "h2":
		if f.HTTP2 != nil && f.HTTP2Names != nil && f.HTTP2Names(st.ServerName) {
			return f.HTTP2.ServeConn(tc)
		}
		return tc
	case "", "http/1.1", "http/1.0":
		if f.HTTP1 != nil {
			return f.HTTP1.ServeConn(tc)
		}
		return tc
	}
	return tc // another protocol (acme-tls/1): net/http's to refuse
}

// ShutdownConns is the listener's part of a graceful shutdown, beside
// the server's Shutdown (which closes the listener): each ConnServer that has a Shutdown method is
// asked to end its connections (see ConnServerShutdown), and the
// connections still in the front's hands at ctx's end are closed. The
// drain is over once the listener has closed and those connections have
// ended. It returns ctx's error when some had to be closed.
func (l *Listener) ShutdownConns(ctx context.Context) error {
	if l == nil || l.front == nil {
		return nil
	}
	lf := l.front
	// The server's own Shutdown closes the listener (Close): closing it
	// here first would end its Serve with net.ErrClosed before it knows
	// it is shutting down, and the serve command would fail.
	for _, cs := range []ConnServer{lf.front.HTTP1, lf.front.HTTP2} {
		if sd, ok := cs.(ConnServerShutdown); ok {
			go sd.Shutdown(ctx)
		}
	}
	// The count is waited on once the listener has closed: until then a
	// connection being accepted may still be counted (track), and a wait
	// begun before that would race with it. done is closed under mu,
	// after which track counts nothing.
	drained := make(chan struct{})
	go func() {
		select {
		case <-lf.done:
			lf.wg.Wait()
			close(drained)
		case <-ctx.Done():
		}
	}()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
	}
	lf.mu.Lock()
	for c := range lf.conns {
		c.Close()
	}
	lf.mu.Unlock()
	return ctx.Err()
}

// ConnServerShutdown is a ConnServer that ends its connections
// gracefully: Shutdown has it answer no more requests on them (an
// HTTP/1 connection closes once idle or after the answer it is writing,
// an HTTP/2 one gets a GOAWAY and closes when its streams are done), and
// returns once all have ended or ctx is done. The listener closes what
// is still open after that.
type ConnServerShutdown interface {
	Shutdown(ctx context.Context) error
}
