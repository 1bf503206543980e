package serve

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
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
			c := Cork(r)
			defer c.Uncork(w)
			w.Header().Set("X-Corked", strconv.FormatBool(c != nil))
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Header().Set("X-Proto", r.Proto)
		_, _ = w.Write(testBody(n))
	})
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = NewListener(ts.Listener, nil, func(net.Conn, int) { cs.sends.Add(1) })
	ts.Config.ConnContext = ConnContext
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

// getBody GETs url through client and returns the response and its body.
func getBody(t *testing.T, client *http.Client, url string) (*http.Response, string) {
	t.Helper()
	res, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
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
					res, body := getBody(t, client, cs.URL+"/"+strconv.Itoa(tc.size))
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
			res, body := getBody(t, cs.Client(), cs.URL+"/"+strconv.Itoa(size))
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
		defer Cork(r).Uncork(w)
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
	ts.Listener = NewListener(ts.Listener, nil, nil)
	ts.Config.ConnContext = ConnContext
	ts.Start()
	defer ts.Close()
	for range 2 { // the second on the kept-alive connection
		res, body := getBody(t, ts.Client(), ts.URL)
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
	cl := NewListener(ln, nil, nil)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := cl.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := (<-accepted).(*Conn)
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
	c.Uncork(httptest.NewRecorder())
	if _, err := c.ReadFrom(strings.NewReader("x")); err == nil {
		t.Error("ReadFrom after a failure succeeded")
	}
}

// TestBatchedHTTP2Writes counts the socket writes of HTTP/2 responses
// over TLS, one request at a time on one connection, with one P (as on a
// server pinned to a core, where batching matters most): once a site
// request has made its connection batch (Cork), a response's HEADERS and
// DATA leave in one write, where net/http's frame writer alone flushes
// the HEADERS in a write of their own.
func TestBatchedHTTP2Writes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const requests, size = 40, 3290 // the benchmark's gzipped page
	writes := map[bool]int64{}
	for _, batched := range []bool{true, false} {
		cs := newCoalescingServer(t, batched, true, true)
		client := cs.Client()
		res, _ := getBody(t, client, cs.URL+"/"+strconv.Itoa(size)) // the connection's set-up
		if res.ProtoMajor != 2 {
			t.Fatalf("served over %s, want HTTP/2", res.Proto)
		}
		before := cs.sends.Load()
		for range requests {
			res, body := getBody(t, client, cs.URL+"/"+strconv.Itoa(size))
			if res.StatusCode != 200 || !bytes.Equal([]byte(body), testBody(size)) {
				t.Fatalf("status %d, body of %d bytes differs", res.StatusCode, len(body))
			}
		}
		cs.Close()
		writes[batched] = cs.sends.Load() - before
	}
	t.Logf("writes for %d responses: batched %d, not batched %d", requests, writes[true], writes[false])
	if writes[false] < 2*requests {
		t.Errorf("not batched: %d writes for %d responses, want 2 each (HEADERS, DATA)", writes[false], requests)
	}
	if writes[true] > requests*5/4 {
		t.Errorf("batched: %d writes for %d responses, want about 1 each", writes[true], requests)
	}
}

// TestBatchedHTTP2Close closes a batching connection right after a
// response: what it held (the last frames, TLS's close_notify) is sent
// before the socket closes, and a streamed body arrives whole.
func TestBatchedHTTP2Close(t *testing.T) {
	cs := newCoalescingServer(t, true, true, true)
	client := cs.Client()
	for _, n := range []int{0, 100, 16118, 70_000, 300_000} {
		res, body := getBody(t, client, cs.URL+"/"+strconv.Itoa(n))
		if res.ProtoMajor != 2 || res.StatusCode != 200 || !bytes.Equal([]byte(body), testBody(n)) {
			t.Fatalf("/%d over %s: status %d, body of %d bytes differs", n, res.Proto, res.StatusCode, len(body))
		}
	}
	client.CloseIdleConnections()
	cs.Close()
}

// TestBatchedDeadline writes to a batching connection, then sets a write
// deadline in the past and closes it, as TLS's Close does after its
// close_notify: what was held reaches the peer all the same.
func TestBatchedDeadline(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the flusher has not run yet
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl := NewListener(ln, nil, nil)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := cl.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c := (<-accepted).(*Conn)
	c.batch()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("close_notify")); err != nil {
		t.Fatal(err)
	}
	c.SetWriteDeadline(time.Now())
	c.Close()
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(peer)
	if err != nil || string(got) != "close_notify" {
		t.Fatalf("the peer read %q, %v; want the held bytes", got, err)
	}
}

// TestBatchedStuckPeerClose has a batching connection's flusher blocked
// on a peer that reads nothing (its socket buffers full, no write
// deadline), then sets a deadline and closes the connection, as
// net/http's HTTP/2 server and TLS do to abort such a client: neither
// may wait behind the blocked write, or the connection, its goroutines
// and its place under the client's cap would be held for as long as the
// peer stays silent.
func TestBatchedStuckPeerClose(t *testing.T) {
	defer func(d time.Duration) { flushTimeout = d }(flushTimeout)
	flushTimeout = 300 * time.Millisecond
	for _, mode := range []string{"batching", "corked"} {
		t.Run(mode, func(t *testing.T) { testStuckPeerClose(t, mode) })
	}
}

// testStuckPeerClose is TestBatchedStuckPeerClose for a batching or a
// corked (HTTP/1) connection.
func testStuckPeerClose(t *testing.T, mode string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl := NewListener(ln, nil, nil)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := cl.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c := (<-accepted).(*Conn)
	if mode == "batching" {
		c.batch()
	} else {
		c.cork()
	}
	// Fill the socket's buffers: the peer never reads. Each write is held
	// and sent by the flusher, which in the end blocks in the kernel.
	chunk := make([]byte, maxBatched)
	filled := make(chan struct{})
	go func() {
		defer close(filled)
		for range 1024 { // 64 MiB: far past loopback's buffers
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	select {
	case <-filled:
		t.Fatal("64 MiB written to a peer that reads nothing")
	case <-time.After(200 * time.Millisecond): // the writes are blocked by now, or soon
	}
	done := make(chan struct{})
	go func() {
		if mode == "batching" {
			c.SetWriteDeadline(time.Now().Add(time.Second))
		}
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SetWriteDeadline and Close waited behind a write blocked on a silent peer")
	}
	<-filled // the blocked writes fail once the socket is closed
}
