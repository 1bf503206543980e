package serve

import (
	"io"
	"net"
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

