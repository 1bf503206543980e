package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// newTestServer serves the given files (path → content type, body) as the
// site "demo".
func newTestServer(t testing.TB, site *sites.Site, files map[string][2]string) (*Server, *int) {
	t.Helper()
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	site.Files = sites.Manifest{}
	for p, f := range files {
		h := store.HashBytes([]byte(f[1]))
		if err := blobStore.Put(context.Background(), h, []byte(f[1])); err != nil {
			t.Fatal(err)
		}
		site.Files[p] = sites.ManifestEntry{Hash: h, Size: int64(len(f[1])), Type: f[0]}
	}
	loads := new(int)
	srv := NewServer(func(slug string) (*sites.Site, error) {
		*loads++
		if slug != site.Slug {
			return nil, sites.ErrNotFound
		}
		cp := *site
		return &cp, nil
	}, blobStore)
	return srv, loads
}

func get(srv *Server, method, path string, headers map[string]string) *http.Response {
	req := httptest.NewRequest(method, "http://demo.sites.test"+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	srv.ServeSite(rec, req, "demo")
	return rec.Result()
}

func body(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

const htmlType = "text/html; charset=utf-8"

func TestServeResolution(t *testing.T) {
	files := map[string][2]string{
		"index.html":       {htmlType, "home"},
		"about.html":       {htmlType, "about"},
		"docs/index.html":  {htmlType, "docs"},
		"docs/intro.html":  {htmlType, "intro"},
		"404.html":         {htmlType, "custom 404"},
		"app.js":           {"text/javascript; charset=utf-8", "js"},
		"img/logo.png":     {"image/png", "png"},
		"data/report.json": {"application/json", "{}"},
	}
	scenarios := []struct {
		name   string
		spa    bool
		path   string
		status int
		body   string
		ctype  string
	}{
		{"root is index.html", false, "/", 200, "home", htmlType},
		{"page file redirects to its clean URL", false, "/about.html", 308, "", ""},
		{"exact file", false, "/data/report.json", 200, "{}", "application/json"},
		{"clean URL to .html", false, "/about", 200, "about", htmlType},
		{"dir without slash redirects", false, "/docs", 308, "", ""},
		{"dir with slash", false, "/docs/", 200, "docs", htmlType},
		{"nested clean URL", false, "/docs/intro", 200, "intro", htmlType},
		{"asset type from manifest", false, "/img/logo.png", 200, "png", "image/png"},
		{"dot segments redirect to the clean path", false, "/docs/../about", 308, "", ""},
		{"missing path gets the site's 404.html", false, "/nope", 404, "custom 404", htmlType},
		{"missing path in an SPA gets index.html", true, "/app/route/1", 200, "home", htmlType},
		{"SPA still serves real files", true, "/app.js", 200, "js", "text/javascript; charset=utf-8"},
		{"escape above the root stays inside", false, "/../../etc/passwd", 308, "", ""},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive, IsSPA: s.spa}, files)
			res := get(srv, http.MethodGet, s.path, nil)
			if res.StatusCode != s.status || body(res) != s.body {
				t.Fatalf("got %d, want %d %q", res.StatusCode, s.status, s.body)
			}
			if got := res.Header.Get("Content-Type"); got != s.ctype {
				t.Fatalf("Content-Type %q, want %q", got, s.ctype)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("missing nosniff")
			}
			if res.Header.Get("Set-Cookie") != "" {
				t.Fatal("site answers must not set cookies")
			}
		})
	}
}

func TestServeCachingHeaders(t *testing.T) {
	content := "<h1>hello</h1>"
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{"index.html": {htmlType, content}})
	res := get(srv, http.MethodGet, "/", nil)
	etag := res.Header.Get("ETag")
	if etag != `"`+store.HashBytes([]byte(content))+`"` {
		t.Fatalf("ETag %q is not the content hash", etag)
	}
	if res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("Cache-Control %q", res.Header.Get("Cache-Control"))
	}
	res = get(srv, http.MethodGet, "/", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified || body(res) != "" {
		t.Fatalf("If-None-Match: %d", res.StatusCode)
	}
	res = get(srv, http.MethodGet, "/", map[string]string{"If-None-Match": `"other"`})
	if res.StatusCode != 200 {
		t.Fatalf("stale If-None-Match: %d", res.StatusCode)
	}
	res = get(srv, http.MethodHead, "/", nil)
	if res.StatusCode != 200 || body(res) != "" || res.Header.Get("Content-Length") != "14" {
		t.Fatalf("HEAD: %d len %q", res.StatusCode, res.Header.Get("Content-Length"))
	}
	res = get(srv, http.MethodGet, "/", map[string]string{"Range": "bytes=1-3"})
	if res.StatusCode != http.StatusPartialContent || body(res) != "h1>" {
		t.Fatalf("Range: %d", res.StatusCode)
	}
	res = get(srv, http.MethodPost, "/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %d", res.StatusCode)
	}
}

func TestServeOfflineStates(t *testing.T) {
	files := map[string][2]string{"index.html": {htmlType, "x"}}
	for _, s := range []struct {
		name string
		site sites.Site
		want int
	}{
		{"active", sites.Site{Slug: "demo", Status: sites.StatusActive}, 200},
		{"not yet expired", sites.Site{Slug: "demo", Status: sites.StatusActive, ExpiresAt: time.Now().Add(time.Minute)}, 200},
		{"expired", sites.Site{Slug: "demo", Status: sites.StatusActive, ExpiresAt: time.Now().Add(-time.Second)}, 404},
		{"disabled", sites.Site{Slug: "demo", Status: "disabled"}, 404},
	} {
		t.Run(s.name, func(t *testing.T) {
			site := s.site
			srv, _ := newTestServer(t, &site, files)
			if res := get(srv, http.MethodGet, "/", nil); res.StatusCode != s.want {
				t.Fatalf("got %d, want %d", res.StatusCode, s.want)
			}
		})
	}
	t.Run("unknown slug", func(t *testing.T) {
		srv, _ := newTestServer(t, &sites.Site{Slug: "other", Status: sites.StatusActive}, files)
		if res := get(srv, http.MethodGet, "/", nil); res.StatusCode != 404 {
			t.Fatalf("got %d", res.StatusCode)
		}
	})
	t.Run("expiry takes effect while cached", func(t *testing.T) {
		site := sites.Site{Slug: "demo", Status: sites.StatusActive, ExpiresAt: time.Now().Add(time.Hour)}
		srv, _ := newTestServer(t, &site, files)
		if res := get(srv, http.MethodGet, "/", nil); res.StatusCode != 200 {
			t.Fatal("not served before expiry")
		}
		srv.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		if res := get(srv, http.MethodGet, "/", nil); res.StatusCode != 404 {
			t.Fatal("served after expiry")
		}
	})
}

func TestServeCacheAndChanging(t *testing.T) {
	site := &sites.Site{Slug: "demo", Status: sites.StatusActive}
	srv, loads := newTestServer(t, site, map[string][2]string{"index.html": {htmlType, "v1"}})
	for range 3 {
		get(srv, http.MethodGet, "/", nil)
	}
	if *loads != 1 {
		t.Fatalf("loaded %d times, want 1 (cached)", *loads)
	}
	site.Status = "disabled"
	srv.Changing("demo")() // a change that has committed
	if res := get(srv, http.MethodGet, "/", nil); res.StatusCode != 404 || *loads != 2 {
		t.Fatalf("after the change: %d, loads %d", res.StatusCode, *loads)
	}
}

// changed runs a whole change of slug on c: begun and ended.
func changed(c *siteCache, slug string) {
	c.begin([]string{slug}, time.Now())
	c.end([]string{slug})
}

func TestSiteCacheIgnoresStaleLoad(t *testing.T) {
	c := newSiteCache(1 << 20)
	gen := c.generation()
	changed(c, "demo") // an invalidation while a load was running
	c.put("demo", preparedSite("demo"), gen, time.Now())
	if _, ok := c.get("demo"); ok {
		t.Fatal("a load that started before the change was cached")
	}
	c.put("demo", preparedSite("demo"), c.generation(), time.Now())
	if _, ok := c.get("demo"); !ok {
		t.Fatal("a fresh load was not cached")
	}
}

// preparedSite is an empty site prepared for serving, as the server
// caches them.
func preparedSite(slug string) *site {
	return prepare(&sites.Site{Slug: slug})
}

func TestSiteCacheBounded(t *testing.T) {
	one := preparedSite("").cost()
	if one <= 0 {
		t.Fatalf("a prepared site costs %d", one)
	}
	c := newSiteCache(3 * one)
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		c.put(s, preparedSite(s), c.generation(), time.Now())
	}
	if len(c.sites) != 3 || c.used != 3*one {
		t.Fatalf("%d entries of %d bytes, want 3 of %d", len(c.sites), c.used, 3*one)
	}
	loaded := &sites.Site{Slug: "big", Files: sites.Manifest{}}
	for i := range 100 {
		loaded.Files[fmt.Sprintf("file-%d.html", i)] = sites.ManifestEntry{Hash: "h", Size: 1, Type: "text/html"}
	}
	big := prepare(loaded)
	c.put("big", big, c.generation(), time.Now())
	if _, ok := c.get("big"); !ok || len(c.sites) != 1 || c.used != big.cost() {
		t.Fatalf("a site over the whole budget is not kept alone: %d entries, %d bytes used", len(c.sites), c.used)
	}
	c.put("a", preparedSite("a"), c.generation(), time.Now())
	if _, ok := c.get("big"); ok || len(c.sites) != 1 || c.used != one {
		t.Fatalf("the next site did not evict the one over the budget: %d entries, %d bytes", len(c.sites), c.used)
	}
	for s := range c.sites {
		changed(c, s)
	}
	if c.used != 0 || len(c.sites) != 0 {
		t.Fatalf("forgetting every site left %d bytes accounted", c.used)
	}
}

func TestServeRedirectsToCanonicalPaths(t *testing.T) {
	files := map[string][2]string{
		"index.html":      {htmlType, "home"},
		"docs/index.html": {htmlType, "docs"},
		"about.html":      {htmlType, "about"},
		"café/index.html": {htmlType, "café"},
	}
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, files)
	for _, c := range []struct{ path, location string }{
		{"/docs", "/docs/"},
		{"/docs?x=1", "/docs/?x=1"},
		{"/about/", "/about"},
		{"//docs", "/docs/"}, // never "//docs/", which a browser reads as a host
		{"/x/../docs", "/docs/"},
		{"/caf%C3%A9", "/caf%C3%A9/"},
	} {
		res := get(srv, http.MethodGet, c.path, nil)
		if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != c.location {
			t.Errorf("%s: %d to %q, want 308 to %q", c.path, res.StatusCode, res.Header.Get("Location"), c.location)
		}
	}
}
