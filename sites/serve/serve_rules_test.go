package serve

import (
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestServeRules covers what the site server adds to the rules package:
// targets kept on the site, rule statuses with and without their page,
// rewrites that cannot reach the rule files, SPA after the rules, and the
// site's headers winning over the defaults on every kind of answer.
func TestServeRules(t *testing.T) {
	big := strings.Repeat("x", maxCachedFile+1) // sent from the blob, not the cache
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive, IsSPA: true}, map[string][2]string{
		"index.html": {htmlType, "<p>spa shell"},
		"page.html":  {htmlType, "<p>a page"},
		"big.bin":    {"application/octet-stream", big},
		"_redirects": {"text/plain", "/go/* /:splat 302\n/gone /missing.html 410\n/nothing /missing.html 404\n" +
			"/conf /_redirects 200\n/kept/* /page 200\n"},
		"_headers": {"text/plain", "/*\n  Cache-Control: max-age=5\n  X-Extra: yes\n/private/*\n  Basic-Auth: u:p\n"},
	})
	cases := []struct {
		path, headers  string
		status         int
		location, body string
	}{
		{"/go//evil.example/x", "", 308, "/go/evil.example/x", ""}, // the clean path first
		{`/go/\evil.example`, "", 302, "/%5Cevil.example", ""},     // escaped: not a second slash
		{"/go/%2Fevil.example", "", 308, "/go/evil.example", ""},
		{"/gone", "", 410, "", "Page not found"},
		{"/nothing", "", 404, "", "Page not found"},
		{"/conf", "", 404, "", "Page not found"}, // a rewrite cannot reach the rule files
		{"/_redirects", "", 200, "", "spa shell"},
		{"/kept/a", "", 200, "", "a page"},
		{"/client/route", "", 200, "", "spa shell"}, // SPA after the rules
		{"/page", "", 200, "", "a page"},
		{"/big.bin", "", 200, "", big},
		{"/big.bin", "bytes=0-3", 206, "", "xxxx"},
	}
	for _, tc := range cases {
		var h map[string]string
		if tc.headers != "" {
			h = map[string]string{"Range": tc.headers}
		}
		res := get(srv, http.MethodGet, tc.path, h)
		got := body(res)
		if res.StatusCode != tc.status || res.Header.Get("Location") != tc.location || !strings.Contains(got, tc.body) {
			t.Errorf("GET %s: %d %q %.40q, want %d %q %.40q", tc.path, res.StatusCode, res.Header.Get("Location"), got, tc.status, tc.location, tc.body)
		}
		if res.StatusCode == 308 { // the clean path first: the site's headers come with its answer
			continue
		}
		if res.Header.Get("X-Extra") != "yes" || res.Header.Get("Cache-Control") != "max-age=5" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", tc.path, res.Header)
		}
	}
	// Basic auth: the challenge carries none of the site's headers
	res := get(srv, http.MethodGet, "/private/x", nil)
	if res.StatusCode != 401 || res.Header.Get("X-Extra") != "" || res.Header.Get("Www-Authenticate") == "" {
		t.Errorf("private: %d %v", res.StatusCode, res.Header)
	}
}

// TestSafeLocation: a path target never becomes another host.
func TestSafeLocation(t *testing.T) {
	for in, want := range map[string]string{
		"/a":                 "/a",
		"//evil.example":     "/evil.example",
		`/\evil.example`:     "/evil.example",
		`///\/evil`:          "/evil",
		"https://ok.example": "https://ok.example",
		"/":                  "/",
	} {
		if got := safeLocation(in); got != want {
			t.Errorf("safeLocation(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestServeNeverSendsReservedHeaders: a _headers stored before a header
// was refused (here Clear-Site-Data, which would sign visitors out of the
// web host and of every protected site) is read again when the site
// loads, and what it may not set is never sent.
func TestServeNeverSendsReservedHeaders(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{
		"index.html": {htmlType, "<p>home"},
		"_headers": {"text/plain", "/*\n  Clear-Site-Data: \"*\"\n  X-Accel-Redirect: /internal/\n" +
			"  Set-Cookie: a=b\n  Strict-Transport-Security: max-age=60\n"},
	})
	res := get(srv, http.MethodGet, "/", nil)
	for _, name := range []string{"Clear-Site-Data", "X-Accel-Redirect", "Set-Cookie"} {
		if v := res.Header.Get(name); v != "" {
			t.Errorf("%s: %q sent", name, v)
		}
	}
	if res.StatusCode != 200 || res.Header.Get("Strict-Transport-Security") != "max-age=60" {
		t.Errorf("%d %v: the site's own headers were not sent", res.StatusCode, res.Header)
	}
}
