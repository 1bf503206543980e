package hooks

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDeployWorkBudget: a deploy's work (validating, the rule files,
// compressing and storing, the report) has one budget, anonymous deploys
// a tighter one; past it the deploy is answered 503 with Retry-After and
// nothing is committed: no deployment, no new version.
func TestDeployWorkBudget(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	deployments := func() int {
		n, err := app.CountRecords("deployments")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	versions := func() int {
		n, err := app.CountRecords("versions")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	site := `{"files":[{"path":"index.html","content":"<title>t</title><a href=/a>a</a>"},{"path":"_redirects","content":"/old /new 301"}]}`
	overBudget := func(what string, res *http.Response, body string) {
		t.Helper()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, "Deploy took too long") || !strings.Contains(body, "nothing was deployed") {
			t.Fatalf("%s over its work budget: %d %s (Retry-After %q)", what, res.StatusCode, body, res.Header.Get("Retry-After"))
		}
	}

	// anonymous: its own, tighter budget
	sd.anonDeployWork = time.Nanosecond
	before, vBefore := deployments(), versions()
	res, body := do(t, mux, http.MethodPost, "/deploy", site, map[string]string{"Content-Type": "application/json"})
	overBudget("an anonymous deploy", res, body)
	if deployments() != before || versions() != vBefore {
		t.Fatal("an anonymous deploy over its budget was committed")
	}
	// keyed deploys keep theirs
	res, body = do(t, mux, http.MethodPost, "/deploy", site, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a keyed deploy within its budget: %d %s", res.StatusCode, body)
	}

	// keyed create and update
	sd.keyedDeployWork = time.Nanosecond
	before, vBefore = deployments(), versions()
	res, body = do(t, mux, http.MethodPost, "/deploy", site, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	overBudget("a keyed deploy", res, body)
	res, body = do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, site, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	overBudget("an update", res, body)
	if deployments() != before || versions() != vBefore {
		t.Fatal("a keyed deploy over its budget was committed")
	}
}
