package hooks

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/serve"
)

// dialFrom connects to addr from the loopback address src (any of
// 127.0.0.0/8 is this machine).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	c, err := tryDial(t, src, addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	return c
}

// tryDial is dialFrom that returns the error: a connection refused at
// once may be reset before the dial returns.
func tryDial(t *testing.T, src, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// eventually retries f until it succeeds or 10 s have passed: a place is
// freed once the server has seen its connection end.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ask sends GET path with host over c and reads the answer. An error that
// is a timeout means the server kept the connection and did not answer.
func ask(c net.Conn, host, path string) (*http.Response, string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host); err != nil {
		return nil, "", err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodGet})
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res, string(body), err
}

// mustServe asks over c and fails unless an answer comes.
func mustServe(t *testing.T, c net.Conn, host, what string) {
	t.Helper()
	if _, _, err := ask(c, host, "/"); err != nil {
		t.Fatalf("%s: not served: %v", what, err)
	}
}

// mustRefuse connects from src and asks, and fails unless the server
// closed the connection at once (a timeout means it was kept open).
func mustRefuse(t *testing.T, src, addr, host, what string) {
	t.Helper()
	c, err := tryDial(t, src, addr)
	if err == nil {
		_, _, err = ask(c, host, "/")
	}
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("%s: not closed at once (%v)", what, err)
	}
}

// eventuallyServed dials from src until a connection is served: a place
// is freed once the server has seen the previous connection close.
func eventuallyServed(t *testing.T, src, addr, host, what string) {
	t.Helper()
	eventually(t, what, func() error {
		c, err := tryDial(t, src, addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, _, err = ask(c, host, "/")
		return err
	})
}

// TestConnLimitPerIP: the main listener closes a client's connection over
// its cap at once, serves other clients meanwhile, and frees a place when a
// connection closes, whoever closes it (a handler that hijacked it too).
func TestConnLimitPerIP(t *testing.T) {
	release := make(chan struct{})
	var hijacks sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hijack" {
			io.WriteString(w, "ok")
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		hijacks.Add(1)
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		brw.Flush()
		go func() {
			defer hijacks.Done()
			<-release
			c.Close()
		}()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(serve.NewListener(ln, serve.NewConnLimit(2, nil), nil))
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	a1, a2 := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	mustServe(t, a1, "web.test", "first connection")
	mustServe(t, a2, "web.test", "second connection")
	mustRefuse(t, "127.0.0.1", addr, "web.test", "third connection from the same address")
	mustServe(t, dialFrom(t, "127.0.0.2", addr), "web.test", "another address while the first is at its cap")
	mustServe(t, a2, "web.test", "a kept connection after the refusal")
	a1.Close()
	eventuallyServed(t, "127.0.0.1", addr, "web.test", "after one connection closed")

	// A hijacked connection holds its place until its handler closes it.
	h1 := dialFrom(t, "127.0.0.3", addr)
	if res, _, err := ask(h1, "web.test", "/hijack"); err != nil || res.StatusCode != 200 {
		t.Fatalf("hijack: %v", err)
	}
	h1.Close() // the server side stays open: the handler holds it
	mustServe(t, dialFrom(t, "127.0.0.3", addr), "web.test", "beside a hijacked connection")
	mustRefuse(t, "127.0.0.3", addr, "web.test", "over the cap with a hijacked connection")
	close(release)
	hijacks.Wait()
	eventuallyServed(t, "127.0.0.3", addr, "web.test", "after the hijacked connection closed")
}

// TestConnLimitTLS: under TLS, failed handshakes free their place, and an
// HTTP/2 connection holds one until it closes.
func TestConnLimitTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	ts.Listener = serve.NewListener(ts.Listener, serve.NewConnLimit(1, nil), nil)
	ts.Config.ConnContext = serve.ConnContext
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()

	// Each failed handshake reaches the server (so holds the only place)
	// and must free it for the next.
	for i := range 3 {
		eventually(t, fmt.Sprintf("plain HTTP to TLS #%d", i), func() error {
			// net/http answers 400 and closes
			c, err := tryDial(t, "127.0.0.1", addr)
			if err != nil {
				return err
			}
			defer c.Close()
			res, _, err := ask(c, "web.test", "/")
			if err == nil && res.StatusCode != 400 {
				t.Fatalf("plain HTTP to TLS: %d", res.StatusCode)
			}
			return err
		})
		eventually(t, fmt.Sprintf("untrusted handshake #%d", i), func() error {
			// the client does not trust the certificate and gives up
			_, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{ServerName: "example.com"})
			var ve *tls.CertificateVerificationError
			if errors.As(err, &ve) {
				return nil
			}
			return fmt.Errorf("handshake did not reach the certificate: %v", err)
		})
	}
	h2 := ts.Client()
	h2.Timeout = 10 * time.Second
	get := func(c *http.Client) error {
		res, err := c.Get(ts.URL)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && string(b) != "HTTP/2.0" {
			t.Fatalf("proto %s, want HTTP/2.0", b)
		}
		return err
	}
	eventually(t, "HTTP/2 after failed handshakes", func() error { return get(h2) })
	other := &http.Client{Timeout: 10 * time.Second, Transport: h2.Transport.(*http.Transport).Clone()}
	if err := get(other); err == nil {
		t.Fatal("a second connection beside an idle HTTP/2 one was served; want it closed")
	}
	other.CloseIdleConnections()
	h2.CloseIdleConnections()
	eventually(t, "after the HTTP/2 connection closed", func() error { return get(other) })
}

// TestConnLimitPlainListener: the plain HTTP listener under --https counts
// its connections the same way.
func TestConnLimitPlainListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(serve.LimitListener(ln, serve.NewConnLimit(1, nil)))
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	c := dialFrom(t, "127.0.0.1", addr)
	mustServe(t, c, "web.test", "first connection")
	mustRefuse(t, "127.0.0.1", addr, "web.test", "second connection")
	mustServe(t, dialFrom(t, "127.0.0.2", addr), "web.test", "another address")
	c.Close()
	eventuallyServed(t, "127.0.0.1", addr, "web.test", "after the first closed")
}

// TestServeConnectionTimeouts: through the serve command, a client that
// sends half a request header, or keeps a connection idle, is cut after
// the header or keep-alive timeout (short ones here, through the knobs).
func TestServeConnectionTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := loopback(freePort(t))
	startServe(t, copyData(t, templates.bare(t)), func(c *Config) {
		c.Serve.HeaderTimeout = 300 * time.Millisecond
		c.Serve.IdleTimeout = 300 * time.Millisecond
	}, addr, "--http", addr)

	cut := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection was kept open", what)
		}
	}
	half := dialFrom(t, "127.0.0.1", addr)
	io.WriteString(half, "GET /api/health HTTP/1.1\r\nHost: web.test\r\n")
	silent := dialFrom(t, "127.0.0.1", addr)
	idle := dialFrom(t, "127.0.0.1", addr)
	if res, _, err := ask(idle, "web.test", "/api/health"); err != nil || res.StatusCode != 200 {
		t.Fatalf("health: %v", err)
	}
	cut(half, "half a header")
	cut(silent, "a connection that sends nothing")
	cut(idle, "an idle keep-alive connection")
}

// TestServeConnectionCap: through the serve command, --max-conns-per-ip
// closes a client's connection over the cap while others are served, and
// malformed and www hosts are answered before the API.
func TestServeConnectionCap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := loopback(freePort(t))
	_, port, _ := net.SplitHostPort(addr)
	startServe(t, copyData(t, templates.fixtures(t)), func(c *Config) {
		c.SitesDomain = c.Domain // the default: sites under the web host
	}, addr, "--http", addr, "--max-conns-per-ip", "2")
	web := "web.test:" + port
	// from addresses startServe's probe did not use: its place may not be
	// free yet

	a1, a2 := dialFrom(t, "127.0.0.4", addr), dialFrom(t, "127.0.0.4", addr)
	mustServe(t, a1, web, "first connection")
	mustServe(t, a2, web, "second connection")
	mustRefuse(t, "127.0.0.4", addr, web, "third connection")
	b := dialFrom(t, "127.0.0.5", addr)
	mustServe(t, b, web, "another address")

	for _, c := range []struct {
		host, path   string
		status       int
		location     string
		body         string
		notInTheBody string
	}{
		{"alice-site.web.test:" + port + ":80", "/api/health", 400, "", "Invalid Host header", "API is healthy"},
		{"alice-site.web.test.:" + port, "/", 400, "", "Invalid Host header", "alice"},
		{"web.test.:" + port, "/_/", 400, "", "Invalid Host header", "PocketBase"},
		{"alice-site.web.test:" + port, "/", 200, "", "alice", ""},
		{"WWW.web.test:" + port, "/login?x=1", 308, "http://web.test:" + port + "/login?x=1", "", ""},
	} {
		res, body, err := ask(b, c.host, c.path)
		if err != nil {
			t.Fatalf("Host %q: %v", c.host, err)
		}
		if res.StatusCode != c.status || res.Header.Get("Location") != c.location || !strings.Contains(body, c.body) ||
			(c.notInTheBody != "" && strings.Contains(body, c.notInTheBody)) {
			t.Errorf("Host %q %s = %d %q %q, want %d %q %q", c.host, c.path, res.StatusCode, res.Header.Get("Location"), body, c.status, c.location, c.body)
		}
	}
	a1.Close()
	eventuallyServed(t, "127.0.0.4", addr, web, "after one connection closed")
}
