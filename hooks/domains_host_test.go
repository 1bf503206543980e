package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestDomainTableKeptAcrossDeploys: the custom domains' route table is
// read again after what can move a route (a rename), not after every
// deploy of any site: a new site and a redeploy leave it loaded, so a
// custom domain's next request reads nothing, and a renamed site's domain
// serves it at once under its new slug.
func TestDomainTableKeptAcrossDeploys(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	mux := newMux(t, app)
	pia := mustFindUser(t, app, "pia@example.com")
	site := mustDeploy(t, sd, pia, "piahome00000001", "pia-home", "<h1>pia at home</h1>", "")
	mustDomain(t, app, site.Id, "pia.test", true)
	get := func(when string) {
		t.Helper()
		if status, body := hostGet(t, mux, "pia.test", "/"); status != http.StatusOK || !strings.Contains(body, "pia at home") {
			t.Fatalf("%s: pia.test = %d %q", when, status, body)
		}
	}
	get("verified")

	// another site: created, then redeployed
	res, body := do(t, mux, http.MethodPost, "http://web.test/deploy", `{"slug":"pia-other","html":"<h1>other</h1>"}`, bearer(keyPia))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	other, err := app.FindFirstRecordByData(sites.DeploymentsCollection, sites.FieldSlug, "pia-other")
	if err != nil {
		t.Fatal(err)
	}
	res, body = do(t, mux, http.MethodPut, "http://web.test/deploy/"+other.Id, `{"html":"<h1>other, again</h1>"}`, bearer(keyPia))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("redeploy: %d %s", res.StatusCode, body)
	}
	n := countStatements(t, app)
	get("after another site's deploys")
	if got := n.Load(); got != 0 {
		t.Errorf("the custom domain's request after other deploys ran %d SQL statements, want 0 (the route table kept)", got)
	}

	// a rename moves the route: served under the new slug at once, not
	// sent to the old slug's redirect
	if _, err := sd.svc.Rename(context.Background(), site, "pia-house"); err != nil {
		t.Fatal(err)
	}
	get("after the rename")
	if n.Load() == 0 {
		t.Error("the request after a rename read nothing: the route table was not loaded again")
	}
}
