package hooks

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/pocketbase/pocketbase/core"
)

// TestRequestLogEscapesControls: control characters a request carries
// (a path or query with %0d%0a, a header with ESC or a line separator)
// reach the request log (_logs) escaped, in its message and in its data,
// so no request can forge a log line or drive a terminal that shows the
// log. A raw CR in the request line is refused by the HTTP server before
// anything is logged.
func TestRequestLogEscapesControls(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	app.Settings().Logs.MaxDays = 7 // request logs are off in tests
	mux := newServedMux(t, app)
	requests := []struct {
		target  string
		headers map[string]string
		message string // the log's message holds it
	}{
		{"/x%0d%0aGET%20/forged%20200", nil, `GET /x\x0d\x0aGET /forged 200`},
		{"/api/health?next=%0d%0aforged%1b[31m", nil, `GET /api/health?next=\x0d\x0aforged\x1b[31m`},
		{"/api/health?ua", map[string]string{"User-Agent": "agent\x1b[2J\u2028forged", "Referer": "http://web.test/\x7fref\u0085"}, "GET /api/health?ua"},
	}
	for _, r := range requests {
		do(t, mux, http.MethodGet, "http://web.test"+r.target, "", r.headers)
	}

	// a raw CR in the request line, to a real server: refused (400)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /raw\rcr HTTP/1.1\r\nHost: web.test\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a raw CR in the request line: %d", res.StatusCode)
	}

	logs := waitForRequestLogs(t, app, len(requests))
	found := map[string]bool{}
	for _, l := range logs {
		for _, s := range logStrings(l) {
			if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) && r != ' ' }); i >= 0 {
				t.Errorf("log %q holds %q unescaped: %q", l.Message, s[i:], s)
			}
		}
		found[l.Message] = true
		if strings.Contains(l.Message, "/raw") {
			t.Errorf("the refused request was logged: %q", l.Message)
		}
		if l.Message == "GET /api/health?ua" {
			if ua, ref := fmt.Sprint(l.Data["userAgent"]), fmt.Sprint(l.Data["referer"]); ua != `agent\x1b[2J\u2028forged` || ref != `http://web.test/\x7fref\u0085` {
				t.Errorf("userAgent %q, referer %q", ua, ref)
			}
		}
	}
	for _, r := range requests {
		if !found[r.message] {
			t.Errorf("no log %q among %v", r.message, found)
		}
	}
}

// logStrings is every string of a log: its message and the strings of
// its data, nested ones included.
func logStrings(l *core.Log) []string {
	out := []string{l.Message}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, v := range l.Data {
		walk(v)
	}
	return out
}
