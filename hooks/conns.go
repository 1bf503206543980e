package hooks

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Connection limits of sitedrop's listeners (the main one and, under
// --https, the plain HTTP one). A client that opens connections and sends
// nothing, or half a request, holds a file descriptor, a goroutine and
// buffers: PocketBase's defaults (a minute for the header, five minutes
// of keep-alive) let a few thousand such connections per address silence
// every host. Request bodies have their own deadlines (see body.go).
const (
	// headerTimeout bounds the TLS handshake and the reading of each
	// request's header, from the connection's first byte or the end of
	// the previous response: browsers send a header in one packet.
	headerTimeout = 10 * time.Second
	// idleTimeout is how long a keep-alive connection (HTTP/1 or HTTP/2)
	// waits for the next request. Browsers reuse a connection for the
	// requests of one page load; a minute covers a reader clicking on.
	idleTimeout = time.Minute
	// defaultMaxConnsPerIP is --max-conns-per-ip's default. A browser
	// opens up to 6 HTTP/1 connections per host (one with HTTP/2), and a
	// page may load from a few hosts: 256 leaves room for dozens of
	// browsers behind one NAT address, while a single address can no
	// longer hold thousands of connections.
	defaultMaxConnsPerIP = 256
)

// serverTimeouts sets the header and keep-alive timeouts of srv, or the
// test knobs of s.
func (s ServeConfig) serverTimeouts(srv *http.Server) {
	srv.ReadHeaderTimeout, srv.IdleTimeout = headerTimeout, idleTimeout
	if s.headerTimeout > 0 {
		srv.ReadHeaderTimeout = s.headerTimeout
	}
	if s.idleTimeout > 0 {
		srv.IdleTimeout = s.idleTimeout
	}
}

// connLimit counts the open connections of each client (an IPv4 address
// or an IPv6 /64, as rate limits count) and refuses a client's connection
// over its cap. Connections from trusted proxies are not counted: all
// traffic comes from them. A nil *connLimit counts nothing.
type connLimit struct {
	max     int
	proxies []netip.Prefix
	mu      sync.Mutex
	open    map[netip.Addr]int
}

// newConnLimit returns a limit of max connections per client; nil (no
// limit) when max is not positive.
func newConnLimit(max int, proxies []netip.Prefix) *connLimit {
	if max <= 0 {
		return nil
	}
	return &connLimit{max: max, proxies: proxies, open: make(map[netip.Addr]int)}
}

// acquire counts a new connection from remote. It returns the client's key
// (invalid when the connection is not counted) and false when the client
// already holds its cap of connections: the caller closes it.
func (l *connLimit) acquire(remote net.Addr) (netip.Addr, bool) {
	ta, ok := remote.(*net.TCPAddr)
	if l == nil || !ok {
		return netip.Addr{}, true
	}
	a := ta.AddrPort().Addr().Unmap()
	for _, p := range l.proxies {
		if p.Contains(a) {
			return netip.Addr{}, true
		}
	}
	key := clientNet(a)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return netip.Addr{}, false
	}
	l.open[key]++
	return key, true
}

// release uncounts a connection of the client key (from acquire).
func (l *connLimit) release(key netip.Addr) {
	if l == nil || !key.IsValid() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.open[key] - 1; n > 0 {
		l.open[key] = n
	} else {
		delete(l.open, key)
	}
}

// countedConn is what a connection under a limit remembers: its client
// and whether it has been released. Close releases it once, whoever
// closes it: net/http, a handler that hijacked it, TLS or HTTP/2.
type countedConn struct {
	limit    *connLimit
	key      netip.Addr
	released atomic.Bool
}

// closed releases the connection's place.
func (cc *countedConn) closed() {
	if cc.limit != nil && cc.released.CompareAndSwap(false, true) {
		cc.limit.release(cc.key)
	}
}

// refuse closes a connection over its client's cap at once, with a reset:
// it leaves no TIME_WAIT behind.
func refuse(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// limitedListener applies a connLimit to a listener's connections (the
// plain HTTP listener under --https; the main listener does the same in
// coalescingListener).
type limitedListener struct {
	net.Listener
	limit *connLimit
}

// Accept returns the next connection whose client is under its cap;
// others are closed at once.
func (l limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, ok := l.limit.acquire(c.RemoteAddr())
		if !ok {
			refuse(c)
			continue
		}
		if !key.IsValid() {
			return c, nil
		}
		return &limitedConn{Conn: c, counted: countedConn{limit: l.limit, key: key}}, nil
	}
}

// limitedConn is a connection counted by a connLimit until it closes.
type limitedConn struct {
	net.Conn
	counted countedConn
}

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.counted.closed()
	return err
}

// CloseWrite half-closes a TCP connection, as net/http does before
// closing one it refused.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
