package serve

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// ConnLimit counts the open connections of each client (an IPv4 address
// or an IPv6 /64, as rate limits count) and refuses a client's connection
// over its cap. Connections from trusted proxies are not counted: all
// traffic comes from them. A nil *ConnLimit counts nothing. Listeners
// apply it: NewListener, LimitListener; one limit shared by several
// listeners caps a client across them.
type ConnLimit struct {
	max     int
	proxies []netip.Prefix
	mu      sync.Mutex
	open    map[netip.Addr]int
}

// NewConnLimit returns a limit of max connections per client, not
// counting those from proxies; nil (no limit) when max is not positive.
func NewConnLimit(max int, proxies []netip.Prefix) *ConnLimit {
	if max <= 0 {
		return nil
	}
	return &ConnLimit{max: max, proxies: proxies, open: make(map[netip.Addr]int)}
}

// acquire counts a new connection from remote. It returns the client's key
// (invalid when the connection is not counted) and false when the client
// already holds its cap of connections: the caller closes it.
func (l *ConnLimit) acquire(remote net.Addr) (netip.Addr, bool) {
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
func (l *ConnLimit) release(key netip.Addr) {
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
	limit    *ConnLimit
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

// LimitListener applies limit to the connections ln accepts (for a
// listener that does not coalesce writes, such as the plain HTTP one
// under --https; Listener does the same for its own).
func LimitListener(ln net.Listener, limit *ConnLimit) net.Listener {
	return limitedListener{Listener: ln, limit: limit}
}

// limitedListener is LimitListener's listener.
type limitedListener struct {
	net.Listener
	limit *ConnLimit
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

// limitedConn is a connection counted by a ConnLimit until it closes.
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

// clientNet is the client that per-IP connection caps count for address
// a: a itself for IPv4, its /64 network for IPv6 (as rate limits count).
func clientNet(a netip.Addr) netip.Addr {
	if a.Is4() {
		return a
	}
	p, _ := a.Prefix(64)
	return p.Addr()
}
