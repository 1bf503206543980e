package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestBigFileSendfile: a file too large for the content cache, read from
// the file store at each request, leaves through the kernel (sendfile)
// when serveFile answers it (a Range, here on the HTTP/1.1 server's
// general path), not copied through 32 KiB writes: the answer takes a
// few writes to the socket. (The store's blob embeds its *os.File; the
// connection's sendfile test wants the file itself.)
func TestBigFileSendfile(t *testing.T) {
	srv, site := h1Site(t, false)
	e := site.Files["big.bin"]
	full := bytes.Repeat([]byte("0123456789abcdef"), (maxCachedFile+4096)/16) // h1Site's
	h1 := NewHTTP1(HTTP1Options{SiteLabel: h1TestSiteLabel, Sites: srv, Serve: srv.ServeSite})
	var sends, bytesSent atomic.Int64
	addr := frontOnLoopback(t, srv, ListenFront{HTTP1: h1}, func(_ net.Conn, n int) { sends.Add(1); bytesSent.Add(int64(n)) })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		name, rng string
		want      int64
	}{
		{"whole", "", e.Size},
		{"one range", "bytes=100-", e.Size - 100},
	} {
		before, beforeBytes := sends.Load(), bytesSent.Load()
		req := "GET /big.bin HTTP/1.1\r\nHost: demo.sites.test\r\n"
		if tc.rng != "" {
			req += "Range: " + tc.rng + "\r\n"
		}
		fmt.Fprint(c, req+"\r\n")
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		if err != nil || int64(len(b)) != tc.want {
			t.Fatalf("%s: %d bytes (%v), want %d", tc.name, len(b), err, tc.want)
		}
		if !bytes.Equal(b, full[e.Size-tc.want:]) {
			t.Errorf("%s: not the file's bytes", tc.name)
		}
		// the server counts a write once it returned: maybe after the
		// client read it
		for end := time.Now().Add(2 * time.Second); bytesSent.Load()-beforeBytes < tc.want && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		if n := sends.Load() - before; n > 4 {
			t.Errorf("%s: %d writes for %d bytes, want a few (sendfile)", tc.name, n, tc.want)
		}
	}
}
