package serve

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lineServer is a ConnServer for the tests: it reads the connection's
// first line; "mine" it answers itself ("served\n") and closes, anything
// else it hands to net/http with the line put back.
type lineServer struct {
	served, handed atomic.Int32
	// hold, when set, keeps a served connection open until it closes.
	hold chan struct{}
	// unread: hand every connection over before reading from it.
	unread bool
}

func (s *lineServer) ServeConn(c net.Conn) net.Conn {
	if s.unread {
		s.handed.Add(1)
		return c
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil
	}
	if line == "mine\n" {
		s.served.Add(1)
		io.WriteString(c, "served\n")
		if s.hold != nil {
			<-s.hold
		}
		c.Close()
		return nil
	}
	s.handed.Add(1)
	rest, _ := br.Peek(br.Buffered())
	return NewReplayConn(c, append([]byte(line), rest...))
}

// serveFront serves ln (with f) to an http.Server whose handler tells
// the request's scheme, and returns the server.
func serveFront(t *testing.T, ln net.Listener, f ListenFront) *http.Server {
	t.Helper()
	l := NewListener(ln, nil, nil)
	l.Serve(f)
	srv := &http.Server{
		ConnContext: ConnContext,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			RestoreTLS(r)
			scheme := "http"
			if r.TLS != nil {
				scheme = "https " + r.TLS.ServerName
			}
			io.WriteString(w, r.Proto+" "+scheme+" "+r.URL.Path)
		}),
	}
	if f.TLS != nil {
		srv.TLSConfig = f.TLS.Clone()
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestListenFrontPlainHandsOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &lineServer{}
	serveFront(t, ln, ListenFront{HTTP1: cs})

	// a connection the ConnServer answers itself
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "mine\n")
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "served\n" {
		t.Fatalf("ConnServer's answer = %q", got)
	}

	// one it hands over: net/http reads the request from its first byte
	res, err := http.Get("http://" + ln.Addr().String() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "HTTP/1.1 http /x" {
		t.Fatalf("net/http's answer = %q", body)
	}
	if cs.served.Load() != 1 || cs.handed.Load() != 1 {
		t.Fatalf("served %d, handed %d; want 1 and 1", cs.served.Load(), cs.handed.Load())
	}
}

// testTLSConfig is a self-signed certificate for *.sites.test, offering
// h2 and http/1.1.
func testTLSConfig(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		DNSNames:  []string{"*.sites.test", "web.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}},
		NextProtos:   []string{"h2", "http/1.1"},
	}, roots
}

func TestListenFrontTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	config, roots := testTLSConfig(t)
	h1, h2 := &lineServer{}, &lineServer{unread: true}
	serveFront(t, ln, ListenFront{
		TLS: config, HandshakeTimeout: time.Second,
		HTTP1: h1, HTTP2: h2,
		HTTP2Names: func(name string) bool { return strings.HasSuffix(name, ".sites.test") },
	})
	addr := ln.Addr().String()
	client := func(name string, h2 bool) *http.Client {
		tr := &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: name},
			ForceAttemptHTTP2: h2,
		}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	get := func(c *http.Client) string {
		t.Helper()
		res, err := c.Get("https://" + addr + "/p")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}

	// HTTP/1.1 over TLS: the HTTP/1 ConnServer first, then net/http with
	// the request replayed and its TLS state restored
	if got := get(client("web.test", false)); got != "HTTP/1.1 https web.test /p" {
		t.Errorf("HTTP/1.1 over TLS = %q", got)
	}
	if h1.handed.Load() != 1 {
		t.Errorf("HTTP/1 ConnServer saw %d connections, want 1", h1.handed.Load())
	}
	// h2 to a name HTTP2Names refuses: net/http's HTTP/2 server, the
	// ConnServer never sees it
	if got := get(client("web.test", true)); got != "HTTP/2.0 https web.test /p" {
		t.Errorf("h2 to the web host = %q", got)
	}
	if n := h2.served.Load() + h2.handed.Load(); n != 0 {
		t.Errorf("HTTP/2 ConnServer saw %d connections of the web host", n)
	}
	// h2 to a site host: the HTTP/2 ConnServer (which hands it over
	// here, unread)
	if got := get(client("a.sites.test", true)); got != "HTTP/2.0 https a.sites.test /p" {
		t.Errorf("h2 to a site host = %q", got)
	}
	if h2.handed.Load() != 1 {
		t.Errorf("HTTP/2 ConnServer saw %d site connections, want 1", h2.handed.Load())
	}

	// a client that never finishes its handshake is cut at the timeout
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("a silent client's connection was not closed at the handshake timeout: %v", err)
	}
}

// heldFront serves a loopback listener whose front hands connections to
// cs (a lineServer that holds those it serves), ahead of a net/http server
// closed at the test's end.
func heldFront(t *testing.T, cs *lineServer) (*Listener, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(ln, nil, nil)
	l.Serve(ListenFront{HTTP1: cs})
	srv := &http.Server{Handler: http.NotFoundHandler()}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln
}

func TestListenFrontShutdownConns(t *testing.T) {
	cs := &lineServer{hold: make(chan struct{})}
	l, ln := heldFront(t, cs)

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "mine\n")
	if line, _ := bufio.NewReader(c).ReadString('\n'); line != "served\n" {
		t.Fatalf("answer = %q", line)
	}
	// the server's Shutdown closes the listener; the ConnServer holds
	// the connection: at the deadline it is closed
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := l.ShutdownConns(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ShutdownConns = %v, want the deadline", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after shutdown = %v, want EOF", err)
	}
	close(cs.hold)
	// and the listener accepts no more
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after shutdown = %v", err)
	}
}

// flakyListener fails its first Accept with a temporary error, as a
// listener out of file descriptors does (EMFILE), then accepts.
type flakyListener struct {
	net.Listener
	failed atomic.Bool
}

// errTemporary is EMFILE's kind of error: temporary, not a timeout.
type errTemporary struct{}

func (errTemporary) Error() string   { return "accept: too many open files" }
func (errTemporary) Timeout() bool   { return false }
func (errTemporary) Temporary() bool { return true }

func (l *flakyListener) Accept() (net.Conn, error) {
	if !l.failed.Swap(true) {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: errTemporary{}}
	}
	return l.Listener.Accept()
}

// TestListenFrontTemporaryAcceptError: a temporary Accept error (EMFILE
// under a flood of connections) does not end the listener: it takes
// connections again once it can, as net/http's own loop does.
func TestListenFrontTemporaryAcceptError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFront(t, &flakyListener{Listener: ln}, ListenFront{HTTP1: &lineServer{unread: true}})
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get("http://" + ln.Addr().String() + "/after")
	if err != nil {
		t.Fatalf("after a temporary accept error: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "HTTP/1.1 http /after" {
		t.Fatalf("net/http's answer = %q", body)
	}
}

// TestListenFrontShutdownWhileAccepting: the drain starts while the
// listener still accepts (the server's Shutdown closes it beside
// ShutdownConns, not before): connections accepted meanwhile are counted
// in the drain without a race (under -race, a wait on the drain's count
// begun before a connection's tracking was one), and the drain ends when
// they have.
func TestListenFrontShutdownWhileAccepting(t *testing.T) {
	cs := &lineServer{hold: make(chan struct{})}
	l, ln := heldFront(t, cs)

	// clients keep connecting, each held by the ConnServer
	stop := make(chan struct{})
	dialed := make(chan struct{})
	go func() {
		defer close(dialed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				return // the listener closed
			}
			defer c.Close()
			io.WriteString(c, "mine\n")
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(50 * time.Millisecond) // no synchronisation with the accepts on purpose

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- l.ShutdownConns(ctx) }()
	time.Sleep(50 * time.Millisecond) // accepting goes on during the drain
	l.Close()
	close(stop)
	<-dialed
	select {
	case err := <-drained:
		t.Fatalf("the drain ended (%v) with connections still held", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(cs.hold)
	if err := <-drained; err != nil {
		t.Fatalf("ShutdownConns = %v, want nil once the held connections ended", err)
	}
	if cs.served.Load() == 0 {
		t.Fatal("no connection was served during the test")
	}
}
