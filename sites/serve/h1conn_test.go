package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/store"
)

// h1Site is the site of the HTTP/1.1 tests: pages, assets with a gzip
// variant, a large file (sent with sendfile), a 404 page, rules.
func h1Site(t testing.TB, withRules bool) (*Server, *sites.Site) {
	t.Helper()
	blobs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) (string, int64) {
		h := store.HashBytes(b)
		if err := blobs.Put(context.Background(), h, b); err != nil {
			t.Fatal(err)
		}
		return h, int64(len(b))
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	files := sites.Manifest{}
	add := func(p, typ string, b []byte, withGzip bool) {
		h, n := put(b)
		e := sites.ManifestEntry{Hash: h, Size: n, Type: typ}
		if withGzip {
			gh, gn := put(gz(b))
			e.Encoded = map[string]sites.EncodedEntry{sites.EncodingGzip: {Hash: gh, Size: gn}}
		}
		files[p] = e
	}
	page := []byte("<!doctype html><title>home</title>" + strings.Repeat("<p>hello, world</p>", 500))
	add("index.html", htmlType, page, true)
	add("about.html", htmlType, []byte("<p>about</p>"), false)
	add("docs/index.html", htmlType, []byte("<p>docs</p>"), false)
	add("app.3f2a9c1b.js", "text/javascript; charset=utf-8", bytes.Repeat([]byte("var a = 1;\n"), 9000), true)
	add("logo.png", "image/png", bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 1, 2, 3}, 4000), false)
	add("tiny.txt", "text/plain; charset=utf-8", []byte("tiny"), false)
	add("big.bin", "application/octet-stream", bytes.Repeat([]byte("0123456789abcdef"), (maxCachedFile+4096)/16), false)
	add("404.html", htmlType, []byte("<p>custom not found</p>"), false)
	if withRules {
		add("_redirects", "text/plain", []byte("/old /about 301\n/forced /tiny.txt 302!\n"), false)
		add("_headers", "text/plain", []byte("/secret.txt\n  X-Frame-Options: DENY\n"), false)
		add("secret.txt", "text/plain; charset=utf-8", []byte("secret"), false)
	}
	site := &sites.Site{ID: "site1", Slug: "demo", Status: sites.StatusActive, Files: files}
	srv := NewServer(func(slug string) (*sites.Site, error) {
		if slug != site.Slug {
			return nil, sites.ErrNotFound
		}
		cp := *site
		return &cp, nil
	}, blobs)
	return srv, site
}

// h1TestSiteLabel is the front door's SiteLabel for the tests: the hosts
// under sites.test.
func h1TestSiteLabel(host string) (string, bool) {
	h := strings.ToLower(host)
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	label, ok := strings.CutSuffix(h, ".sites.test")
	if !ok {
		return "", false
	}
	if strings.Contains(label, ".") {
		return "", true
	}
	return label, true
}

// h1Harness serves a loopback listener with HTTP1, and the connections
// it hands off with net/http (the same handler as the reference server).
type h1Harness struct {
	t       testing.TB
	addr    string
	ref     string // the reference: net/http alone
	fastN   atomic.Int64
	handoff atomic.Int64
	// accepted counts the connections accepted, active the ServeConn
	// calls running (atomics, not a WaitGroup: a test waits for them
	// while the accept loop may still add one)
	accepted, active atomic.Int64
}

// fast is the number of fast answers once every connection's ServeConn
// has returned (their clients closed them): a fast answer is counted
// after its bytes are written, so a client can read it before the count
// moves. It waits up to 10 s.
func (hh *h1Harness) fast() int64 {
	hh.t.Helper()
	for end := time.Now().Add(10 * time.Second); hh.active.Load() > 0; {
		if time.Now().After(end) {
			hh.t.Fatalf("%d connections still served 10 s after their clients closed them", hh.active.Load())
		}
		time.Sleep(time.Millisecond)
	}
	return hh.fastN.Load()
}

// awaitCount waits up to 5 s for n to reach want (a server counts an
// answer after writing it: maybe after its client read it), and returns
// its value then.
func awaitCount(n *atomic.Int64, want int64) int64 {
	for end := time.Now().Add(5 * time.Second); n.Load() < want && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	return n.Load()
}

// h1SiteHandler is net/http's handler of the tests: site hosts to srv,
// anything else a plain answer of the "web host".
func h1SiteHandler(srv *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if label, ok := h1TestSiteLabel(r.Host); ok {
			srv.ServeSite(w, r, label)
			return
		}
		fmt.Fprintf(w, "web %s %s\n", r.Method, r.URL)
	})
}

func newH1Harness(t testing.TB, srv *Server, fast bool, tune func(*HTTP1Options)) *h1Harness {
	t.Helper()
	hh := &h1Harness{t: t}
	o := HTTP1Options{
		SiteLabel: h1TestSiteLabel,
		Serve:     srv.ServeSite,
		Count:     func(int, int64, time.Duration) { hh.fastN.Add(1) },
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if fast {
		o.Sites = srv
	}
	if tune != nil {
		tune(&o)
	}
	h1 := NewHTTP1(o)
	handler := h1SiteHandler(srv)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	handed := &h1ChanListener{ch: make(chan net.Conn), addr: ln.Addr(), done: make(chan struct{})}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: o.HeaderTimeout, IdleTimeout: o.IdleTimeout}
	go hs.Serve(handed)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hh.accepted.Add(1)
			hh.active.Add(1)
			go func() {
				defer hh.active.Add(-1)
				if hc := h1.ServeConn(c); hc != nil {
					hh.handoff.Add(1)
					select {
					case handed.ch <- hc:
					case <-handed.done:
						hc.Close()
					}
				}
			}()
		}
	}()
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := &http.Server{Handler: handler}
	go rs.Serve(rln)
	t.Cleanup(func() {
		ln.Close()
		handed.Close()
		hs.Close()
		rs.Close()
	})
	hh.addr, hh.ref = ln.Addr().String(), rln.Addr().String()
	return hh
}

// h1ChanListener is the listener of the handed-off connections.
type h1ChanListener struct {
	ch   chan net.Conn
	addr net.Addr
	done chan struct{}
	once sync.Once
}

func (l *h1ChanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *h1ChanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}
func (l *h1ChanListener) Addr() net.Addr { return l.addr }

// h1RawExchange sends raw on a new connection to addr and reads n answers
// (to requests with the given methods), returning each answer's bytes as
// sent, the Date value replaced by "X".
func h1RawExchange(t testing.TB, addr, raw string, methods ...string) []string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return h1ReadAnswers(t, c, methods...)
}

var (
	h1DateLineRE = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)
	// h1BoundaryRE: a multipart answer's boundary is random
	h1BoundaryRE = regexp.MustCompile(`[0-9a-f]{60}`)
)

func h1ReadAnswers(t testing.TB, c net.Conn, methods ...string) []string {
	t.Helper()
	var rec bytes.Buffer
	br := bufio.NewReader(io.TeeReader(c, &rec))
	var out []string
	used := 0
	for _, m := range methods {
		res, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("answer %d: %v (read %q)", len(out)+1, err, rec.Bytes())
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			t.Fatalf("answer %d body: %v", len(out)+1, err)
		}
		res.Body.Close()
		end := rec.Len() - br.Buffered()
		a := h1DateLineRE.ReplaceAllString(string(rec.Bytes()[used:end]), "\r\nDate: X\r\n")
		out = append(out, h1BoundaryRE.ReplaceAllString(a, "B"))
		used = end
	}
	return out
}

// h1Request is one request of the equivalence table.
type h1Request struct {
	name, method, target, headers string
	// fast: the fast path answers it.
	fast bool
}

func (r h1Request) raw(host string) string {
	m := r.method
	if m == "" {
		m = "GET"
	}
	proto := "HTTP/1.1"
	if strings.HasPrefix(r.headers, "HTTP/1.0\r\n") {
		proto, r.headers = "HTTP/1.0", strings.TrimPrefix(r.headers, "HTTP/1.0\r\n")
	}
	return m + " " + r.target + " " + proto + "\r\nHost: " + host + "\r\n" + r.headers + "\r\n"
}

func h1Requests(etag string) []h1Request {
	return []h1Request{
		{name: "page", target: "/", fast: true},
		{name: "page gzip", target: "/", headers: "Accept-Encoding: gzip, deflate, br\r\n", fast: true},
		{name: "page identity only", target: "/", headers: "Accept-Encoding: gzip;q=0\r\n", fast: true},
		{name: "page head", method: "HEAD", target: "/", headers: "Accept-Encoding: gzip\r\n", fast: true},
		{name: "page 304", target: "/", headers: "If-None-Match: " + etag + "\r\n", fast: true},
		{name: "page 304 weak", target: "/", headers: "If-None-Match: \"x\", W/" + etag + "\r\n", fast: true},
		{name: "page no match", target: "/", headers: "If-None-Match: \"nope\"\r\n", fast: true},
		{name: "page query", target: "/?utm=1&b=%20", fast: true},
		{name: "script", target: "/app.3f2a9c1b.js", headers: "Accept-Encoding: gzip\r\n", fast: true},
		{name: "image", target: "/logo.png", fast: true},
		{name: "tiny", target: "/tiny.txt", fast: true},
		{name: "clean url", target: "/about", fast: true},
		{name: "dir", target: "/docs/", fast: true},
		{name: "connection close", target: "/tiny.txt", headers: "Connection: close\r\n", fast: true},
		{name: "http/1.0", target: "/tiny.txt", headers: "HTTP/1.0\r\n", fast: true},
		{name: "many headers", target: "/tiny.txt", headers: "User-Agent: Mozilla/5.0\r\nAccept: */*\r\nAccept-Language: en\r\nReferer: https://example.com/\r\nX-A: 1\r\nX-A: 2\r\n", fast: true},
		{name: "upper-case host", target: "/tiny.txt", fast: true},

		{name: "range", target: "/logo.png", headers: "Range: bytes=0-99\r\n"},
		{name: "ranges", target: "/tiny.txt", headers: "Range: bytes=0-0,2-3\r\n"},
		{name: "range unsatisfiable", target: "/tiny.txt", headers: "Range: bytes=100-\r\n"},
		{name: "big file", target: "/big.bin"},
		{name: "big file head", method: "HEAD", target: "/big.bin"},
		{name: "redirect index.html", target: "/index.html?x=1"},
		{name: "redirect docs", target: "/docs"},
		{name: "unclean", target: "/a/../about"},
		{name: "escaped", target: "/ab%6fut"},
		{name: "missing", target: "/nope"},
		{name: "missing head", method: "HEAD", target: "/nope"},
		{name: "long path", target: "/" + strings.Repeat("a", maxRequestPath+1)},
		{name: "rule redirect", target: "/old"},
		{name: "forced rule", target: "/forced"},
		{name: "rule headers", target: "/secret.txt"},
		{name: "rule headers 404", target: "/secret.txt/x"},
	}
}

// TestH1MatchesNetHTTP is the byte-equivalence table: for every request,
// the fast path (b), the general path alone (a) and net/http with the
// same site handler answer the same bytes (the Date aside), and the
// fast path answers those it should.
func TestH1MatchesNetHTTP(t *testing.T) {
	srv, site := h1Site(t, true)
	etag := `"` + site.Files["index.html"].Hash + `"`
	fast := newH1Harness(t, srv, true, nil)
	general := newH1Harness(t, srv, false, nil)
	for _, rq := range h1Requests(etag) {
		host := "demo.sites.test"
		if rq.name == "upper-case host" {
			host = "DEMO.Sites.Test:80"
		}
		m := rq.method
		if m == "" {
			m = "GET"
		}
		raw := rq.raw(host)
		want := h1RawExchange(t, fast.ref, raw, m)[0]
		before := fast.fast()
		gotFast := h1RawExchange(t, fast.addr, raw, m)[0]
		gotGeneral := h1RawExchange(t, general.addr, raw, m)[0]
		if gotFast != want {
			t.Errorf("%s: fast path answered\n%.600q\nnet/http\n%.600q", rq.name, gotFast, want)
		}
		if gotGeneral != want {
			t.Errorf("%s: general path answered\n%.600q\nnet/http\n%.600q", rq.name, gotGeneral, want)
		}
		if took := fast.fast() > before; took != rq.fast {
			t.Errorf("%s: fast answer %v, want %v", rq.name, took, rq.fast)
		}
	}
	if n := fast.handoff.Load() + general.handoff.Load(); n != 0 {
		t.Errorf("%d connections handed off", n)
	}
}

// TestH1KeepAlivePipelined: requests pipelined on one connection are
// answered in order, fast and general ones mixed, then a request the
// fast path does not take (a POST) and those after it go to net/http on
// the same connection, their bytes put back.
func TestH1KeepAlivePipelined(t *testing.T) {
	srv, _ := h1Site(t, false)
	hh := newH1Harness(t, srv, true, nil)
	host := "demo.sites.test"
	reqs := []string{
		"GET /tiny.txt HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"GET /nope HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"HEAD /about HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"GET /logo.png HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: web.test\r\nContent-Length: 5\r\n\r\nhello",
		"GET /tiny.txt HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
	}
	methods := []string{"GET", "GET", "HEAD", "GET", "POST", "GET"}
	raw := strings.Join(reqs, "")
	want := h1RawExchange(t, hh.ref, raw, methods...)
	got := h1RawExchange(t, hh.addr, raw, methods...)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d:\n%.300q\nnet/http:\n%.300q", i+1, got[i], want[i])
		}
	}
	if !strings.Contains(got[4], "web POST /x") {
		t.Errorf("the POST: %q", got[4])
	}
	if n := hh.fast(); n != 3 || hh.handoff.Load() != 1 {
		t.Errorf("fast answers %d, hand-offs %d; want 3, 1", n, hh.handoff.Load())
	}

	// one request at a time on a kept-alive connection
	c, err := net.Dial("tcp", hh.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 5 {
		io.WriteString(c, reqs[i%2])
		a := h1ReadAnswers(t, c, "GET")[0]
		if !strings.HasPrefix(a, "HTTP/1.1 "+[]string{"200", "404"}[i%2]) {
			t.Fatalf("request %d: %q", i, a)
		}
	}
}

// TestH1Handoff: what the fast path does not take goes to net/http with
// the bytes read put back, and net/http answers exactly as it does
// alone.
func TestH1Handoff(t *testing.T) {
	srv, _ := h1Site(t, false)
	hh := newH1Harness(t, srv, true, nil)
	for _, tc := range []struct{ name, raw, method string }{
		{"post", "POST /x HTTP/1.1\r\nHost: demo.sites.test\r\nContent-Length: 3\r\n\r\nabc", "POST"},
		{"unknown host", "GET /tiny.txt HTTP/1.1\r\nHost: web.test\r\n\r\n", "GET"},
		{"no host", "GET / HTTP/1.1\r\n\r\n", "GET"},
		{"two hosts", "GET / HTTP/1.1\r\nHost: demo.sites.test\r\nHost: demo.sites.test\r\n\r\n", "GET"},
		{"chunked", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET"},
		{"te and cl", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "GET"},
		{"absolute uri", "GET http://demo.sites.test/tiny.txt HTTP/1.1\r\nHost: other.test\r\n\r\n", "GET"},
		{"options", "OPTIONS * HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n", "OPTIONS"},
		{"h2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "PRI"},
		{"bare lf", "GET /tiny.txt HTTP/1.1\nHost: demo.sites.test\n\n", "GET"},
		{"obs-fold", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nX-A: b\r\n c\r\n\r\n", "GET"},
		{"bad header", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nX A: b\r\n\r\n", "GET"},
		{"bad escape", "GET /%zz HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n", "GET"},
		{"1.0 keep-alive", "GET /tiny.txt HTTP/1.0\r\nHost: demo.sites.test\r\nConnection: keep-alive\r\n\r\n", "GET"},
		{"expect", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n", "GET"},
		{"upgrade", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", "GET"},
		{"huge head", "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nX-Big: " + strings.Repeat("b", 20000) + "\r\n\r\n", "GET"},
	} {
		before := hh.handoff.Load()
		want := h1RawExchange(t, hh.ref, tc.raw, tc.method)
		got := h1RawExchange(t, hh.addr, tc.raw, tc.method)
		if got[0] != want[0] {
			t.Errorf("%s: answered\n%.400q\nnet/http:\n%.400q", tc.name, got[0], want[0])
		}
		if hh.handoff.Load() != before+1 {
			t.Errorf("%s: not handed off", tc.name)
		}
	}
	if n := hh.fast(); n != 0 {
		t.Errorf("%d fast answers", n)
	}
}

// TestH1CloseAfter: HTTP/1.0 and Connection: close end the connection
// after their answer.
func TestH1CloseAfter(t *testing.T) {
	srv, _ := h1Site(t, false)
	hh := newH1Harness(t, srv, true, nil)
	for _, raw := range []string{
		"GET /tiny.txt HTTP/1.0\r\nHost: demo.sites.test\r\n\r\n",
		"GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nConnection: close\r\n\r\n",
		"GET /nope HTTP/1.1\r\nHost: demo.sites.test\r\nConnection: close\r\n\r\n",
	} {
		c, err := net.Dial("tcp", hh.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, raw+raw) // the second is never answered
		all, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if n := strings.Count(string(all), "HTTP/1."); n != 1 {
			t.Errorf("%q: %d answers: %q", raw, n, all)
		}
	}
}

// TestH1Timeouts: a head that does not come within the header timeout,
// and a connection idle past the idle timeout, are closed; a client that
// stops reading is dropped at the write timeout.
func TestH1Timeouts(t *testing.T) {
	srv, _ := h1Site(t, false)
	hh := newH1Harness(t, srv, true, func(o *HTTP1Options) {
		o.HeaderTimeout, o.IdleTimeout, o.WriteTimeout = 300*time.Millisecond, 600*time.Millisecond, 300*time.Millisecond
	})
	closedWithin := func(name string, c net.Conn, min, max time.Duration) {
		t.Helper()
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		d := time.Since(start)
		if err != nil || d < min || d > max {
			t.Errorf("%s: closed after %v (%v), want %v to %v", name, d, err, min, max)
		}
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", hh.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := dial() // the first head, from the connection's start
	io.WriteString(c, "GET /tiny.txt HTTP/1.1\r\nHo")
	closedWithin("first head", c, 200*time.Millisecond, 2*time.Second)

	c = dial() // idle after an answer, then a head that stalls
	io.WriteString(c, "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
	h1ReadAnswers(t, c, "GET")
	time.Sleep(400 * time.Millisecond) // past the header timeout, within the idle one
	io.WriteString(c, "GET /tiny.txt HTTP/1.1\r\nHo")
	closedWithin("next head", c, 200*time.Millisecond, 2*time.Second)

	c = dial()
	io.WriteString(c, "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
	h1ReadAnswers(t, c, "GET")
	closedWithin("idle", c, 400*time.Millisecond, 3*time.Second)

	// a client that asks and never reads: the answers fill the socket
	// buffers, the write times out, the connection ends
	c = dial()
	c.(*net.TCPConn).SetReadBuffer(4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if _, err := io.WriteString(c, "GET /big.bin HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n"); err != nil {
				return
			}
		}
	}()
	<-done
	for end := time.Now().Add(5 * time.Second); hh.accepted.Load() < 4 || hh.active.Load() > 0; {
		if time.Now().After(end) {
			t.Fatalf("a connection whose client stopped reading still served after 5 s (%d accepted, %d serving)", hh.accepted.Load(), hh.active.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestH1PanicAndContext: a panic of the handler ends its connection (and
// is logged), and the request's context ends with the connection.
func TestH1PanicAndContext(t *testing.T) {
	srv, _ := h1Site(t, false)
	var logged bytes.Buffer
	var mu sync.Mutex
	ctxs := make(chan context.Context, 1)
	hh := newH1Harness(t, srv, true, func(o *HTTP1Options) {
		o.Logger = slog.New(slog.NewTextHandler(h1LockedWriter{&mu, &logged}, nil))
		serve := o.Serve
		o.Serve = func(w http.ResponseWriter, r *http.Request, label string) {
			switch r.URL.Path {
			case "/panic":
				panic("boom")
			case "/ctx":
				ctxs <- r.Context()
			}
			serve(w, r, label)
		}
	})
	c, err := net.Dial("tcp", hh.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Errorf("after a panic: read %q, %v; want the connection closed", b, err)
	}
	c.Close()
	mu.Lock()
	if !strings.Contains(logged.String(), "boom") {
		t.Errorf("panic not logged: %q", logged.String())
	}
	mu.Unlock()

	c, err = net.Dial("tcp", hh.addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /ctx HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	h1ReadAnswers(t, c, "GET")
	ctx := <-ctxs
	if ctx.Err() != nil {
		t.Fatal("the context ended while the connection is open")
	}
	c.Close()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the request's context outlived its connection")
	}
}

// TestH1Shutdown: Shutdown closes the idle connections (one after an
// answer, one that sent nothing yet) and returns once they are gone.
func TestH1Shutdown(t *testing.T) {
	srv, _ := h1Site(t, false)
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Serve: srv.ServeSite, Sites: srv})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go h1.ServeConn(c)
		}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(a, "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
	h1ReadAnswers(t, a, "GET")
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.SetDeadline(time.Now().Add(5 * time.Second))
	for h1.count() < 2 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := h1.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, c := range []net.Conn{a, b} {
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("read %d, %v; want the connection closed", n, err)
		}
	}
}

func (s *HTTP1) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

type h1LockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l h1LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestH1FastRecords: the fast answers are counted by the Recorder as
// ServeSite counts them.
func TestH1FastRecords(t *testing.T) {
	srv, _ := h1Site(t, false)
	rec := &hits{}
	srv.rec = rec
	hh := newH1Harness(t, srv, true, nil)
	raw := "GET /about HTTP/1.1\r\nHost: demo.sites.test\r\nUser-Agent: Mozilla/5.0 (X11)\r\nReferer: https://ref.example/x\r\n\r\n" +
		"HEAD /logo.png HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n"
	h1RawExchange(t, hh.addr, raw, "GET", "HEAD")
	rec.mu.Lock()
	fastHits := rec.got
	rec.got = nil
	rec.mu.Unlock()
	h1RawExchange(t, hh.ref, raw, "GET", "HEAD")
	rec.mu.Lock()
	want := rec.got
	rec.mu.Unlock()
	if n := hh.fast(); n != 2 {
		t.Fatalf("%d fast answers", n)
	}
	if len(fastHits) != 2 || len(want) != 2 {
		t.Fatalf("hits %v, net/http's %v", fastHits, want)
	}
	for i := range want {
		g, w := fastHits[i], want[i]
		g.IP, w.IP = strings.Split(g.IP, ":")[0], strings.Split(w.IP, ":")[0] // ports differ
		if g != w {
			t.Errorf("hit %d: %+v, net/http's %+v", i, g, w)
		}
	}
}

// h1FakeConn serves the benchmark: each Read returns the same request,
// writes are discarded.
type h1FakeConn struct {
	req    []byte
	n      int
	writes int
	net.Conn
}

func (c *h1FakeConn) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, io.EOF
	}
	c.n--
	return copy(p, c.req), nil
}
func (c *h1FakeConn) Write(p []byte) (int, error)      { c.writes++; return len(p), nil }
func (c *h1FakeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *h1FakeConn) SetWriteDeadline(time.Time) error { return nil }
func (c *h1FakeConn) SetDeadline(time.Time) error      { return nil }
func (c *h1FakeConn) Close() error                     { return nil }
func (c *h1FakeConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}
}
func (c *h1FakeConn) LocalAddr() net.Addr                 { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (c *h1FakeConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }

// BenchmarkH1Fast is the fast path's user-space cost per request (no
// socket): wrk's request for the page, gzip asked for, analytics on.
func BenchmarkH1Fast(b *testing.B) {
	for _, tc := range []struct{ name, path string }{{"page", "/"}, {"script", "/app.3f2a9c1b.js"}, {"image", "/logo.png"}} {
		b.Run(tc.name, func(b *testing.B) {
			srv, _ := h1Site(b, false)
			srv.rec = &h1CountingRecorder{}
			h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Serve: srv.ServeSite, Sites: srv})
			req := []byte("GET " + tc.path + " HTTP/1.1\r\nHost: demo.sites.test:8080\r\nAccept-Encoding: gzip\r\n\r\n")
			c := &h1FakeConn{req: req, n: 1}
			h1.ServeConn(c) // warm the caches
			b.ReportAllocs()
			b.ResetTimer()
			c = &h1FakeConn{req: req, n: b.N}
			if h1.ServeConn(c) != nil || c.writes < b.N {
				b.Fatalf("%d writes for %d requests", c.writes, b.N)
			}
		})
	}
}

// BenchmarkH1General is the general path's cost for the same requests.
func BenchmarkH1General(b *testing.B) {
	srv, _ := h1Site(b, false)
	srv.rec = &h1CountingRecorder{}
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Serve: srv.ServeSite})
	req := []byte("GET / HTTP/1.1\r\nHost: demo.sites.test:8080\r\nAccept-Encoding: gzip\r\n\r\n")
	c := &h1FakeConn{req: req, n: 1}
	h1.ServeConn(c)
	b.ReportAllocs()
	b.ResetTimer()
	c = &h1FakeConn{req: req, n: b.N}
	h1.ServeConn(c)
}

type h1CountingRecorder struct{ n atomic.Int64 }

func (r *h1CountingRecorder) Record(analytics.Hit) { r.n.Add(1) }

// TestH1OverTLS: behind the listener's TLS (ListenFront), the fast and
// general answers reach an HTTPS client whole, a small answer in one
// write, the request knows its TLS state, and a request the fast path
// does not take is net/http's on the same connection.
func TestH1OverTLS(t *testing.T) {
	srv, site := h1Site(t, false)
	ref := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate and client
	defer ref.Close()
	var fastN atomic.Int64
	var sawTLS atomic.Bool
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Sites: srv,
		Serve: func(w http.ResponseWriter, r *http.Request, label string) {
			sawTLS.Store(r.TLS != nil && r.TLS.HandshakeComplete)
			srv.ServeSite(w, r, label)
		},
		Count: func(int, int64, time.Duration) { fastN.Add(1) }})
	var sends atomic.Int64
	addr := frontOnLoopback(t, srv, ListenFront{TLS: h1TestTLS(ref), HTTP1: h1}, func(net.Conn, int) { sends.Add(1) })
	client := tlsClientTo(ref, addr, nil)
	client.Transport.(*http.Transport).DisableCompression = true
	base := "https://demo.sites.test"
	if res, err := client.Get(base + "/about"); err != nil { // the handshake
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	for _, tc := range []struct {
		path, encoding string
		file           string
	}{
		{"/tiny.txt", "", "tiny.txt"},
		{"/", "gzip", "index.html"},
		{"/app.3f2a9c1b.js", "gzip", "app.3f2a9c1b.js"},
		{"/logo.png", "", "logo.png"},
		{"/nope", "", "404.html"},
	} {
		req, _ := http.NewRequest("GET", base+tc.path, nil)
		if tc.encoding != "" {
			req.Header.Set("Accept-Encoding", tc.encoding)
		}
		time.Sleep(20 * time.Millisecond) // the previous answer's writes are counted
		before := sends.Load()
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		e := site.Files[tc.file]
		want := e.Size
		if tc.encoding != "" {
			want = e.Encoded[tc.encoding].Size
		}
		if int64(len(got)) != want || res.Header.Get("Content-Encoding") != tc.encoding {
			t.Errorf("%s: %d bytes, %q; want %d, %q", tc.path, len(got), res.Header.Get("Content-Encoding"), want, tc.encoding)
		}
		if tc.path == "/tiny.txt" {
			// the server counts its write once it returned: maybe after
			// the client read it
			for end := time.Now().Add(2 * time.Second); sends.Load() == before && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			if n := sends.Load() - before; n != 1 {
				t.Errorf("%s: %d writes", tc.path, n)
			}
		}
	}
	if n := awaitCount(&fastN, 5); n != 5 || !sawTLS.Load() {
		t.Errorf("fast answers %d, the general path saw TLS: %v", n, sawTLS.Load())
	}
	res, err := client.Post("https://web.test/x", "text/plain", strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "web POST /x\n" {
		t.Errorf("the POST: %q", b)
	}
}

// frontOnLoopback serves srv as the server does, on a loopback port:
// the main listener's front (front) and net/http with the site handler
// for what the front hands on. onSend is told of each socket write.
func frontOnLoopback(t *testing.T, srv *Server, front ListenFront, onSend func(net.Conn, int)) (addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(ln, nil, onSend)
	l.Serve(front)
	hs := &http.Server{Handler: h1SiteHandler(srv), ConnContext: ConnContext}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// h1TestTLS is the front's TLS for HTTP/1.1 with ref's certificate.
func h1TestTLS(ref *httptest.Server) *tls.Config {
	return &tls.Config{Certificates: ref.TLS.Certificates, NextProtos: []string{"http/1.1"}}
}

// tlsClientTo is ref's client (it trusts ref's certificate, named
// example.com) dialling addr whatever the URL's host; wrap, when not
// nil, wraps each connection it dials.
func tlsClientTo(ref *httptest.Server, addr string, wrap func(net.Conn) net.Conn) *http.Client {
	client := ref.Client()
	tr := client.Transport.(*http.Transport)
	tr.TLSClientConfig.ServerName = "example.com"
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil || wrap == nil {
			return c, err
		}
		return wrap(c), nil
	}
	return client
}

// tlsRecordCounter counts the TLS records a client reads (their
// 5-byte headers), whatever the reads' sizes.
type tlsRecordCounter struct {
	net.Conn
	mu      sync.Mutex
	records int
	hdr     []byte
	skip    int
}

func (c *tlsRecordCounter) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	for b := p[:n]; len(b) > 0; {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip -= k
			b = b[k:]
			continue
		}
		k := min(5-len(c.hdr), len(b))
		c.hdr = append(c.hdr, b[:k]...)
		b = b[k:]
		if len(c.hdr) == 5 {
			c.records++
			c.skip = int(c.hdr[3])<<8 | int(c.hdr[4])
			c.hdr = c.hdr[:0]
		}
	}
	return n, err
}

func (c *tlsRecordCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records
}

// TestH1OverTLSRecords: through TLS, a fast answer larger than one
// record takes the fewest records its length needs (the head shares the
// body's first record) and leaves in one write, both when it is
// gathered in the connection's output (under h1OutMax) and when it is
// written beside it (writeTwo).
func TestH1OverTLSRecords(t *testing.T) {
	srv, site := h1Site(t, false)
	for _, n := range []int{20000, 40000} {
		b := bytes.Repeat([]byte{byte(n / 1000)}, n)
		h := store.HashBytes(b)
		if err := srv.store.Put(context.Background(), h, b); err != nil {
			t.Fatal(err)
		}
		site.Files[fmt.Sprintf("b%d.bin", n)] = sites.ManifestEntry{Hash: h, Size: int64(n), Type: "application/octet-stream"}
	}
	ref := httptest.NewTLSServer(http.NotFoundHandler())
	defer ref.Close()
	var fastN atomic.Int64
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Sites: srv, Serve: srv.ServeSite,
		Count: func(int, int64, time.Duration) { fastN.Add(1) }})
	var sends atomic.Int64
	addr := frontOnLoopback(t, srv, ListenFront{TLS: h1TestTLS(ref), HTTP1: h1}, func(net.Conn, int) { sends.Add(1) })
	var rc *tlsRecordCounter
	client := tlsClientTo(ref, addr, func(c net.Conn) net.Conn { rc = &tlsRecordCounter{Conn: c}; return rc })
	get := func(path string) (body []byte, head int) {
		res, err := client.Get("https://demo.sites.test" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ = io.ReadAll(res.Body)
		var hb bytes.Buffer
		res.Header.Write(&hb)
		return body, hb.Len()
	}
	// Go's TLS sends small records until a connection has sent 128 KB
	// (dynamic record sizing): count full-size records after that.
	for range 5 {
		get("/b40000.bin")
	}
	for _, n := range []int{20000, 40000} {
		p := fmt.Sprintf("/b%d.bin", n)
		get(p) // the previous answer's writes are counted
		time.Sleep(20 * time.Millisecond)
		records, before := rc.count(), sends.Load()
		body, head := get(p)
		if len(body) != n {
			t.Fatalf("%s: %d bytes", p, len(body))
		}
		for end := time.Now().Add(2 * time.Second); sends.Load() == before && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		// the head as the client prints it is within ~100 bytes of the
		// server's: the fewest records the answer needs
		want := (n + head + 100 + tlsRecord - 1) / tlsRecord
		if got := rc.count() - records; got != want {
			t.Errorf("%s: %d records, want %d", p, got, want)
		}
		if got := sends.Load() - before; got != 1 {
			t.Errorf("%s: %d writes, want 1", p, got)
		}
	}
	if n := awaitCount(&fastN, 9); n != 9 {
		t.Errorf("%d fast answers, want 9", n)
	}
}

// TestH1HeaderValuesBounded: the header values a connection keeps for
// reuse stay bounded when every request sends new header names.
func TestH1HeaderValuesBounded(t *testing.T) {
	srv, _ := h1Site(t, false)
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Serve: srv.ServeSite, Sites: srv})
	var req bytes.Buffer
	for i := range 40 {
		fmt.Fprintf(&req, "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n")
		for j := range 10 {
			fmt.Fprintf(&req, "X-H%d-%d: v\r\n", i, j)
		}
		req.WriteString("\r\n")
	}
	c := &h1FakeConn{req: req.Bytes(), n: 1}
	var kept int
	cn := &h1conn{s: h1, c: c, buf: make([]byte, h1MaxHead), values: map[string][]string{}}
	cn.end = copy(cn.buf, req.Bytes())
	for cn.start < cn.end {
		if parseH1(cn.buf[cn.start:cn.end], &cn.h) != h1Done {
			t.Fatal("head not parsed")
		}
		cn.request()
		kept = max(kept, len(cn.values))
		cn.start += cn.h.size
	}
	if kept > 2*h1MaxFields+10 {
		t.Errorf("kept %d header values", kept)
	}
}

// TestH1PipelinedOutputBounded: answers to pipelined requests are held
// back to leave together, but never more than h1OutMax of them.
func TestH1PipelinedOutputBounded(t *testing.T) {
	srv, _ := h1Site(t, false)
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Serve: srv.ServeSite, Sites: srv})
	req := strings.Repeat("GET /about HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n", 300) // ~14 KB of requests, ~100 KB of answers
	c := &h1MaxWriteConn{r: strings.NewReader(req)}
	if h1.ServeConn(c) != nil {
		t.Fatal("handed off")
	}
	if c.answers != 300 || c.writes < 3 || c.max > h1OutMax+4096 {
		t.Errorf("%d answers in %d writes, the largest %d bytes", c.answers, c.writes, c.max)
	}
}

// h1MaxWriteConn reads r, then EOF; it counts the writes and answers,
// and keeps the largest write's size.
type h1MaxWriteConn struct {
	h1FakeConn
	r       io.Reader
	max     int
	answers int
}

func (c *h1MaxWriteConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *h1MaxWriteConn) Write(p []byte) (int, error) {
	c.max = max(c.max, len(p))
	c.answers += bytes.Count(p, []byte("HTTP/1.1 200 OK"))
	return c.h1FakeConn.Write(p)
}

// TestH1Sendfile: the fast answer's larger bodies go with sendfile from
// the blob files kept open, shared by connections at once and closed
// once evicted and unused: with two files open at most and six files
// asked for by eight connections at once, every body arrives whole.
func TestH1Sendfile(t *testing.T) {
	srv, site := h1Site(t, false)
	blobs := map[string][]byte{}
	for i := range 6 {
		b := bytes.Repeat([]byte{byte('a' + i)}, h1SendfileMin+1000*i)
		h := store.HashBytes(b)
		if err := srv.store.Put(context.Background(), h, b); err != nil {
			t.Fatal(err)
		}
		p := fmt.Sprintf("f%d.bin", i)
		site.Files[p] = sites.ManifestEntry{Hash: h, Size: int64(len(b)), Type: "application/octet-stream"}
		blobs[p] = b
	}
	srv.files = newFileCache(2)
	hh := newH1Harness(t, srv, true, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c, err := net.Dial("tcp", hh.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			for i := range 30 {
				p := fmt.Sprintf("f%d.bin", (g+i)%6)
				fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n", p)
				res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Error(err)
					return
				}
				b, err := io.ReadAll(res.Body)
				if err != nil || !bytes.Equal(b, blobs[p]) {
					t.Errorf("%s: %d bytes (%v), want %d", p, len(b), err, len(blobs[p]))
					return
				}
			}
		})
	}
	wg.Wait()
	if n := hh.fast(); n != 8*30 {
		t.Errorf("%d fast answers", n)
	}
	// A connection's goroutine lets go of its file after sendfile
	// returns, which can be after the client has read the last byte:
	// wait (bounded) for the holds to settle before counting them.
	heldBeyondCache := func() (open int, extra []int32) {
		srv.files.mu.Lock()
		defer srv.files.mu.Unlock()
		for _, of := range srv.files.files {
			if n := of.refs.Load(); n != 1 {
				extra = append(extra, n)
			}
		}
		return len(srv.files.files), extra
	}
	open, extra := heldBeyondCache()
	for end := time.Now().Add(5 * time.Second); len(extra) > 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
		open, extra = heldBeyondCache()
	}
	if open != 2 {
		t.Errorf("%d files open, want 2 (sendfile not used?)", open)
	}
	for _, n := range extra {
		t.Errorf("an open file with %d holds, want the cache's alone", n)
	}
}
