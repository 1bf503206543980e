package serve

import (
	"crypto/tls"
	"net"
)

// ReplayConn is a connection handed to net/http by a ConnServer after it
// read from it: Read returns the bytes already read (Buffered) first,
// then reads the connection. Every other method is the connection's.
type ReplayConn struct {
	net.Conn
	// Buffered are the bytes read from Conn and not yet consumed: the
	// start of the request the ConnServer did not answer.
	Buffered []byte
}

// NewReplayConn returns c with buffered put back in front of what is
// still to be read from it. It keeps its own copy of buffered. With
// nothing buffered it returns c itself.
func NewReplayConn(c net.Conn, buffered []byte) net.Conn {
	if len(buffered) == 0 {
		return c
	}
	return &ReplayConn{Conn: c, Buffered: append([]byte(nil), buffered...)}
}

// Read reads the bytes put back first, then the connection.
func (c *ReplayConn) Read(p []byte) (int, error) {
	if len(c.Buffered) > 0 {
		n := copy(p, c.Buffered)
		c.Buffered = c.Buffered[n:]
		if len(c.Buffered) == 0 {
			c.Buffered = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite shuts the connection's writing side, when it has one
// (net/http's graceful close of an HTTP/1 connection uses it).
func (c *ReplayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// TLS returns the state of the connection's TLS session, nil when the
// connection is not TLS. net/http sets a request's TLS field only for a
// *tls.Conn; the server's handler restores it from here for a handed
// over one (see ConnTLS).
func (c *ReplayConn) TLS() *tls.ConnectionState {
	if tc, ok := c.Conn.(*tls.Conn); ok {
		st := tc.ConnectionState()
		return &st
	}
	return nil
}
