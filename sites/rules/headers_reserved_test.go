package rules

import (
	"strings"
	"testing"
)

// TestReservedHeaders is the audit of what a site's _headers may set: each
// header a site must not send is refused at parse (a Warning naming it)
// and, should a rule reach CompileHeaders some other way, never matched;
// the site's own policy headers pass.
func TestReservedHeaders(t *testing.T) {
	cases := []struct {
		line   string
		reason string // "" when the header is allowed
	}{
		// signs visitors out of every host of the parent domain
		{"Clear-Site-Data: \"cookies\"", "parent domain"},
		{"clear-site-data: \"*\"", "parent domain"},
		{"Clear-Site-Data: \"cache\"", "parent domain"},
		{"Set-Cookie: a=b", "cookies"},
		{"Set-Cookie2: a=b", "cookies"},
		// read by a reverse proxy in front of the server
		{"X-Accel-Redirect: /internal/secret", "reverse proxy"},
		{"X-Accel-Buffering: no", "reverse proxy"},
		{"x-accel-limit-rate: 1", "reverse proxy"},
		{"X-Sendfile: /etc/passwd", "reverse proxy"},
		{"X-Lighttpd-Send-File: /etc/passwd", "reverse proxy"},
		{"X-Envoy-Immediate-Health-Check-Fail: true", "reverse proxy"},
		// hop-by-hop and framing: the connection's, not the site's
		{"Proxy-Authenticate: Basic", "connection"},
		{"Proxy-Connection: close", "connection"},
		{"TE: trailers", "connection"},
		{"Connection: close", "set by the server"},
		{"Content-Length: 5", "set by the server"},
		{"Transfer-Encoding: chunked", "set by the server"},
		// the server's own answers
		{"WWW-Authenticate: Basic realm=x", "Basic-Auth"},
		{"Public-Key-Pins: pin-sha256=\"x\"; max-age=9", "certificate"},
		{"Public-Key-Pins-Report-Only: pin-sha256=\"x\"", "certificate"},
		// the site's own policy: allowed
		{"Strict-Transport-Security: max-age=63072000; includeSubDomains; preload", ""},
		{"Content-Security-Policy: default-src 'self'", ""},
		{"Server-Timing: db;dur=5", ""},
		{"Cache-Control: max-age=60", ""},
		{"X-Accelerated: yes", ""},
		{"Access-Control-Allow-Origin: *", ""},
	}
	for _, tc := range cases {
		rs, warns := ParseHeaders([]byte("/*\n  " + tc.line + "\n"))
		name, _, _ := strings.Cut(tc.line, ":")
		if tc.reason == "" {
			if len(warns) != 0 || len(rs) != 1 {
				t.Errorf("%s: refused (%+v), want allowed", tc.line, warns)
			}
			continue
		}
		if len(rs) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Reason, tc.reason) || !strings.Contains(warns[0].Reason, name) {
			t.Errorf("%s: rules %+v, warnings %+v; want one warning naming %s with %q", tc.line, rs, warns, name, tc.reason)
		}
		// defence in depth: a rule that did not come from ParseHeaders
		value := strings.TrimSpace(tc.line[len(name)+1:])
		h := CompileHeaders([]HeaderRule{{Pattern: "/*", Headers: []Header{{name, value}, {"X-Kept", "1"}}}})
		if m := h.Match("/page"); len(m.Headers) != 1 || m.Headers[0].Name != "X-Kept" {
			t.Errorf("%s: compiled and matched as %+v", tc.line, m.Headers)
		}
	}
}
