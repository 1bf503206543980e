package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestH1FastLengthMismatch: a blob whose length is not its manifest's
// (a store's damage) never goes out behind the head built from the
// manifest: the extra bytes would be read as the start of the next
// answer on the connection (a proxy in front reusing it would hand them
// to another client). The answer is net/http's: the head, the body cut,
// the connection closed.
func TestH1FastLengthMismatch(t *testing.T) {
	srv, site := h1Site(t, false)
	e := site.Files["tiny.txt"] // "tiny", 4 bytes
	e.Size = 3
	site.Files["tiny.txt"] = e
	hh := newH1Harness(t, srv, true, nil)
	raw := "GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n" +
		"GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\nConnection: close\r\n\r\n"
	all := func(addr string) string {
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
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		return h1DateLineRE.ReplaceAllString(string(b), "\r\nDate: X\r\n")
	}
	want, got := all(hh.ref), all(hh.addr)
	if got != want {
		t.Errorf("HTTP1 sent\n%q\nnet/http\n%q", got, want)
	}
	if strings.Contains(got, "tiny") {
		t.Errorf("4 bytes went behind a head of 3: %q", got)
	}
}

// TestServeFileLengthMismatch: a file sent from the store (past the
// content cache's size) whose blob is longer than its manifest's length
// sends that length and no more, so the connection's next answer starts
// where its head says: every answer on a keep-alive connection parses.
func TestServeFileLengthMismatch(t *testing.T) {
	srv, site := h1Site(t, false)
	e := site.Files["big.bin"]
	e.Size -= 10
	site.Files["big.bin"] = e
	hh := newH1Harness(t, srv, true, nil)
	raw := "GET /big.bin HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n" +
		"GET /tiny.txt HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n"
	for name, addr := range map[string]string{"HTTP1": hh.addr, "net/http": hh.ref} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := io.Copy(io.Discard, res.Body)
		if err != nil || n != e.Size || res.Header.Get("Content-Length") != strconv.FormatInt(e.Size, 10) {
			t.Fatalf("%s: %d bytes (%v), Content-Length %s, want %d", name, n, err, res.Header.Get("Content-Length"), e.Size)
		}
		res, err = http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("%s: the answer after the file: %v", name, err)
		}
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(b) != "tiny" {
			t.Fatalf("%s: the answer after the file: %d %q", name, res.StatusCode, b)
		}
	}
}
