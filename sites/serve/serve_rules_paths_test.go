package serve

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestRulesSeeOneSpelling: every spelling of a path that would name the
// same file (repeated slashes, "." and "..", %2F, a doubled trailing
// slash) redirects to the clean path before anything is served, so
// Basic-Auth and forced rules cannot be stepped around. Found in review.
func TestRulesSeeOneSpelling(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{
		"index.html":         {htmlType, "home"},
		"secret/data.txt":    {"text/plain", "TOP SECRET"},
		"secret/page.html":   {htmlType, "SECRET PAGE"},
		"members/index.html": {htmlType, "MEMBERS ONLY"},
		"private/page.html":  {htmlType, "PRIVATE"},
		"_headers":           {"text/plain", "/secret/*\n  Basic-Auth: u:p\n/members\n  Basic-Auth: u:p\n"},
		"_redirects":         {"text/plain", "/private/*  /  302!\n"},
	})
	for path, want := range map[string]string{
		"//secret/data.txt":          "/secret/data.txt",
		"/./secret/data.txt":         "/secret/data.txt",
		"/x/../secret/data.txt":      "/secret/data.txt",
		"/secret/../secret/data.txt": "/secret/data.txt",
		"/%2Fsecret/data.txt":        "/secret/data.txt",
		"//secret/page":              "/secret/page",
		"//secret/page.html":         "/secret/page", // straight to the page's URL
		"/members//":                 "/members/",
		"//private/page":             "/private/page",
		"/a/../private/page":         "/private/page",
	} {
		res := get(srv, http.MethodGet, path, nil)
		if b := body(res); res.StatusCode != 308 || res.Header.Get("Location") != want || strings.Contains(b, "SECRET") || strings.Contains(b, "ONLY") {
			t.Errorf("GET %s: %d %q %q, want 308 to %s", path, res.StatusCode, res.Header.Get("Location"), b, want)
		}
	}
	for path, status := range map[string]int{"/secret/data.txt": 401, "/secret/page": 401, "/members/": 401, "/private/page": 302} {
		if res := get(srv, http.MethodGet, path, nil); res.StatusCode != status {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, status)
		}
	}

	// through a real server, with raw request lines (curl --path-as-is)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeSite(w, r, "demo") }))
	defer ts.Close()
	for _, p := range []string{"//secret/data.txt", "/x/../secret/data.txt"} {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: demo.sites.test\r\nConnection: close\r\n\r\n", p)
		b, _ := io.ReadAll(c)
		c.Close()
		if first, _, _ := strings.Cut(string(b), "\r\n"); !strings.Contains(first, "308") || strings.Contains(string(b), "TOP SECRET") {
			t.Errorf("GET %s over HTTP: %s", p, b)
		}
	}

	// a path longer than any file's answers 414 before any rule runs
	if res := get(srv, http.MethodGet, "/secret/"+strings.Repeat("a", maxRequestPath), nil); res.StatusCode != http.StatusRequestURITooLong {
		t.Errorf("a %d-byte path: %d", maxRequestPath+8, res.StatusCode)
	}
}

// TestProtectedNeverShared: under Basic-Auth, whatever Cache-Control the
// site or sitedrop set, no directive lets a shared cache keep the answer.
func TestProtectedNeverShared(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{
		"index.html":               {htmlType, "home"},
		"assets/app.css":           {"text/css", "body{}"},
		"assets/index-BT0GIVA5.js": {"text/javascript", "1"},
		"_headers":                 {"text/plain", "/*\n  Basic-Auth: u:p\n/assets/app.css\n  Cache-Control: public, s-maxage=600, must-revalidate, max-age=60\n"},
	})
	for path, want := range map[string]string{
		"/assets/app.css":           "private, max-age=60",
		"/assets/index-BT0GIVA5.js": "private, max-age=31536000, immutable",
		"/":                         "private, no-cache",
	} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			res := get(srv, m, path, map[string]string{"Authorization": "Basic dTpw"}) // u:p
			if res.StatusCode != 200 || res.Header.Get("Cache-Control") != want {
				t.Errorf("%s %s: %d Cache-Control %q, want %q", m, path, res.StatusCode, res.Header.Get("Cache-Control"), want)
			}
		}
	}
}

// TestRewriteToDirURL: a rewrite to "/about/" serves what /about/ serves
// (about/index.html when about.html exists too). Found in review.
func TestRewriteToDirURL(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{
		"index.html":       {htmlType, "home"},
		"about.html":       {htmlType, "ABOUT FILE"},
		"about/index.html": {htmlType, "ABOUT DIR"},
		"_redirects":       {"text/plain", "/team /about/ 200\n/people /about 200\n"},
	})
	for path, want := range map[string]string{"/about/": "ABOUT DIR", "/team": "ABOUT DIR", "/people": "ABOUT FILE"} {
		if got := body(get(srv, http.MethodGet, path, nil)); got != want {
			t.Errorf("GET %s: %q, want %q", path, got, want)
		}
	}
}
