package certs

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sitedrop/sites"
)

func TestRedirectHandler(t *testing.T) {
	hosts := sites.NewHostSplit("web.test", "sites.test")
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("app")) })
	challenges := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/acme-challenge/") {
				w.Write([]byte("key authorization"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	custom := func(hostport string) (string, bool) {
		return "docs.example.org", hostport == "docs.example.org" || hostport == "DOCS.example.org:80"
	}
	h := RedirectHandler(hosts, "443", app, challenges, custom)
	for _, c := range []struct {
		method, host, target string
		status               int
		location, body       string
	}{
		{"GET", "alice-site.sites.test", "/a?b=c", 308, "https://alice-site.sites.test/a?b=c", ""},
		{"POST", "web.test:80", "/deploy", 308, "https://web.test/deploy", ""},
		{"GET", "WWW.web.test", "/", 308, "https://web.test/", ""},
		{"GET", "nosuch.sites.test", "/", 308, "https://nosuch.sites.test/", ""},
		{"GET", "a.b.sites.test", "/", 421, "", `{"error":"unknown host"}` + "\n"},
		{"GET", "alice-site.sites.test:1:2", "/", 400, "", "Invalid Host header\n"},
		{"GET", "alice-site.sites.test.", "/api/health", 400, "", "Invalid Host header\n"},
		{"GET", "[web.test]", "/", 400, "", "Invalid Host header\n"},
		{"GET", "nosuch.sites.test", "/api/health", 308, "https://nosuch.sites.test/api/health", ""},
		{"GET", "alice-site.sites.test", "/api/health", 308, "https://alice-site.sites.test/api/health", ""},
		{"GET", "alice-site.sites.test", "/.well-known/acme-challenge/tok", 200, "", "key authorization"},
		{"GET", "127.0.0.1", "/api/health", 200, "", "app"},
		{"HEAD", "web.test", "/api/health", 200, "", ""},
		{"POST", "web.test", "/api/health", 308, "https://web.test/api/health", ""},
		{"GET", "evil.example", "/", 421, "", `{"error":"unknown host"}` + "\n"},
		{"GET", "evil.example", "/api/health", 200, "", "app"}, // probes send any host
		{"HEAD", "sitedrop-web-1:80", "/api/health", 200, "", ""},
		{"GET", "", "/api/health", 200, "", "app"}, // HTTP/1.0 without Host
		{"GET", "10.0.0.1:80", "/api/health", 200, "", "app"},
		{"GET", "[::1]:80", "/api/health", 200, "", "app"},
		{"GET", "evil.example", "//evil.example/x", 421, "", `{"error":"unknown host"}` + "\n"},
		{"GET", "docs.example.org", "/a?b=c", 308, "https://docs.example.org/a?b=c", ""}, // a verified custom domain
		{"POST", "DOCS.example.org:80", "/submit", 308, "https://docs.example.org/submit", ""},
		{"GET", "docs.example.org", "/api/health", 308, "https://docs.example.org/api/health", ""}, // its paths are the site's
		{"GET", "docs.example.org", "/.well-known/acme-challenge/tok", 200, "", "key authorization"},
	} {
		req := httptest.NewRequest(c.method, "http://placeholder"+c.target, nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || rec.Header().Get("Location") != c.location || (c.body != "" && rec.Body.String() != c.body) {
			t.Errorf("%s %s%s = %d %q %q, want %d %q %q", c.method, c.host, c.target,
				rec.Code, rec.Header().Get("Location"), rec.Body.String(), c.status, c.location, c.body)
		}
	}
	// On another port, the port follows.
	for port, want := range map[string]string{"": "https://web.test/x", "8443": "https://web.test:8443/x"} {
		rec := httptest.NewRecorder()
		RedirectHandler(hosts, port, app, challenges, nil).ServeHTTP(rec, httptest.NewRequest("GET", "http://web.test/x", nil))
		if got := rec.Header().Get("Location"); got != want {
			t.Errorf("Location = %q on port %q, want %q", got, port, want)
		}
	}
}
