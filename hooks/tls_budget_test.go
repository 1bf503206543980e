package hooks

import (
	"net/http"
	"testing"
)

// TestHTTPSAnonymousCertsCannotStarveOwners: with a budget of 2 new
// on-demand certificates an hour, anonymous sites may take only their
// share (1); an owner's site still gets its certificate after anonymous
// sites have asked for more than that.
func TestHTTPSAnonymousCertsCannotStarveOwners(t *testing.T) {
	p := startPebbleServe(t, false, "--new-certs-per-hour", "2")
	acme, httpsAddr, client, web := p.acme, p.httpsAddr, p.client, p.web

	// a second live anonymous site beside the fixtures' anon-site
	res, body := doHTTP(t, client, http.MethodPost, web+"/deploy", `{"html":"<h1>anonymous</h1>"}`,
		map[string]string{"Content-Type": "application/json"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("anonymous deploy: %d %s", res.StatusCode, body)
	}
	anon := jsonField(t, body, "slug") + ".sites.test"

	if _, err := handshake(httpsAddr, "anon-site.sites.test", acme.roots); err != nil {
		t.Fatalf("the first anonymous site, within the anonymous share: %v", err)
	}
	if _, err := handshake(httpsAddr, anon, acme.roots); err == nil {
		t.Errorf("the second anonymous site got a certificate past the anonymous share")
	}
	// the owner's site is not starved by anonymous traffic
	if _, err := handshake(httpsAddr, "alice-site.sites.test", acme.roots); err != nil {
		t.Fatalf("an owner's site after anonymous sites used their share: %v", err)
	}
	// and the hour's budget is now used up for everyone
	if _, err := handshake(httpsAddr, "bob-site.sites.test", acme.roots); err == nil {
		t.Errorf("a certificate past the hour's budget")
	}
}
