package serve

import "net"

// ConnServer serves, ahead of net/http, the connections of the main
// listener that sitedrop answers itself: HTTP/1.1 requests to site hosts,
// and HTTP/2 connections to a site host (by its TLS server name). A
// connection it meets something on that it does not answer itself (a
// host that is not a site's, a request with a body, an upgrade, anything
// its strict parser does not fully understand) goes to net/http, which
// answers it as before.
type ConnServer interface {
	// ServeConn serves c's requests. It returns nil when it has served c
	// to its end (and closed it), or the connection to hand to net/http:
	// c itself when it read nothing of it, else c with the bytes it has
	// read put back in front (see ReplayConn), so that net/http reads
	// the request it did not answer from its first byte.
	ServeConn(c net.Conn) (handoff net.Conn)
}
