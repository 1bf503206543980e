package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// testCert is a self-signed ECDSA certificate for *.sites.test and
// 127.0.0.1, made once.
var testCert = sync.OnceValue(func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sites.test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"sites.test", "*.sites.test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
})

// h2Sites is a site server with a public site "demo" (a page, a script
// with its precompressed variants, an image, a file over the content
// cache's limit, a 404 page and _headers) and a protected one "gated".
func h2Sites(t testing.TB) *Server {
	t.Helper()
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// random bytes: not compressed at deploy (which would take seconds)
	big := make([]byte, maxCachedFile+300_000)
	_, _ = mathrand.NewChaCha8([32]byte{1}).Read(big)
	demoFiles := []sites.File{
		{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)},
		{Path: "about.html", ContentType: htmlType, Data: []byte("<h1>about</h1>")},
		{Path: "app.3f2a1b9c.js", ContentType: "text/javascript; charset=utf-8", Data: bytes.Repeat([]byte("console.log('x');\n"), 5000)},
		{Path: "img.png", ContentType: "image/png", Data: testBody(30_000)},
		{Path: "big.bin", ContentType: "application/octet-stream", Data: big},
		{Path: "404.html", ContentType: htmlType, Data: []byte("custom 404")},
		{Path: "_headers", ContentType: "text/plain", Data: []byte("/about\n  X-Frame-Options: DENY\n  Link: </app.3f2a1b9c.js>; rel=preload\n")},
	}
	gatedFilesList := []sites.File{{Path: "index.html", ContentType: htmlType, Data: []byte(gatedPage)}}
	loaded := map[string]sites.Site{}
	for slug, files := range map[string][]sites.File{"demo": demoFiles, "gated": gatedFilesList} {
		m, blobs, err := sites.DeployedFiles(context.Background(), files)
		if err != nil {
			t.Fatal(err)
		}
		for h, data := range blobs {
			if err := blobStore.Put(context.Background(), h, data); err != nil {
				t.Fatal(err)
			}
		}
		s := sites.Site{ID: "id-" + slug, Slug: slug, Status: sites.StatusActive, Files: m}
		if slug == "gated" {
			s.Protection = &sites.Protection{PasswordHash: testHash(), Secret: "secret-of-gated"}
		}
		loaded[slug] = s
	}
	return NewServer(func(slug string) (*sites.Site, error) {
		s, ok := loaded[slug]
		if !ok {
			return nil, sites.ErrNotFound
		}
		return &s, nil
	}, blobStore)
}

// siteHandler answers every request with srv by the host's first label,
// as the front door does for a site host (corked: Go's HTTP/2 server
// over the main listener batches its writes; H2Server's requests are
// not corked).
func siteHandler(srv *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer Cork(r).Uncork(w)
		slug, _, _ := strings.Cut(r.Host, ".")
		srv.ServeSite(w, r, slug)
	})
}

// isTestSiteHost tells the site hosts of the tests: <slug>.sites.test.
func isTestSiteHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.HasSuffix(host, ".sites.test") && strings.Count(host, ".") == 2
}

// h2TestServer serves an H2Server on a TLS listener of its own
// (127.0.0.1:0, ALPN h2), as the main listener hands it connections.
type h2TestServer struct {
	srv  *H2Server
	ln   net.Listener
	addr string
	wg   sync.WaitGroup
}

func newH2TestServer(t testing.TB, o H2Options) *h2TestServer {
	t.Helper()
	if o.SiteHost == nil {
		o.SiteHost = isTestSiteHost
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{testCert()}, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := &h2TestServer{srv: NewH2Server(o), ln: ln, addr: ln.Addr().String()}
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ts.wg.Add(1)
			go func() {
				defer ts.wg.Done()
				tc := c.(*tls.Conn)
				if err := tc.Handshake(); err != nil {
					tc.Close()
					return
				}
				ts.srv.ServeConn(tc)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		ts.srv.Close()
		ts.wg.Wait()
	})
	return ts
}

// tWriter fails the test with what is logged (a panic).
type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Errorf("logged: %s", p)
	return len(p), nil
}

// h2Client is a client that speaks HTTP/2 to addr whatever the URL's
// host (its TLS server name is the URL's host).
func h2Client(addr string) *http.Client {
	return &http.Client{
		Timeout: 20 * time.Second,
		Transport: &http2.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			DialTLSContext: func(ctx context.Context, network, _ string, cfg *tls.Config) (net.Conn, error) {
				d := tls.Dialer{Config: cfg}
				return d.DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// goH2Server is Go's own HTTP/2 server with handler, for comparison.
func goH2Server(t testing.TB, handler http.Handler) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(handler)
	ts.EnableHTTP2 = true
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{testCert()}}
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

type h2Answer struct {
	status int
	header http.Header
	body   []byte
	proto  string
}

func doH2(t testing.TB, client *http.Client, method, target string, header http.Header, body string) h2Answer {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rb)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: body: %v", method, target, err)
	}
	res.Header.Del("Date")
	return h2Answer{status: res.StatusCode, header: res.Header, body: b, proto: res.Proto}
}

// TestH2SameAnswersAsGo asks the same requests of an H2Server and of Go's
// own HTTP/2 server, both answering through the site server, and
// compares the answers: status, headers (but Date) and body.
func TestH2SameAnswersAsGo(t *testing.T) {
	sitesSrv := h2Sites(t)
	handler := siteHandler(sitesSrv)
	ours := h2Client(newH2TestServer(t, H2Options{Handler: handler}).addr)
	theirs := h2Client(goH2Server(t, handler))

	first := doH2(t, theirs, "GET", "https://demo.sites.test/", http.Header{"Accept-Encoding": {"gzip"}}, "")
	etag := first.header.Get("Etag")
	if etag == "" {
		t.Fatalf("no ETag on /: %v", first.header)
	}
	form := url.Values{"password": {testPassword}, "next": {"/"}}.Encode()
	wrong := url.Values{"password": {"wrong"}, "next": {"/"}}.Encode()
	formHeader := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	cases := []struct {
		method, target string
		header         http.Header
		body           string
	}{
		{"GET", "https://demo.sites.test/", nil, ""},
		{"GET", "https://demo.sites.test/", http.Header{"Accept-Encoding": {"gzip, deflate, br, zstd"}}, ""},
		{"GET", "https://demo.sites.test/", http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {etag}}, ""},
		{"HEAD", "https://demo.sites.test/", nil, ""},
		{"GET", "https://demo.sites.test/about", nil, ""},
		{"GET", "https://demo.sites.test/about.html?x=1", nil, ""},
		{"GET", "https://demo.sites.test/missing%20page", nil, ""},
		{"GET", "https://demo.sites.test/a/../about", nil, ""},
		{"GET", "https://demo.sites.test/app.3f2a1b9c.js", http.Header{"Accept-Encoding": {"gzip"}}, ""},
		{"GET", "https://demo.sites.test/app.3f2a1b9c.js", nil, ""},
		{"GET", "https://demo.sites.test/img.png", http.Header{"Range": {"bytes=0-9"}}, ""},
		{"GET", "https://demo.sites.test/img.png", http.Header{"Range": {"bytes=0-1,5-6"}}, ""},
		{"GET", "https://demo.sites.test/img.png", http.Header{"Range": {"bytes=99999-"}}, ""},
		{"GET", "https://demo.sites.test/big.bin", nil, ""},
		{"GET", "https://demo.sites.test/big.bin", http.Header{"Range": {"bytes=1000-2000"}}, ""},
		{"HEAD", "https://demo.sites.test/big.bin", nil, ""},
		{"POST", "https://demo.sites.test/", formHeader, "a=b"},
		{"DELETE", "https://demo.sites.test/", nil, ""},
		{"GET", "https://nosuch.sites.test/", nil, ""},
		{"GET", "https://gated.sites.test/", nil, ""},
		{"POST", "https://gated.sites.test" + GatePath, formHeader, wrong},
		{"POST", "https://gated.sites.test" + GatePath, formHeader, strings.Repeat("x", 10_000)},
		{"POST", "https://gated.sites.test" + GatePath, formHeader, form},
	}
	for _, tc := range cases {
		name := tc.method + " " + tc.target
		want := doH2(t, theirs, tc.method, tc.target, tc.header, tc.body)
		got := doH2(t, ours, tc.method, tc.target, tc.header, tc.body)
		if got.proto != "HTTP/2.0" {
			t.Errorf("%s: proto %s", name, got.proto)
		}
		if got.status != want.status {
			t.Errorf("%s: status %d, Go's server %d", name, got.status, want.status)
		}
		// a new gate cookie's expiry may differ by a second
		for _, a := range []h2Answer{got, want} {
			if c := a.header["Set-Cookie"]; len(c) == 1 {
				a.header["Set-Cookie"] = []string{c[0][:strings.Index(c[0], "=")]}
			}
		}
		for _, a := range []*h2Answer{&got, &want} {
			if _, b, ok := strings.Cut(a.header.Get("Content-Type"), "boundary="); ok {
				a.header.Set("Content-Type", strings.ReplaceAll(a.header.Get("Content-Type"), b, "B"))
				a.body = bytes.ReplaceAll(a.body, []byte(b), []byte("B"))
			}
		}
		if !equalHeaders(got.header, want.header) {
			t.Errorf("%s: headers\n%v\nGo's server:\n%v", name, got.header, want.header)
		}
		if !bytes.Equal(got.body, want.body) {
			t.Errorf("%s: body of %d bytes (%.40q), Go's server %d (%.40q)", name, len(got.body), got.body, len(want.body), want.body)
		}
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// TestH2Misdirected: a request on the connection for a host that is not
// a site host (a browser reusing it for a name the certificate covers)
// answers 421, which has the client retry on a connection of its own;
// the site handler never sees it.
func TestH2Misdirected(t *testing.T) {
	var calls int
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ })
	client := h2Client(newH2TestServer(t, H2Options{Handler: handler}).addr)
	for _, host := range []string{"sites.test", "a.b.sites.test", "example.com"} {
		got := doH2(t, client, "GET", "https://"+host+"/", nil, "")
		if got.status != http.StatusMisdirectedRequest || !strings.Contains(string(got.body), `"error"`) {
			t.Errorf("%s: %d %s, want 421 with an error", host, got.status, got.body)
		}
	}
	if calls != 0 {
		t.Errorf("the site handler answered %d misdirected requests", calls)
	}
	if got := doH2(t, client, "GET", "https://demo.sites.test/", nil, ""); got.status != http.StatusOK || calls != 1 {
		t.Errorf("a site host: %d, handler calls %d", got.status, calls)
	}
}

// TestH2ConcurrentStreams: many streams at once on one connection, of
// bodies large and small, each gets its own answer.
func TestH2ConcurrentStreams(t *testing.T) {
	sitesSrv := h2Sites(t)
	ts := newH2TestServer(t, H2Options{Handler: siteHandler(sitesSrv)})
	client := h2Client(ts.addr)
	want := map[string]h2Answer{}
	paths := []string{"/", "/about", "/app.3f2a1b9c.js", "/img.png", "/big.bin", "/missing"}
	for _, p := range paths {
		want[p] = doH2(t, client, "GET", "https://demo.sites.test"+p, nil, "")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := paths[i%len(paths)]
			res, err := client.Get("https://demo.sites.test" + p)
			if err != nil {
				errs <- fmt.Sprintf("%s: %v", p, err)
				return
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != want[p].status || !bytes.Equal(b, want[p].body) {
				errs <- fmt.Sprintf("%s: %d, %d bytes, %v", p, res.StatusCode, len(b), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ts.srv.mu.Lock()
	n := len(ts.srv.conns)
	ts.srv.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections, want the one", n)
	}
}

// TestH2GathersRecords: over TLS on the main listener's Conn, the TLS
// records of each flush leave in one write, where TLS writes each
// record on its own (small ones, over a connection's first 128 KB).
func TestH2GathersRecords(t *testing.T) {
	sitesSrv := h2Sites(t)
	var sends atomic.Int64
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := tls.NewListener(NewListener(tcp, nil, func(net.Conn, int) { sends.Add(1) }), &tls.Config{Certificates: []tls.Certificate{testCert()}, NextProtos: []string{"h2"}})
	t.Cleanup(func() { ln.Close() })
	srv := NewH2Server(H2Options{Handler: siteHandler(sitesSrv), SiteHost: isTestSiteHost})
	t.Cleanup(func() { srv.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				if c.(*tls.Conn).Handshake() == nil {
					srv.ServeConn(c)
				}
			}()
		}
	}()
	client := h2Client(ln.Addr().String())
	doH2(t, client, "GET", "https://demo.sites.test/about", nil, "") // the connection, its settings
	before := sends.Load()
	got := doH2(t, client, "GET", "https://demo.sites.test/app.3f2a1b9c.js", http.Header{"Accept-Encoding": {"identity"}}, "")
	n := sends.Load() - before
	if max := int64(len(got.body)/h2WriteBuffer + 3); n > max || len(got.body) < 50_000 {
		t.Errorf("%d bytes in %d writes, want at most %d", len(got.body), n, max)
	}
}
