package hooks

import (
	"testing"

	"sitedrop/hooks/server"
)

// TestHSTS: the web host sends Strict-Transport-Security when it is
// reached over https (here: an https public URL behind a proxy), never
// over plain HTTP, and sites never get it.
func TestHSTS(t *testing.T) {
	for _, c := range []struct {
		name, publicURL, url, want string
	}{
		{"https web host", "https://web.test", "http://web.test/", server.HSTS},
		{"https API error", "https://web.test", "http://web.test/deploy/nope", server.HSTS},
		{"plain web host", "", "http://web.test/", ""},
		{"site under https", "https://web.test", "http://alice-site.sites.test/", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			app, _ := newFixtureApp(t, func(cfg *Config) { cfg.PublicURL = c.publicURL })
			res, _ := do(t, newMux(t, app), "GET", c.url, "", bearer(keyAlice))
			if got := res.Header.Get("Strict-Transport-Security"); got != c.want {
				t.Errorf("Strict-Transport-Security = %q, want %q (status %d)", got, c.want, res.StatusCode)
			}
		})
	}
}
