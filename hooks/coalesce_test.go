package hooks

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// coalescingServer is an httptest server on a coalescing listener whose
// handler writes a body of the size in the path ("/16000"), corked or
// not; its listener counts the writes that reach the socket.
type coalescingServer struct {
	*httptest.Server
	sends atomic.Int64
}

func newCoalescingServer(t *testing.T, cork, useTLS, http2 bool) *coalescingServer {
	t.Helper()
	cs := &coalescingServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if cork {
			c := corkResponse(r)
			defer c.uncork(w)
			w.Header().Set("X-Corked", strconv.FormatBool(c != nil))
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Header().Set("X-Proto", r.Proto)
		_, _ = w.Write(testBody(n))
	})
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = &coalescingListener{Listener: ts.Listener, onSend: func(net.Conn, int) { cs.sends.Add(1) }}
	ts.Config.ConnContext = coalescingConnContext
	ts.EnableHTTP2 = http2
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by Close
	if useTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	ts.Client().Timeout = 10 * time.Second // a response left held fails, not hangs
	cs.Server = ts
	return cs
}

// testBody is n bytes that repeat with a period no response size shares.
func testBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%23)
	}
	return b
}

// TestCoalescedResponseWrites counts the socket writes of HTTP/1
// responses: corked, every response of an in-memory body leaves in one
// write, where net/http alone makes two past its 4 KiB buffer.
func TestCoalescedResponseWrites(t *testing.T) {
	for _, tc := range []struct {
		size             int
		corked, uncorked int // writes per response
	}{
		{0, 1, 1},
		{100, 1, 1},
		{3900, 1, 1}, // headers and body fit net/http's 4 KiB buffer
		{4096, 1, 2},
		{5000, 1, 2},
		{8000, 1, 2},
		{16118, 1, 2}, // the benchmark's gzipped script
		{31016, 1, 2}, // the benchmark's PNG
		{100_000, 1, 2},
		{1 << 20, 1, 2},
	} {
		for _, corked := range []bool{true, false} {
			want := tc.uncorked
			if corked {
				want = tc.corked
			}
			t.Run(fmt.Sprintf("%d bytes corked=%v", tc.size, corked), func(t *testing.T) {
				cs := newCoalescingServer(t, corked, false, false)
				client := cs.Client()
				const requests = 3
				for range requests {
					res, body := doHTTP(t, client, http.MethodGet, cs.URL+"/"+strconv.Itoa(tc.size), "", nil)
					if res.StatusCode != 200 || !bytes.Equal([]byte(body), testBody(tc.size)) {
						t.Fatalf("status %d, body of %d bytes differs", res.StatusCode, len(body))
					}
				}
				// the server's writes are over once its connections are
				// closed (Close waits for the handlers)
				cs.Close()
				if got := cs.sends.Load(); got != int64(requests*want) {
					t.Errorf("%d writes for %d responses, want %d each", got, requests, want)
				}
			})
		}
	}
}

// TestCoalescedPipelining sends requests back to back on one connection:
// what a corked response holds never passes the next response.
func TestCoalescedPipelining(t *testing.T) {
	cs := newCoalescingServer(t, true, false, false)
	c, err := net.Dial("tcp", cs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sizes := []int{5000, 100, 70_000, 4096, 8191, 0, 16118, 5000} // the last leaves bytes held
	var reqs strings.Builder
	for _, n := range sizes {
		fmt.Fprintf(&reqs, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", n)
	}
	if _, err := io.WriteString(c, reqs.String()); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, n := range sizes {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response for /%d: %v", n, err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil || !bytes.Equal(body, testBody(n)) {
			t.Fatalf("/%d: %v, body of %d bytes differs", n, err, len(body))
		}
	}
}

// TestCoalescedTLS serves corked responses over TLS (the coalescing
// connection is under the TLS one): HTTP/1.1 responses are corked and
// take fewer writes; HTTP/2 ones, written by the connection's frame
// writer rather than the handler, are never corked.
func TestCoalescedTLS(t *testing.T) {
	const size = 16118
	sends := map[bool]int64{}
	for _, corked := range []bool{true, false} {
		cs := newCoalescingServer(t, corked, true, false)
		for range 3 {
			res, body := doHTTP(t, cs.Client(), http.MethodGet, cs.URL+"/"+strconv.Itoa(size), "", nil)
			if !bytes.Equal([]byte(body), testBody(size)) {
				t.Fatalf("body of %d bytes differs", len(body))
			}
			if corked && res.Header.Get("X-Corked") != "true" {
				t.Fatalf("an HTTP/1.1 response over TLS was not corked")
			}
		}
		cs.Close()
		sends[corked] = cs.sends.Load()
	}
	if sends[true] >= sends[false] {
		t.Errorf("corked: %d writes, not corked: %d", sends[true], sends[false])
	}

	cs := newCoalescingServer(t, true, true, true)
	client := cs.Client()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			n := 1000 + i*9000
			res, err := client.Get(cs.URL + "/" + strconv.Itoa(n))
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if !bytes.Equal(body, testBody(n)) {
				t.Errorf("/%d over %s: body of %d bytes differs", n, res.Proto, len(body))
			}
			if res.ProtoMajor != 2 || res.Header.Get("X-Corked") != "false" {
				t.Errorf("over %s, X-Corked: %q", res.Proto, res.Header.Get("X-Corked"))
			}
		})
	}
	wg.Wait()
}

// TestCoalescedSendfile streams a file through a corked response: what
// is held goes out before sendfile's bytes.
func TestCoalescedSendfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	data := make([]byte, 3<<20)
	rand.Read(data)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer corkResponse(r).uncork(w)
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("X-Filler", strings.Repeat("x", 3000)) // headers near the 4 KiB flush
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, f)
	}))
	ts.Listener = &coalescingListener{Listener: ts.Listener}
	ts.Config.ConnContext = coalescingConnContext
	ts.Start()
	defer ts.Close()
	for range 2 { // the second on the kept-alive connection
		res, body := doHTTP(t, ts.Client(), http.MethodGet, ts.URL, "", nil)
		if res.StatusCode != 200 || !bytes.Equal([]byte(body), data) {
			t.Fatalf("status %d, body of %d bytes differs", res.StatusCode, len(body))
		}
	}
}

// TestCoalescingConnWriteError keeps a failed write's error: later writes
// fail at once instead of sending a response's tail alone.
func TestCoalescingConnWriteError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl := &coalescingListener{Listener: ln}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := cl.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := (<-accepted).(*coalescingConn)
	defer c.Close()
	peer.Close()
	c.cork()
	if _, err := c.Write(make([]byte, 100)); err != nil {
		t.Fatalf("a held write failed: %v", err)
	}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	var werr error
	for i := 0; i < 100 && werr == nil; i++ { // the reset arrives after a write or two
		_, werr = c.Write(make([]byte, 64<<10))
	}
	if werr == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("a write after a failure succeeded")
	}
	c.uncork(httptest.NewRecorder())
	if _, err := c.ReadFrom(strings.NewReader("x")); err == nil {
		t.Error("ReadFrom after a failure succeeded")
	}
}

// TestSiteResponsesCoalesced runs the serve command and counts the
// writes of a site's answers on one kept-alive connection: each leaves
// in one write (sendfile aside), whatever its size, encoding or kind.
func TestSiteResponsesCoalesced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var mu sync.Mutex
	sends := map[string]int{} // by the client's address
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), func(c *Config) {
		c.MaxBody = 1 << 20
		c.Serve.onSend = func(c net.Conn, _ int) {
			mu.Lock()
			sends[c.RemoteAddr().String()]++
			mu.Unlock()
		}
	}, addr, "--http", addr)

	var sb strings.Builder // ~100 KB that gzips to ~30 KB
	for i, x := 0, uint32(1); sb.Len() < 100_000; i++ {
		x = x*1664525 + 1013904223
		fmt.Fprintf(&sb, "var v%d = %d;\n", i, x>>8)
	}
	script := sb.String()
	png := make([]byte, 30_000)
	rand.Read(png)
	deploy := fmt.Sprintf(`{"slug":"wire","files":[
		{"path":"index.html","content":"<p>hello</p>"},
		{"path":"app.js","content":%q},
		{"path":"logo.png","content":%q,"encoding":"base64","contentType":"image/png"}]}`,
		script, base64.StdEncoding.EncodeToString(png))
	res, body := doHTTP(t, http.DefaultClient, http.MethodPost, "http://"+addr+"/deploy", deploy,
		withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != 200 {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	_, port, _ := net.SplitHostPort(addr)
	host := "wire.sites.test:" + port
	ask := func(method, path, headers string) (*http.Response, []byte) {
		t.Helper()
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", method, path, host, headers)
		req := &http.Request{Method: method}
		res, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	gz, js := ask("GET", "/app.js", "Accept-Encoding: gzip\r\n")
	if gz.Header.Get("Content-Encoding") != "gzip" || len(js) < 4096 {
		t.Fatalf("script: %q, %d bytes", gz.Header.Get("Content-Encoding"), len(js))
	}
	if r, b := ask("GET", "/app.js", ""); string(b) != script || r.Header.Get("Content-Encoding") != "" {
		t.Error("the script's identity differs")
	}
	if _, b := ask("GET", "/logo.png", "Accept-Encoding: gzip, br\r\n"); !bytes.Equal(b, png) {
		t.Error("the image differs")
	}
	if r, b := ask("HEAD", "/logo.png", ""); r.ContentLength != int64(len(png)) || len(b) != 0 {
		t.Errorf("HEAD: length %d, body %d", r.ContentLength, len(b))
	}
	if r, _ := ask("GET", "/app.js", "Accept-Encoding: gzip\r\nIf-None-Match: "+gz.Header.Get("Etag")+"\r\n"); r.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	if r, b := ask("GET", "/logo.png", "Range: bytes=100-9099\r\n"); r.StatusCode != 206 || !bytes.Equal(b, png[100:9100]) {
		t.Errorf("Range: %d, %d bytes", r.StatusCode, len(b))
	}
	if r, _ := ask("GET", "/missing", ""); r.StatusCode != 404 {
		t.Errorf("missing page: %d", r.StatusCode)
	}
	const answers = 7

	srv.stop(t) // the server's writes are over
	mu.Lock()
	defer mu.Unlock()
	if got := sends[c.LocalAddr().String()]; got != answers {
		t.Errorf("%d writes for %d answers, want one each", got, answers)
	}
}
