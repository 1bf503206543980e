package analytics

import (
	"strings"
	"testing"
)

// FuzzReferrerHost feeds the hand-written Referer parser arbitrary headers:
// it must not panic, and what it keeps is a bare, lower-case host of at most
// 253 bytes (ASCII letters lowered; other bytes kept) (no path, query, fragment, user info or port separator left in
// front of it), never the site's own.
func FuzzReferrerHost(f *testing.F) {
	for _, s := range []string{
		"https://news.example.org/x?y#z", "http://user:pw@WWW.Example.COM:8080/", "https://[::1]:443/",
		"HTTPS://a", "http://", "ftp://x", "https://site.localhost/", "https://@/", "http://a@b@c/",
	} {
		f.Add(s, "site.localhost:8090")
	}
	f.Fuzz(func(t *testing.T, ref, site string) {
		h := ReferrerHost(ref, site)
		if h == "" {
			return
		}
		if len(h) > 253 || strings.ContainsAny(h, "/?#@") || strings.ContainsAny(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("ReferrerHost(%q) = %q: not a bare lower-case host", ref, h)
		}
		_ = IsBot(ref) // the user-agent check takes any bytes too
	})
}
