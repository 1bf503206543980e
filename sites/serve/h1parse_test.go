package serve

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

func TestParseH1(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     h1Result
	}{
		{"get", "GET / HTTP/1.1\r\nHost: a.example.com\r\n\r\n", h1Done},
		{"head", "HEAD /a?b=c HTTP/1.1\r\nHost: a.example.com:8080\r\nAccept-Encoding: gzip, br\r\n\r\n", h1Done},
		{"http/1.0", "GET / HTTP/1.0\r\nHost: a\r\n\r\n", h1Done},
		{"length 0", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", h1Done},
		{"keep-alive", "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", h1Done},
		{"close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n", h1Done},
		{"empty value", "GET / HTTP/1.1\r\nHost: a\r\nX-A:\r\n\r\n", h1Done},
		{"obs-text value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: caf\xc3\xa9\r\n\r\n", h1Done},
		{"escape", "GET /a%20b HTTP/1.1\r\nHost: a\r\n\r\n", h1Done},

		{"partial method", "GE", h1More},
		{"partial line", "GET /index.ht", h1More},
		{"partial version", "GET / HTTP/1", h1More},
		{"partial header", "GET / HTTP/1.1\r\nHost: a\r\nAcc", h1More},
		{"partial end", "GET / HTTP/1.1\r\nHost: a\r\n\r", h1More},
		{"partial CR", "GET / HTTP/1.1\r\nHost: a\r", h1More},

		{"post", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx", h1Handoff},
		{"options", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"h2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", h1Handoff},
		{"lower-case method", "get / HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"absolute-form", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"asterisk", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", h1Handoff},
		{"HTTP/0.9", "GET /\r\n\r\n", h1Handoff},
		{"two spaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"bad escape", "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"fragment", "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"body", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", h1Handoff},
		{"two lengths", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", h1Handoff},
		{"chunked", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", h1Handoff},
		{"te and cl", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", h1Handoff},
		{"expect", "GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", h1Handoff},
		{"upgrade", "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", h1Handoff},
		{"connection upgrade", "GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n", h1Handoff},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", h1Handoff},
		{"no host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", h1Handoff},
		{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", h1Handoff},
		{"ipv6 host", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", h1Handoff},
		{"bad host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", h1Handoff},
		{"bare LF", "GET / HTTP/1.1\nHost: a\n\n", h1Handoff},
		{"bare LF in field", "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", h1Handoff},
		{"bare CR", "GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", h1Handoff},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", h1Handoff},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", h1Handoff},
		{"NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n", h1Handoff},
		{"DEL in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x7fc\r\n\r\n", h1Handoff},
		{"no name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", h1Handoff},
		{"leading CRLF", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"too long", "GET /" + strings.Repeat("a", h1MaxHead) + " HTTP/1.1\r\nHost: a\r\n\r\n", h1Handoff},
		{"too many fields", "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: b\r\n", h1MaxFields+1) + "\r\n", h1Handoff},
	} {
		var h h1Head
		if got := parseH1([]byte(tc.in), &h); got != tc.want {
			t.Errorf("%s: %.100q: got %d, want %d", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestParseH1Fields(t *testing.T) {
	in := "HEAD /a?b HTTP/1.1\r\nhost: Site.Example.com\r\naccept-ENCODING:  gzip \t\r\nx-some-thing: 1\r\nX-Some-Thing: 2\r\nConnection: close\r\n\r\nGET /next"
	var h h1Head
	if got := parseH1([]byte(in), &h); got != h1Done {
		t.Fatalf("got %d", got)
	}
	if !h.head || h.http10 || !h.close || string(h.target) != "/a?b" || string(h.host) != "Site.Example.com" {
		t.Fatalf("head %+v", h)
	}
	if want := strings.Index(in, "GET /next"); h.size != want {
		t.Fatalf("size %d, want %d", h.size, want)
	}
	var got []string
	for _, f := range h.fields[:h.n] {
		got = append(got, f.name+"="+string(f.value))
	}
	want := []string{"Accept-Encoding=gzip", "X-Some-Thing=1", "X-Some-Thing=2", "Connection=close"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("fields %q, want %q", got, want)
	}
}

// FuzzH1Parse checks that the parser never panics, and that every head
// it accepts is one net/http reads alike: http.ReadRequest accepts it,
// with the same method, target, version, host and header values, ends it
// at the same byte, and net/http's server would not refuse it.
func FuzzH1Parse(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a.example.com\r\n\r\n",
		"HEAD /a?b=c HTTP/1.0\r\nHost: a:80\r\nAccept-Encoding: gzip\r\nIf-None-Match: \"x\"\r\n\r\nGET / HTTP/1.1\r\n",
		"GET /%41 HTTP/1.1\r\nHost: a\r\nPragma: no-cache\r\nConnection: close, keep-alive\r\nContent-Length: 0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nhOST: a\r\nuser-agent: x\ty\r\nX: \xff\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var h h1Head
		if parseH1(in, &h) != h1Done {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(in), len(in)+16)
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("accepted %q, net/http: %v", in, err)
		}
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(rest, in[h.size:]) {
			t.Fatalf("%q: the head ends at %d, net/http leaves %q", in, h.size, rest)
		}
		method := "GET"
		if h.head {
			method = "HEAD"
		}
		if req.Method != method || req.RequestURI != string(h.target) || req.Host != string(h.host) ||
			req.ProtoMinor != map[bool]int{true: 0, false: 1}[h.http10] || req.Close != h.close ||
			req.ContentLength != 0 || req.Body != http.NoBody {
			t.Fatalf("%q: net/http read %s %s %s host %q close %v length %d", in, req.Method, req.RequestURI, req.Proto, req.Host, req.Close, req.ContentLength)
		}
		// what net/http's server checks on top of ReadRequest
		if !httpguts.ValidHostHeader(req.Host) {
			t.Fatalf("%q: net/http's server refuses host %q", in, req.Host)
		}
		for k, vs := range req.Header {
			if !httpguts.ValidHeaderFieldName(k) {
				t.Fatalf("%q: invalid name %q", in, k)
			}
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldValue(v) {
					t.Fatalf("%q: invalid value %q", in, v)
				}
			}
		}
		// the same header, as the connection builds it
		got := http.Header{}
		for _, f := range h.fields[:h.n] {
			got[f.name] = append(got[f.name], string(f.value))
		}
		if p := got["Pragma"]; len(p) > 0 && p[0] == "no-cache" && got["Cache-Control"] == nil {
			got["Cache-Control"] = []string{"no-cache"}
		}
		want := req.Header.Clone()
		delete(want, "Host")
		if len(got) != len(want) {
			t.Fatalf("%q: header %q, net/http %q", in, got, want)
		}
		for k, v := range want {
			if strings.Join(got[k], "\x00") != strings.Join(v, "\x00") || len(got[k]) != len(v) {
				t.Fatalf("%q: %s: %q, net/http %q", in, k, got[k], v)
			}
		}
	})
}
