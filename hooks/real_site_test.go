package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// generatedSite is a small site as today's generators emit it: Vite's
// and VitePress's hashed assets, an Astro stylesheet, a Hugo-style
// section page, a plain image, a custom 404, and both rule files.
var generatedSite = []string{
	"index.html", `<!doctype html><html lang="en"><head><title>Home</title>
<link rel="stylesheet" href="/assets/index-BT0GIVA5.css"><link rel="stylesheet" href="/_astro/post.CP3Lnalr.css">
<script type="module" src="/assets/app.DZopBupu.js"></script></head>
<body><a href="/about/">About</a> <a href="/blog/">Blog</a> <a href="/blog/first-post">First</a> <img src="/img/logo.png"></body></html>`,
	"about/index.html", `<!doctype html><title>About</title><a href="/">Home</a> <a href="../blog/">Blog</a>`,
	"blog/index.html", `<!doctype html><title>Blog</title><a href="first-post">First post</a> <a href="/">Home</a>`,
	"blog/first-post.html", `<!doctype html><title>First</title><a href="/blog/">Back</a><script src="/assets/chunk-4f5e2a1b3c9d8e7f.js"></script>`,
	"404.html", `<!doctype html><title>Not found</title><a href="/">Home</a>`,
	"assets/index-BT0GIVA5.css", `body{margin:0}`,
	"assets/app.DZopBupu.js", `console.log("app")`,
	"assets/chunk-4f5e2a1b3c9d8e7f.js", `console.log("chunk")`,
	"_astro/post.CP3Lnalr.css", `p{color:red}`,
	"img/logo.png", "\x89PNG\r\n\x1a\n",
	"_redirects", "/posts/* /blog/:splat 301\n",
	"_headers", "/*\n  X-Frame-Options: DENY\n",
}

// TestGeneratedSite deploys a generated site as a zip, crawls it from
// the home page (every link and asset answers 200 at the URL the page
// uses), and checks the cache policy, the canonical redirects, the rules,
// and that the rule files are not published.
func TestGeneratedSite(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t, func(c *Config) { c.MaxFiles = 20 })
	mux := newMux(t, app)
	req := httptest.NewRequest(http.MethodPost, "http://web.test/deploy?slug=generated", zipOf(t, generatedSite...))
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	req.Header.Set("Content-Type", "application/zip")
	res := roundTrip(t, mux, req)
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 200 || !strings.Contains(string(b), `"warnings":[]`) {
		t.Fatalf("deploy: %d %s", res.StatusCode, b)
	}
	get := func(path string) (*http.Response, string) {
		return do(t, mux, http.MethodGet, "http://generated.sites.test"+path, "", nil)
	}

	// crawl: every reference resolves to 200 where the page points
	refs := regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		res, body := get(page)
		if res.StatusCode != 200 {
			t.Errorf("GET %s = %d (Location %q)", page, res.StatusCode, res.Header.Get("Location"))
			continue
		}
		immutable := strings.Contains(res.Header.Get("Cache-Control"), "immutable")
		hashed := strings.HasPrefix(page, "/assets/") || strings.HasPrefix(page, "/_astro/")
		if immutable != hashed {
			t.Errorf("GET %s: Cache-Control %q", page, res.Header.Get("Cache-Control"))
		}
		if res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: the _headers block is missing", page)
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			continue
		}
		for _, m := range refs.FindAllStringSubmatch(body, -1) {
			ref := m[1]
			if !strings.HasPrefix(ref, "/") { // relative to the page's directory
				ref = page[:strings.LastIndexByte(page, '/')+1] + ref
			}
			ref = cleanRef(ref)
			if !seen[ref] {
				seen[ref] = true
				queue = append(queue, ref)
			}
		}
	}
	if len(seen) != 9 {
		t.Errorf("crawled %d URLs, want 9: %v", len(seen), seen)
	}

	for path, want := range map[string]struct {
		status   int
		location string
	}{
		"/index.html":            {308, "/"},
		"/about/index.html":      {308, "/about/"},
		"/about":                 {308, "/about/"},
		"/blog/first-post.html":  {308, "/blog/first-post"},
		"/blog/first-post/":      {308, "/blog/first-post"},
		"/posts/first-post?x=1":  {301, "/blog/first-post?x=1"},
		"/_redirects":            {404, ""},
		"/_headers":              {404, ""},
		"/assets/missing-a1.css": {404, ""},
	} {
		res, _ := get(path)
		if res.StatusCode != want.status || res.Header.Get("Location") != want.location {
			t.Errorf("GET %s = %d %q, want %d %q", path, res.StatusCode, res.Header.Get("Location"), want.status, want.location)
		}
	}
}

// cleanRef resolves "." and ".." segments of an absolute URL path.
func cleanRef(p string) string {
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case s == "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
		case s == "." || (s == "" && i > 0 && i < len(segs)-1):
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}
