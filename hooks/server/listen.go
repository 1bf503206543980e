package server

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/serve"
)

// Connection limits of sitedrop's listeners (the main one and, under
// --https, the plain HTTP one). A client that opens connections and sends
// nothing, or half a request, holds a file descriptor, a goroutine and
// buffers: PocketBase's defaults (a minute for the header, five minutes
// of keep-alive) let a few thousand such connections per address silence
// every host. Request bodies have their own deadlines (hooks' body.go).
const (
	// HeaderTimeout bounds the TLS handshake and the reading of each
	// request's header, from the connection's first byte or the end of
	// the previous response: browsers send a header in one packet.
	HeaderTimeout = 10 * time.Second
	// IdleTimeout is how long a keep-alive connection (HTTP/1 or HTTP/2)
	// waits for the next request. Browsers reuse a connection for the
	// requests of one page load; a minute covers a reader clicking on.
	IdleTimeout = time.Minute
	// WriteTimeout bounds the writing of an answer: PocketBase's
	// server's, which sitedrop's HTTP/1.1 fast path keeps (see
	// Front.HTTP1).
	WriteTimeout = 5 * time.Minute
	// DefaultMaxConnsPerIP is --max-conns-per-ip's default. A browser
	// opens up to 6 HTTP/1 connections per host (one with HTTP/2), and a
	// page may load from a few hosts: 256 leaves room for dozens of
	// browsers behind one NAT address, while a single address can no
	// longer hold thousands of connections.
	DefaultMaxConnsPerIP = 256
)

// SetTimeouts sets the header and keep-alive timeouts of srv, or the
// test knobs of c.
func (c Config) SetTimeouts(srv *http.Server) {
	srv.ReadHeaderTimeout, srv.IdleTimeout = HeaderTimeout, IdleTimeout
	if c.HeaderTimeout > 0 {
		srv.ReadHeaderTimeout = c.HeaderTimeout
	}
	if c.IdleTimeout > 0 {
		srv.IdleTimeout = c.IdleTimeout
	}
}

// ListenMain binds the main server's address itself, where PocketBase
// would, with a listener that coalesces site responses' writes and caps
// each client's connections (conns: --max-conns-per-ip), and sets the
// server's header and keep-alive timeouts (above). It binds before the
// OnServe hooks bound after sitedrop's run; those must not change the
// address or the listener. It returns nil for a test harness (no server)
// or a listener that was already set; Close accepts nil.
func ListenMain(se *core.ServeEvent, c Config, conns *serve.ConnLimit) (*serve.Listener, error) {
	if se.Server == nil {
		return nil, nil
	}
	c.SetTimeouts(se.Server)
	if se.Listener != nil {
		return nil, nil
	}
	addr := se.Server.Addr
	if addr == "" { // PocketBase's default, as net/http's
		addr = ":http"
		if c.HTTPSAddr != "" {
			addr = ":https"
		}
	}
	ln, err := net.Listen("tcp", addr) // its error names the address
	if err != nil {
		return nil, err
	}
	cl := serve.NewListener(ln, conns, c.OnSend)
	se.Listener = cl
	se.Server.ConnContext = serve.ConnContext
	return cl, nil
}

// ServeListener has the main listener ln run, ahead of net/http, what
// sitedrop serves itself (see serve.ListenFront): site hosts' HTTP/1.x
// requests, to the front door's own HTTP/1.1 server (HTTP1), with the
// server's header and keep-alive timeouts; with terminateTLS (the serve
// command's --https) TLS too, bounded by the header timeout as net/http
// bounds it, with the server's TLSConfig (certs.Manager's, set by
// TLS.Prepare; PocketBase then serves ln as a plain listener, see the
// serve command), and site hosts' HTTP/2 connections, to the front
// door's own HTTP/2 server (SiteH2). Every other connection and request
// goes to net/http as before. A listener set before sitedrop's (ln nil:
// a test harness's) is only wrapped in a TLS listener with terminateTLS.
func (f *Front) ServeListener(se *core.ServeEvent, ln *serve.Listener, terminateTLS bool) error {
	if se.Server == nil {
		return nil
	}
	front := serve.ListenFront{HTTP1: f.HTTP1(se.Server.ReadHeaderTimeout, se.Server.IdleTimeout)}
	if terminateTLS {
		if se.Server.TLSConfig == nil || !slices.Contains(se.Server.TLSConfig.NextProtos, "h2") {
			return errors.New("terminate TLS: the server's TLS config must offer h2")
		}
		config := se.Server.TLSConfig.Clone() // net/http's HTTP/2 set-up writes to the server's
		if ln == nil {
			if se.Listener != nil {
				se.Listener = tls.NewListener(se.Listener, config)
			}
			return nil
		}
		front.TLS, front.HandshakeTimeout = config, se.Server.ReadHeaderTimeout
		front.HTTP2, front.HTTP2Names = f.SiteH2(se.Server.IdleTimeout), f.IsSiteHost
	}
	if ln != nil {
		ln.Serve(front)
	}
	return nil
}
