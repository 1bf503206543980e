package metrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Measure serves r with serve, which answers on the writer it is given
// and returns the class of the request's host, and counts the answer:
// sitedrop_http_requests_total, its latency and its body's bytes. The
// writer serve is given passes on Flush, ReadFrom (sendfile) and Hijack,
// and Unwrap for http.ResponseController. It is taken from a pool:
// measuring allocates nothing. A request whose handler panics is not
// counted (net/http or the router recovers it).
func (m *Metrics) Measure(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request) HostClass) {
	start := time.Now()
	cw := writers.Get().(*countingWriter)
	cw.ResponseWriter, cw.status, cw.bytes = w, 0, 0
	class := serve(cw, r)
	status, bytes := cw.status, cw.bytes
	cw.ResponseWriter = nil
	writers.Put(cw)
	if status == 0 {
		status = http.StatusOK // net/http's, for a handler that wrote nothing
	}
	m.observe(class, status, bytes, time.Since(start))
}

// Observe counts one answer that was not served through Measure (the
// HTTP/1.1 fast path's, see serve.HTTP1): the class of its host, its
// status, its body's bytes and the time it took, as Measure counts.
func (m *Metrics) Observe(class HostClass, status int, bytes int64, d time.Duration) {
	m.observe(class, status, bytes, d)
}

// observe counts one answer.
func (m *Metrics) observe(class HostClass, status int, bytes int64, d time.Duration) {
	if class >= numHostClasses {
		class = Unknown
	}
	m.requests[class][statusClass(status)].Inc()
	m.latency[class].Observe(d.Seconds())
	if bytes > 0 {
		m.bytes[class].Add(float64(bytes))
	}
}

// writers are the countingWriters Measure lends.
var writers = sync.Pool{New: func() any { return new(countingWriter) }}

// countingWriter is a ResponseWriter that keeps the status of its answer
// and counts the bytes of its body.
type countingWriter struct {
	http.ResponseWriter
	status int // the final status written; 0: none yet
	bytes  int64
}

// WriteHeader keeps the final status (an informational 1xx is not one).
func (w *countingWriter) WriteHeader(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the underlying writer's sendfile path (io.Copy of a
// file to the connection).
func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{w.ResponseWriter}, r)
	}
	w.bytes += n
	return n, err
}

// Flush passes on a flush (a site's Uncork, server-sent events).
func (w *countingWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes on a hijack (a WebSocket, or a refusal that closes the
// connection).
func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("metrics: %T cannot hijack: %w", w.ResponseWriter, errors.ErrUnsupported)
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writerOnly hides a writer's ReadFrom, so io.Copy does not call it back.
type writerOnly struct{ io.Writer }

// Server is the metrics listener (Listen).
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen starts serving m at Path on addr, its own listener: nothing else
// is served there, and the metrics are served nowhere else.
func Listen(addr string, m *Metrics) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, m.Handler())
	s := &Server{ln: ln, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the address the listener is bound to.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// HTTP is the listener's server, for a graceful shutdown beside the
// others.
func (s *Server) HTTP() *http.Server { return s.srv }

// Close stops the listener at once.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.ln.Close() // in case Serve has not taken it yet
	return err
}

// Shutdown stops the listener, waiting for scrapes in flight until ctx
// ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
		return fmt.Errorf("stop the metrics listener: %w", err)
	}
	return nil
}
