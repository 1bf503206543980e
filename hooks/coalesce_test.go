package hooks

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

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
		c.Serve.OnSend = func(c net.Conn, _ int) {
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
