package serve

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTP/2 for site hosts, served by sitedrop itself.
//
// Go's HTTP/2 server spends about 25 µs of CPU on each stream beyond the
// handler: a goroutine per stream, channel hops between it, the
// connection's serve goroutine and its frame writer, a write scheduler,
// a context and a cloned header map per response. H2Server answers the
// connections whose TLS server name is a site host with none of that:
// one goroutine per connection reads the frames and answers each
// request inline, through the same handler as net/http would call
// (the front door: metrics, panic recovery, the site server), with a
// reused request and a lean ResponseWriter; what the answers write is
// gathered in one buffer and sent when no more input is buffered, so
// that the HEADERS and DATA of many streams leave in one write.
//
// A stream that cannot finish inline (the peer's flow-control window is
// spent, or it has sent h2TurnBytes and has more) goes on on the
// goroutine it runs on, and a new goroutine takes over reading the
// connection: so a large file or a slow reader never holds up the
// connection's other streams, and the common answer costs no goroutine.
// A gate form post (the one request a site host takes a body for) waits
// for its body, within the gate's limit, and is answered on a goroutine
// of its own (its password check is slow on purpose).
//
// A request whose :authority is not a site host (a browser reusing the
// connection for another name its certificate covers) is answered 421
// Misdirected Request, which has the client retry on a connection of
// its own (RFC 9110, 15.5.20): the web host is never served here.

// Defaults and limits of H2Server (see H2Options).
const (
	// h2DefaultMaxStreams is the SETTINGS_MAX_CONCURRENT_STREAMS
	// advertised (net/http's default is 250 too).
	h2DefaultMaxStreams = 250
	// h2DefaultMaxHeaderBytes is net/http's DefaultMaxHeaderBytes: the
	// main server does not set its own, so its HTTP/2 takes as much.
	h2DefaultMaxHeaderBytes = http.DefaultMaxHeaderBytes
	// h2DefaultWriteTimeout bounds one write to the socket: a peer that
	// stops reading loses its connection after it.
	h2DefaultWriteTimeout = 30 * time.Second
	// h2SettingsTimeout is how long the peer has to acknowledge our
	// SETTINGS, and to send its preface.
	h2SettingsTimeout = 10 * time.Second
	// h2LingerTimeout is how long a connection that sent GOAWAY keeps
	// reading (and discarding) before it closes, so that the peer
	// reads the GOAWAY before a reset.
	h2LingerTimeout = time.Second
	// h2MaxFrame is the largest frame read (SETTINGS_MAX_FRAME_SIZE,
	// its default) and the largest DATA frame sent.
	h2MaxFrame = 16384
	// h2InitialWindow is the flow-control window of each stream and of
	// the connection, both ways, until SETTINGS change it (RFC 9113's
	// default).
	h2InitialWindow = 65535
	// h2MaxWindow is the largest window (2^31-1).
	h2MaxWindow = 1<<31 - 1
	// h2HoldMax is how much of a body is held before the response's
	// headers are sent: net/http's HTTP/2 handler buffer, so that a
	// body this small gets a content-length and a sniffed content-type
	// as net/http gives it.
	h2HoldMax = 4 << 10
	// h2TurnBytes is the most one stream sends inline before it goes on
	// on its own goroutine and lets the connection serve its other
	// streams.
	h2TurnBytes = 256 << 10
	// h2WriteBuffer is the size at which gathered frames are written
	// out before the input runs dry.
	h2WriteBuffer = 32 << 10
	// h2ReadBuffer buffers the connection's input.
	h2ReadBuffer = 8 << 10
	// h2MaxBody is the most of a request body kept: a gate form post
	// (maxGateForm) and one byte to tell it is too long.
	h2MaxBody = maxGateForm + 1
	// Rate limits, per connection, as token buckets: frames that ask
	// for an answer (PING, SETTINGS) and resets (RST_STREAM received,
	// and the stream errors the peer causes). Past them: GOAWAY
	// ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487; ping and settings
	// floods, CVE-2019-9512 and -9515).
	h2ControlBurst, h2ControlRate = 100, 20
	h2ResetBurst, h2ResetRate     = 200, 100
)

// H2Options configure an H2Server. SiteHost and Handler are required.
type H2Options struct {
	// SiteHost tells whether a request's host (its :authority) is a
	// site host, which this server answers: sites.HostSplit.SiteLabel.
	SiteHost func(host string) bool
	// Handler answers the requests to site hosts: the main server's
	// handler for them (the front door, with its metrics and panic
	// recovery), so that every answer is the one net/http would send.
	Handler http.Handler
	// Misdirected answers a request whose host is not a site host;
	// nil: Misdirected (421).
	Misdirected http.Handler
	// Logger receives the panics that escape Handler; nil: none.
	Logger *slog.Logger
	// MaxConcurrentStreams is advertised to the peer; more open
	// streams are refused (REFUSED_STREAM). Default 250.
	MaxConcurrentStreams uint32
	// MaxHeaderBytes bounds a request's header list (HPACK's size: the
	// names, values and 32 bytes per field); past it the request is
	// answered 431. Default net/http's DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// IdleTimeout closes a connection without streams after this long
	// without a frame. Default one minute (the main server's).
	IdleTimeout time.Duration
	// WriteTimeout bounds each write to the socket, and a stream's wait
	// for the peer's flow-control window. Default 30 s.
	WriteTimeout time.Duration
	// HeaderTimeout bounds the time a header block split over
	// CONTINUATION frames takes to end. Default 10 s (the main
	// server's ReadHeaderTimeout).
	HeaderTimeout time.Duration
	// BodyTimeout bounds each request's wait for its body (a gate
	// form's), from its HEADERS; past it the connection closes.
	// Default the gate's, 10 s.
	BodyTimeout time.Duration
}

// H2Server serves HTTP/2 connections whose TLS server name is a site
// host (see the top of this file). It is a ConnServer; Shutdown and
// Close end its connections.
type H2Server struct {
	o           H2Options
	misdirected http.Handler
	maxHeader   uint32
	ctx         context.Context
	cancel      context.CancelFunc

	mu      sync.Mutex
	conns   map[*h2Conn]struct{}
	closing bool
	wg      sync.WaitGroup
}

var _ ConnServer = (*H2Server)(nil)

// NewH2Server returns an H2Server answering with o.Handler. It panics
// without o.SiteHost or o.Handler.
func NewH2Server(o H2Options) *H2Server {
	if o.SiteHost == nil || o.Handler == nil {
		panic("serve: NewH2Server needs SiteHost and Handler")
	}
	if o.MaxConcurrentStreams == 0 {
		o.MaxConcurrentStreams = h2DefaultMaxStreams
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = h2DefaultMaxHeaderBytes
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = h2DefaultWriteTimeout
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = defaultGateBodyTimeout
	}
	s := &H2Server{o: o, misdirected: o.Misdirected, conns: map[*h2Conn]struct{}{}}
	if s.misdirected == nil {
		s.misdirected = http.HandlerFunc(Misdirected)
	}
	// net/http advertises MaxHeaderBytes plus room for ten fields' overhead
	s.maxHeader = uint32(min(o.MaxHeaderBytes+320, 1<<30))
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Misdirected answers a request this connection does not serve (its
// host is not a site host): 421 Misdirected Request with {"error": ...},
// not cached. The client retries it on a connection of its own.
func Misdirected(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h["Cache-Control"] = noStoreValue
	w.WriteHeader(http.StatusMisdirectedRequest)
	_, _ = io.WriteString(w, `{"error":"misdirected request: this connection serves sites only"}`+"\n")
}

// ServeConn serves c, a connection whose TLS handshake is done with ALPN
// "h2" (a *tls.Conn; any net.Conn speaking HTTP/2 works), to its end,
// and closes it. It always returns nil: it never hands a connection
// back.
func (s *H2Server) ServeConn(nc net.Conn) (handoff net.Conn) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		nc.Close()
		return nil
	}
	c := newH2Conn(s, nc)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	c.serve()
	<-c.done
	return nil
}

// Shutdown stops taking connections, sends each one GOAWAY and waits
// for the streams in flight to finish and the connections to close, or
// ctx to end: then it closes them (Close) and returns ctx's error.
func (s *H2Server) Shutdown(ctx context.Context) error {
	conns := s.stopTaking()
	for _, c := range conns {
		c.shutdown()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.Close()
		<-done
		return ctx.Err()
	}
}

// stopTaking has the server take no more connections and returns those
// it serves.
func (s *H2Server) stopTaking() []*h2Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	conns := make([]*h2Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

// Close stops taking connections and closes every one at once; the
// handlers' context is cancelled.
func (s *H2Server) Close() error {
	conns := s.stopTaking()
	for _, c := range conns {
		c.closeConn()
	}
	s.cancel()
	return nil
}

// connTLS is the state of a connection's TLS session, or nil.
func connTLS(nc net.Conn) *tls.ConnectionState {
	switch c := nc.(type) {
	case *tls.Conn:
		st := c.ConnectionState()
		return &st
	case interface{ TLS() *tls.ConnectionState }:
		return c.TLS()
	}
	return nil
}
