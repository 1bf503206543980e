package hooks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// TestWWWRedirectBehindTLSProxy: behind a proxy that terminates TLS (an
// https --public-url), www.<apex> redirects to the apex over https, as
// the site is served, not down to plain http.
func TestWWWRedirectBehindTLSProxy(t *testing.T) {
	app, sd := newBareApp(t, func(c *Config) { c.PublicURL = "https://web.test" })
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	rec := mustDeploy(t, sd, alice, "wwwtls000000001", "www-tls", "<h1>apex</h1>", "")
	col, err := app.FindCollectionByNameOrId(domains.Collection)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tlsp.test", "www.tlsp.test"} {
		d := core.NewRecord(col)
		d.Set("domain", name)
		d.Set("deployment", rec.Id)
		d.Set("status", domains.StatusVerified)
		d.Set("token", "tok")
		if err := app.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	w := httptest.NewRecorder()
	if !sd.domainRoutes().Serve(w, httptest.NewRequest(http.MethodGet, "http://www.tlsp.test/a?b=c", nil)) {
		t.Fatal("www.tlsp.test is not served as a custom domain")
	}
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "https://tlsp.test/a?b=c" {
		t.Fatalf("www behind TLS: %d to %q, want 301 to https://tlsp.test/a?b=c", w.Code, w.Header().Get("Location"))
	}
}
