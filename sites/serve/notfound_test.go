package serve

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestServeDefault404: a site without 404.html, and an unknown or offline
// site, answer a small self-contained HTML page; HEAD has no body.
func TestServeDefault404(t *testing.T) {
	files := map[string][2]string{"index.html": {htmlType, "home"}}
	live := &sites.Site{Slug: "demo", Status: sites.StatusActive}
	for _, c := range []struct {
		name, method, slug string
		site               *sites.Site
		message            string
	}{
		{"missing page", http.MethodGet, "demo", live, "Page not found"},
		{"missing page, HEAD", http.MethodHead, "demo", live, "Page not found"},
		{"unknown site", http.MethodGet, "nope", live, "Site not found"},
		{"unknown site, HEAD", http.MethodHead, "nope", live, "Site not found"},
		{"no slug", http.MethodGet, "", live, "Site not found"},
		{"disabled site", http.MethodGet, "demo", &sites.Site{Slug: "demo", Status: "disabled"}, "Site not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := newTestServer(t, c.site, files)
			res := getSlug(srv, c.method, "/missing", c.slug)
			b := body(res)
			if res.StatusCode != http.StatusNotFound {
				t.Fatalf("status %d", res.StatusCode)
			}
			for k, want := range map[string]string{
				"Content-Type":           "text/html; charset=utf-8",
				"Cache-Control":          "no-store",
				"X-Content-Type-Options": "nosniff",
			} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s %q, want %q", k, got, want)
				}
			}
			if res.Header.Get("ETag") != "" || res.Header.Get("Location") != "" {
				t.Error("the default 404 has an ETag or a Location")
			}
			full := defaultNotFound
			if c.message == "Site not found" {
				full = siteNotFound
			}
			if res.Header.Get("Content-Length") != strconv.Itoa(len(full)) {
				t.Errorf("Content-Length %q, want %d", res.Header.Get("Content-Length"), len(full))
			}
			if c.method == http.MethodHead {
				if b != "" {
					t.Fatalf("HEAD has a body: %.40q", b)
				}
				return
			}
			if b != string(full) {
				t.Fatal("the body is not the page")
			}
			for _, want := range []string{"<!doctype html>", `<html lang="en">`, "<title>" + c.message, "<h1>" + c.message,
				`name="viewport"`, "prefers-color-scheme: dark", "<style>"} {
				if !strings.Contains(b, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			for _, external := range []string{"http:", "https:", "//", "<script", "<link", "<img", "url(", "@import"} {
				if strings.Contains(b, external) {
					t.Errorf("the page refers to something outside it: %q", external)
				}
			}
		})
	}
}

// TestServeErrorsStayPlain: errors a browser does not navigate to stay
// short plain text.
func TestServeErrorsStayPlain(t *testing.T) {
	srv, _ := newTestServer(t, &sites.Site{Slug: "demo", Status: sites.StatusActive}, map[string][2]string{"index.html": {htmlType, "home"}})
	res := get(srv, http.MethodPost, "/", nil)
	if res.StatusCode != 405 || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" || body(res) != "Method not allowed\n" {
		t.Fatalf("POST: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// getSlug requests path from the site slug.
func getSlug(srv *Server, method, path, slug string) *http.Response {
	req := httptest.NewRequest(method, "http://"+slug+".sites.test"+path, nil)
	rec := httptest.NewRecorder()
	srv.ServeSite(rec, req, slug)
	return rec.Result()
}
