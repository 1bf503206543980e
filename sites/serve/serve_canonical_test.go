package serve

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"sitedrop/sites"
)

// canonicalFiles is a site with every shape of page: a root index, a
// page file, a directory index, both for one name, and non-HTML files.
var canonicalFiles = map[string][2]string{
	"index.html":             {htmlType, "home"},
	"about.html":             {htmlType, "about"},
	"docs/index.html":        {htmlType, "docs"},
	"docs/intro.html":        {htmlType, "intro"},
	"both.html":              {htmlType, "both file"},
	"both/index.html":        {htmlType, "both dir"},
	"raw":                    {"text/plain; charset=utf-8", "raw file"},
	"raw.html":               {htmlType, "raw page"},
	"notes.txt":              {"text/plain; charset=utf-8", "notes"},
	"app.js":                 {"text/javascript; charset=utf-8", "js"},
	"café/index.html":        {htmlType, "café"},
	`\evil.com/index.html`:   {htmlType, "backslash"},
	"evil.com/index.html":    {htmlType, "evil"},
	"guide/index/index.html": {htmlType, "guide index dir"},
}

// TestServeCanonicalURLs: one URL per page, the others redirect to it
// with 308 and the query kept.
func TestServeCanonicalURLs(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, canonicalFiles)
	for _, c := range []struct {
		path     string
		status   int
		location string // for 308
		body     string // for 200
	}{
		// The canonical URLs.
		{"/", 200, "", "home"},
		{"/about", 200, "", "about"},
		{"/docs/", 200, "", "docs"},
		{"/docs/intro", 200, "", "intro"},
		{"/notes.txt", 200, "", "notes"},
		{"/app.js", 200, "", "js"},

		// Their other spellings.
		{"/index", 308, "/", ""},
		{"/index.html", 308, "/", ""},
		{"/index.html?x=1&y=2", 308, "/?x=1&y=2", ""},
		{"/about.html", 308, "/about", ""},
		{"/about.html?ref=a", 308, "/about?ref=a", ""},
		{"/about/", 308, "/about", ""},
		{"/docs", 308, "/docs/", ""},
		{"/docs?x=1", 308, "/docs/?x=1", ""},
		{"/docs/index", 308, "/docs/", ""},
		{"/docs/index.html", 308, "/docs/", ""},
		{"/docs/index.html?q=%20", 308, "/docs/?q=%20", ""},
		{"/docs/intro.html", 308, "/docs/intro", ""},
		{"/docs/intro/", 308, "/docs/intro", ""},
		{"/guide/index/", 200, "", "guide index dir"},
		{"/guide/index", 308, "/guide/index/", ""}, // a directory named index
		{"/caf%C3%A9", 308, "/caf%C3%A9/", ""},
		{"/caf%C3%A9/index.html", 308, "/caf%C3%A9/", ""},

		// Both about.html and about/index.html: /both is the file, /both/ the directory.
		{"/both", 200, "", "both file"},
		{"/both/", 200, "", "both dir"},
		{"/both.html", 308, "/both", ""},
		{"/both/index.html", 308, "/both/", ""},
		{"/both/index", 308, "/both/", ""},

		// A file without extension takes /raw: raw.html keeps its own URL.
		{"/raw", 200, "", "raw file"},
		{"/raw.html", 200, "", "raw page"},
		{"/raw/", 404, "", ""}, // not a redirect to /raw, which is another file

		// A file that is not HTML is served at its own path only.
		{"/notes", 404, "", ""},
		{"/notes.txt/", 404, "", ""},
		{"/app.js/", 404, "", ""},

		// A redirect never leaves the site.
		{"//about.html", 308, "/about", ""},
		{"//index.html", 308, "/", ""},
		{"///docs/index.html", 308, "/docs/", ""},
		{"//evil.com/index.html", 308, "/evil.com/", ""},
		{"//evil.com", 308, "/evil.com/", ""},
		{"/%2Fevil.com/index.html", 308, "/evil.com/", ""},
		{`/\evil.com/index.html`, 308, "/%5Cevil.com/", ""},
		{`/\evil.com`, 308, "/%5Cevil.com/", ""},
	} {
		res := get(srv, http.MethodGet, c.path, nil)
		if res.StatusCode != c.status {
			t.Errorf("%s: %d, want %d (Location %q)", c.path, res.StatusCode, c.status, res.Header.Get("Location"))
			continue
		}
		loc := res.Header.Get("Location")
		if c.status == 308 {
			if loc != c.location {
				t.Errorf("%s: Location %q, want %q", c.path, loc, c.location)
			}
			if res.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("%s: redirect Cache-Control %q", c.path, res.Header.Get("Cache-Control"))
			}
		} else if loc != "" {
			t.Errorf("%s: Location %q on %d", c.path, loc, c.status)
		}
		if c.status == 200 {
			if b := body(res); b != c.body {
				t.Errorf("%s: body %q, want %q", c.path, b, c.body)
			}
		}
	}
}

// TestServeCanonicalRedirectsLand: every redirect lands, in one step,
// on a 200 answer, in a plain site, an SPA and a site with 404.html.
func TestServeCanonicalRedirectsLand(t *testing.T) {
	paths := []string{"/index", "/index.html", "/about.html", "/about/", "/docs", "/docs/index",
		"/docs/index.html", "/docs/intro.html", "/docs/intro/", "/both.html", "/both/index.html",
		"/both/index", "//about.html", "/caf%C3%A9"}
	for _, spa := range []bool{false, true} {
		srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive, IsSPA: spa}, canonicalFiles)
		for _, p := range paths {
			res := get(srv, http.MethodGet, p, nil)
			loc := res.Header.Get("Location")
			if res.StatusCode != 308 || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
				t.Errorf("spa=%v %s: %d to %q", spa, p, res.StatusCode, loc)
				continue
			}
			u, err := url.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			if again := get(srv, http.MethodGet, u.EscapedPath(), nil); again.StatusCode != 200 {
				t.Errorf("spa=%v %s → %s: %d", spa, p, loc, again.StatusCode)
			}
		}
	}
}

// FuzzServeRedirect: for any request path, a redirect stays on the site
// (a Location whose path starts with one "/" and has no "\") and lands on an answer
// that is not a redirect.
func FuzzServeRedirect(f *testing.F) {
	srv, _ := newTestServer(f, &sites.Site{Slug: "demo", Status: sites.StatusActive}, canonicalFiles)
	for _, p := range []string{"/", "//about.html", "/docs", `/\evil.com`, "/%2F%2Fx/index.html", "/a/../index", "/both/index"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse("http://demo.sites.test" + p)
		if err != nil || u.Host != "demo.sites.test" || u.Path == "" {
			return
		}
		serve := func(u *url.URL) *http.Response {
			rec := httptest.NewRecorder()
			srv.ServeSite(rec, &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}, "demo")
			return rec.Result()
		}
		res := serve(u)
		if res.StatusCode != http.StatusPermanentRedirect {
			return
		}
		loc := res.Header.Get("Location")
		locPath, _, _ := strings.Cut(loc, "?") // the query is the request's, kept as sent
		if !strings.HasPrefix(locPath, "/") || strings.HasPrefix(locPath, "//") || strings.Contains(locPath, `\`) {
			t.Fatalf("%q: Location %q leaves the site", p, loc)
		}
		target, err := url.Parse(loc)
		if err != nil {
			t.Fatalf("%q: Location %q: %v", p, loc, err)
		}
		if again := serve(target); again.StatusCode == http.StatusPermanentRedirect {
			t.Fatalf("%q: %q redirects again to %q", p, loc, again.Header.Get("Location"))
		}
	})
}
