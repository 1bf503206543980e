package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// TestPrimarySitesBehindTrustedProxy: the primary, behind a load balancer
// in --trusted-proxies, tells its site visitors apart by X-Forwarded-For,
// as its API and the replicas do. One client's wrong passwords lock only
// that client out of a protected site's gate, and each client counts as a
// visitor of its own in the analytics. (The site server was once built
// with the proxies before they were parsed: every visitor was the proxy.)
func TestPrimarySitesBehindTrustedProxy(t *testing.T) {
	app, sd := newFixtureApp(t, func(c *Config) {
		c.TrustedProxies = []string{"192.0.2.1"} // httptest's RemoteAddr
		c.Analytics = true
	})
	defer app.Cleanup()
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	rec := mustDeploy(t, sd, alice, "proxysite000001", "proxy-site", "<h1>secret page</h1>", "P")
	hash, err := sites.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
	mustDeploy(t, sd, alice, "opensite0000001", "open-site", "<h1>hello</h1>", "O")
	mux := newMux(t, app)

	send := func(req *http.Request, client string) int {
		t.Helper()
		req.Header.Set("X-Forwarded-For", client)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	guess := func(client, password string) int {
		t.Helper()
		form := url.Values{"password": {password}, "next": {"/"}}
		req := httptest.NewRequest(http.MethodPost, "http://proxy-site.sites.test"+serve.GatePath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return send(req, client)
	}
	for i := range 10 {
		if code := guess("203.0.113.7", "wrong password"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d of the guessing client: %d, want 401", i+1, code)
		}
	}
	if code := guess("203.0.113.7", "wrong password"); code != http.StatusTooManyRequests {
		t.Fatalf("11th attempt of the guessing client: %d, want 429", code)
	}
	if code := guess("198.51.100.9", "correct horse battery"); code != http.StatusSeeOther {
		t.Fatalf("another client behind the same load balancer: %d, want 303", code)
	}

	for _, client := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"} {
		req := httptest.NewRequest(http.MethodGet, "http://open-site.sites.test/", nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
		if code := send(req, client); code != http.StatusOK {
			t.Fatalf("page for %s: %d", client, code)
		}
	}
	var visitors int64
	for _, day := range sd.analytics.Flush() {
		if day.Site == "opensite0000001" {
			visitors += day.Visitors
		}
	}
	if visitors != 3 {
		t.Fatalf("three clients behind the proxy counted as %d visitors, want 3", visitors)
	}
}
