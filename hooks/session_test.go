package hooks

import (
	"net/http"
	"strings"
	"testing"
)

// TestSessionCookieUnderTLS: whenever the web host is reached over TLS
// (--https, or an https --public-url in front of a TLS-ending proxy,
// however the scheme is written) the session cookie is
// __Host-sitedrop_session, Secure, host-only and for the whole path, so no
// other host (a site under the same parent domain) can plant or overwrite
// it; a cookie without the prefix is then not honoured.
func TestSessionCookieUnderTLS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, publicURL string
		listenTLS       bool
		secure          bool
	}{
		{"plain HTTP", "", false, false},
		{"plain HTTP public URL", "http://web.test", false, false},
		{"https public URL (proxy ends TLS)", "https://web.test", false, true},
		{"https public URL with a port", "https://web.test:8443/", false, true},
		{"https public URL in capitals", "HTTPS://Web.Test", false, true},
		{"--https", "", true, true},
		{"--https behind an http public URL", "http://web.test", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			app, sd := newFixtureApp(t, func(cfg *Config) { cfg.PublicURL = c.publicURL })
			if c.listenTLS {
				sd.cfg.listenScheme = "https" // what serving with --https sets
			}
			mux := newMux(t, app)
			res, body := do(t, mux, http.MethodPost, "http://web.test/auth/session", "", bearer(keyAlice))
			if res.StatusCode != 200 || len(res.Cookies()) != 1 {
				t.Fatalf("%d %q, cookies %v", res.StatusCode, body, res.Header.Values("Set-Cookie"))
			}
			ck := res.Cookies()[0]
			wantName := "sitedrop_session"
			if c.secure {
				wantName = "__Host-sitedrop_session"
			}
			if ck.Name != wantName || ck.Secure != c.secure || ck.Path != "/" || ck.Domain != "" || !ck.HttpOnly {
				t.Fatalf("cookie %q", res.Header.Get("Set-Cookie"))
			}
			// a cookie a site planted without the prefix
			res, _ = do(t, mux, http.MethodGet, "http://web.test/account", "", map[string]string{"Cookie": "sitedrop_session=" + sessionAlice})
			if signedIn := res.StatusCode == 200; signedIn == c.secure {
				t.Fatalf("planted plain cookie: %d", res.StatusCode)
			}
			res, body = do(t, mux, http.MethodGet, "http://web.test/account", "", map[string]string{"Cookie": wantName + "=" + ck.Value})
			if res.StatusCode != 200 || !strings.Contains(body, "alice@example.com") {
				t.Fatalf("own cookie: %d", res.StatusCode)
			}
		})
	}
}
