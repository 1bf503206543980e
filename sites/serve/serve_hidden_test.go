package serve

import (
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestServeHidesRuleFiles: _redirects and _headers at the root answer as
// if absent (the 404 path, or the SPA fallback); the same names deeper
// in the tree are ordinary files.
func TestServeHidesRuleFiles(t *testing.T) {
	files := map[string][2]string{
		"index.html":      {htmlType, "home"},
		"_redirects":      {"application/octet-stream", "/a /b 301"},
		"_headers":        {"application/octet-stream", "/*\n  X-A: b"},
		"docs/_redirects": {"application/octet-stream", "nested"},
	}
	for _, c := range []struct {
		name          string
		spa, custom   bool
		path          string
		status        int
		body, exclude string
	}{
		{"redirects, default 404", false, false, "/_redirects", 404, "", "/a /b"},
		{"headers, default 404", false, false, "/_headers", 404, "", "X-A"},
		{"headers, site 404", false, true, "/_headers", 404, "custom 404", ""},
		{"redirects, site 404", false, true, "/_redirects", 404, "custom 404", ""},
		{"redirects in an SPA", true, false, "/_redirects", 200, "home", ""},
		{"headers in an SPA", true, false, "/_headers", 200, "home", ""},
		{"as a directory", false, false, "/_redirects/", 404, "", "/a /b"},
		{"clean URL spelling", false, false, "/_redirects.html", 404, "", "/a /b"},
		{"nested is an ordinary file", false, false, "/docs/_redirects", 200, "nested", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := map[string][2]string{}
			for k, v := range files {
				fs[k] = v
			}
			if c.custom {
				fs["404.html"] = [2]string{htmlType, "custom 404"}
			}
			srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive, IsSPA: c.spa}, fs)
			res := get(srv, http.MethodGet, c.path, nil)
			b := body(res)
			if res.StatusCode != c.status {
				t.Fatalf("%d, want %d: %q", res.StatusCode, c.status, b)
			}
			if c.body != "" && b != c.body {
				t.Fatalf("body %q, want %q", b, c.body)
			}
			if c.exclude != "" && strings.Contains(b, c.exclude) {
				t.Fatalf("the rule file is served: %q", b)
			}
		})
	}
}
