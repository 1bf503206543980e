package serve

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestServeTakenDown: a taken-down site answers every path, the gate's
// too and a renamed site's old slug, with the takedown page: 410, the
// reason escaped, no-store, noindex; HEAD has no body.
func TestServeTakenDown(t *testing.T) {
	files := map[string][2]string{"index.html": {htmlType, "<h1>phish</h1>"}}
	reason := `phishing <script>alert(1)</script> & more`
	for _, c := range []struct {
		name, method, path string
		site               *sites.Site
	}{
		{"home", http.MethodGet, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, TakenDown: reason}},
		{"a file", http.MethodGet, "/index.html", &sites.Site{Slug: "demo", Status: sites.StatusActive, TakenDown: reason}},
		{"missing path", http.MethodGet, "/nope", &sites.Site{Slug: "demo", Status: sites.StatusActive, TakenDown: reason}},
		{"HEAD", http.MethodHead, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, TakenDown: reason}},
		{"paused too", http.MethodGet, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, Paused: true, TakenDown: reason}},
		{"a preview", http.MethodGet, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, Preview: "v1", TakenDown: reason}},
		{"protected", http.MethodGet, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, TakenDown: reason,
			Protection: &sites.Protection{PasswordHash: testHash(), Secret: "s"}}},
		{"an old slug", http.MethodGet, "/", &sites.Site{Slug: "demo", Status: sites.StatusActive, MovedTo: "new", TakenDown: reason}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := newTestServer(t, c.site, files)
			res := get(srv, c.method, c.path, nil)
			b := body(res)
			if res.StatusCode != http.StatusGone {
				t.Fatalf("status %d, want 410: %.80q", res.StatusCode, b)
			}
			for k, want := range map[string]string{
				"Content-Type":  "text/html; charset=utf-8",
				"Cache-Control": "no-store",
				"X-Robots-Tag":  "noindex",
			} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s %q, want %q", k, got, want)
				}
			}
			if res.Header.Get("Location") != "" {
				t.Errorf("a Location %q", res.Header.Get("Location"))
			}
			page := string(takedownPage(reason))
			if res.Header.Get("Content-Length") != strconv.Itoa(len(page)) {
				t.Errorf("Content-Length %q, want %d", res.Header.Get("Content-Length"), len(page))
			}
			if c.method == http.MethodHead {
				if b != "" {
					t.Fatalf("HEAD has a body: %.40q", b)
				}
				return
			}
			want := "This site was taken down for: phishing &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"
			if !strings.Contains(b, want) || strings.Contains(b, "<script>") || strings.Contains(b, "phish</h1>") {
				t.Fatalf("body %q, want the escaped reason and no content", b)
			}
		})
	}
}
