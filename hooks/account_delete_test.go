package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// sessionAlice2 is the cookie of alice's second browser in the deletion
// tests.
const sessionAlice2 = "session-of-alice-second-browser-0000000000"

// aliceEverything is the fixture app where alice has one of everything an
// account can hold: a second site with two versions and a custom domain, a
// third site deleted earlier (its deployment.deleted delivery logged),
// submissions, a webhook and its deliveries, analytics, a second key, a
// second browser with a message waiting, a pending sign-in code. It
// returns what names alice: her ids, her address, her sites' ids.
func aliceEverything(t *testing.T, app *tests.TestApp, mux http.Handler) (needles []string) {
	t.Helper()
	sd := stateOf(t, app)
	alice := mustFindUser(t, app, "alice@example.com")
	mustSession(t, app, alice, sessionAlice2)
	sd.sessions.Flash(newRequest(http.MethodGet, "/", "", cookie(sessionAlice2)), accounts.Flash{Kind: ui.FlashSuccess, Text: "waiting"})
	if _, _, err := accounts.CreateAPIKey(context.Background(), app, alice, "laptop"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := accounts.NewLoginCode(app, "alice@example.com"); err != nil {
		t.Fatal(err)
	}
	deploy := func(slug, html string) string {
		res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"`+html+`","slug":"`+slug+`"}`, bearer(keyAlice))
		if res.StatusCode != 200 {
			t.Fatalf("deploy %s: %d %s", slug, res.StatusCode, body)
		}
		return jsonField(t, body, "id")
	}
	blog := deploy("alice-blog", "<h1>alice blog</h1>")
	old := deploy("alice-old", "<h1>alice old</h1>")
	mustWebhook(t, app, blog, "https://hooks.example.com/alice-blog")
	mustWebhook(t, app, old, "https://hooks.example.com/alice-old")
	// a second version: a deployment.updated delivery
	if res, body := do(t, mux, http.MethodPut, "/deploy/"+blog, `{"html":"<h1>alice blog 2</h1>"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("redeploy: %d %s", res.StatusCode, body)
	}
	// a site deleted before: its deployment.deleted delivery outlives it
	if res, body := do(t, mux, http.MethodDelete, "/deploy/"+old, "", bearer(keyAlice)); res.StatusCode/100 != 2 {
		t.Fatalf("delete alice-old: %d %s", res.StatusCode, body)
	}
	mustSubmission(t, app, blog, map[string]any{"email": "visitor@example.com"})
	mustSubmission(t, app, idAliceSite, map[string]any{"name": "visitor"})
	mustDomain(t, app, blog, "blog.alice.example", false)
	mustStats(t, app, blog, 1, 10, nil, nil)
	mustStats(t, app, idAliceSite, 0, 3, nil, nil)
	if n := len(deliveries(t, app, forms.EventDeploymentDeleted)); n != 1 {
		t.Fatalf("%d deployment.deleted deliveries before, want 1", n)
	}
	if n := len(deliveries(t, app, forms.EventDeploymentUpdated)); n != 1 {
		t.Fatalf("%d deployment.updated deliveries before, want 1", n)
	}
	// bob's things stay
	mustWebhook(t, app, idBobSite, "https://hooks.example.com/bob")
	mustSubmission(t, app, idBobSite, map[string]any{"name": "bob's visitor"})
	return []string{alice.Id, "alice@example.com", idAliceSite, blog, old, "alice-blog", "blog.alice.example", "hooks.example.com/alice"}
}

// mentions lists, for each table of the main database, the rows that
// contain one of needles in any column: what is left of someone.
func mentions(t testing.TB, app core.App, needles []string) []string {
	t.Helper()
	var tables []string
	if err := app.DB().NewQuery("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").Column(&tables); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, table := range tables {
		rows, err := app.DB().NewQuery("SELECT * FROM `" + table + "`").Rows()
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				s := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					s = string(b)
				}
				for _, n := range needles {
					if strings.Contains(s, n) {
						out = append(out, table+": "+n)
					}
				}
			}
		}
		rows.Close()
	}
	return out
}

// expectAliceGone checks that nothing of alice is left: no row names
// her, her sites answer 404, her content is collected, her second
// browser's message is gone; bob's site, webhook and submissions stay.
func expectAliceGone(t testing.TB, app *tests.TestApp, needles []string, aliceHash string) {
	t.Helper()
	sd := stateOf(t, app)
	if left := mentions(t, app, needles); len(left) > 0 {
		t.Errorf("left after the account's deletion: %v", left)
	}
	for _, host := range []string{"alice-site.sites.test", "alice-blog.sites.test"} {
		if code, _ := siteGet(t, app, host, "/"); code != http.StatusNotFound {
			t.Errorf("%s answers %d after the deletion, want 404", host, code)
		}
	}
	if fs := flashesOf(t, app, sessionAlice2); len(fs) != 0 {
		t.Errorf("the second browser's messages outlive it: %+v", fs)
	}
	sd.jobs.Run(sd.upkeep.Expire)
	if ok, _ := sd.svc.Store().Has(context.Background(), aliceHash); ok {
		t.Error("alice's content is still stored after the collector ran")
	}
	if code, _ := siteGet(t, app, "bob-site.sites.test", "/"); code != 200 {
		t.Errorf("bob's site answers %d", code)
	}
	if n, _ := app.CountRecords(forms.WebhooksCollection, dbxDeployment(idBobSite)); n != 1 {
		t.Errorf("bob has %d webhooks, want 1", n)
	}
	if n := countSubs(t, app, idBobSite); n != 1 {
		t.Errorf("bob has %d submissions, want 1", n)
	}
	if _, err := accounts.UserByAPIKey(app, keyBob); err != nil {
		t.Error("bob's key no longer works")
	}
}

// aliceHash is the stored blob of alice-site's page, which no one else has.
func aliceHash(t testing.TB, app *tests.TestApp) string {
	t.Helper()
	site, err := stateOf(t, app).svc.LoadSite("alice-site")
	if err != nil {
		t.Fatal(err)
	}
	return site.Files["index.html"].Hash
}

// TestAccountDeletionTakesEverything deletes alice's account from the
// account page: 303 to the home page, signed out, which says so; then
// nothing in the database names her.
func TestAccountDeletionTakesEverything(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	needles := aliceEverything(t, app, mux)
	hash := aliceHash(t, app)

	res, body := do(t, mux, http.MethodPost, "/account/delete", "email=+Alice%40Example.com+", withHeaders(sameOrigin, cookie(sessionAlice)))
	expectRedirect(t, res, "/?account=deleted")
	if c := res.Header.Get("Set-Cookie"); !strings.Contains(c, "sitedrop_session=;") || !strings.Contains(c, "Max-Age=0") {
		t.Errorf("the session cookie is not dropped: %q (%s)", c, body)
	}
	expectAliceGone(t, app, needles, hash)

	res, body = do(t, mux, http.MethodGet, "/?account=deleted", "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `data-testid="flash-success"`) || !strings.Contains(body, "Your account was deleted") {
		t.Errorf("home page after the deletion: %d, no message", res.StatusCode)
	}
	// the old cookie signs no one in
	if res, _ := do(t, mux, http.MethodGet, "/account", "", cookie(sessionAlice)); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the deleted account's cookie: %d, want 303 to sign in", res.StatusCode)
	}
}

// TestAdminUserDeletionTakesEverything: a superuser deleting the user in
// PocketBase's dashboard (its records API) leaves nothing either.
func TestAdminUserDeletionTakesEverything(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	needles := aliceEverything(t, app, mux)
	hash := aliceHash(t, app)
	alice := mustFindUser(t, app, "alice@example.com")

	res, body := do(t, mux, http.MethodDelete, "/api/collections/users/records/"+alice.Id, "",
		map[string]string{"Authorization": superuserToken(t, app)})
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("dashboard delete: %d %s", res.StatusCode, body)
	}
	expectAliceGone(t, app, needles, hash)
}

// TestAccountDeletionIsAllOrNothing: a failure late in the deletion (the
// keys, after the sites) rolls it all back: the account, its sites (still
// served) and its keys are all there.
func TestAccountDeletionIsAllOrNothing(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	app.OnRecordDelete(accounts.APIKeysCollection).BindFunc(func(e *core.RecordEvent) error {
		return errors.New("disk full")
	})
	res, _ := do(t, mux, http.MethodPost, "/account/delete", "email=alice%40example.com", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("a failed deletion answers %d, want 500", res.StatusCode)
	}
	if _, err := app.FindAuthRecordByEmail(accounts.UsersCollection, "alice@example.com"); err != nil {
		t.Fatal("the account is gone after a failed deletion")
	}
	if _, err := sites.FindDeployment(app, idAliceSite); err != nil {
		t.Fatal("the site is gone after a failed deletion")
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
		t.Fatalf("the site answers %d after a failed deletion", code)
	}
	if _, err := accounts.UserBySession(app, sessionAlice); err != nil {
		t.Fatal("signed out by a failed deletion")
	}
}

func TestAccountDeletePages(t *testing.T) {
	t.Parallel()
	aliceLeft := func(t testing.TB, app *tests.TestApp) {
		if _, err := sites.FindDeployment(app, idAliceSite); err != nil {
			t.Fatal("alice's site was deleted")
		}
		if _, err := accounts.UserBySession(app, sessionAlice); err != nil {
			t.Fatal("alice was signed out")
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the confirmation page says what goes", Method: http.MethodGet, URL: "/account/delete",
			Headers: cookie(sessionAlice), ExpectedStatus: 200, TestAppFactory: newTestApp,
			ExpectedContent: []string{`data-testid="account-delete-email"`, "<code class=\"long\">alice@example.com</code>",
				"1 site,", "0 custom domains", "1 API key<", "1 signed-in browser,", `action="/account/delete"`},
		},
		{
			Name: "signed out: to the sign-in page", Method: http.MethodGet, URL: "/account/delete",
			ExpectedStatus: 303, TestAppFactory: newTestApp,
		},
		{
			Name: "a wrong address: 303 back with a message, nothing deleted", Method: http.MethodPost, URL: "/account/delete",
			Body: formBody("email", "bob@example.com"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account/delete")
				expectFlash(t, app, sessionAlice, ui.FlashError, "nothing was deleted")
				aliceLeft(t, app)
			},
		},
		{
			Name: "nothing typed: nothing deleted", Method: http.MethodPost, URL: "/account/delete",
			Body: formBody("email", ""), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account/delete")
				aliceLeft(t, app)
			},
		},
		{
			Name: "from another origin: refused", Method: http.MethodPost, URL: "/account/delete",
			Body: formBody("email", "alice@example.com"),
			Headers: withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site",
				"Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus: 403, ExpectedContent: []string{`data-testid="error-page"`}, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) { aliceLeft(t, app) },
		},
		{
			Name: "the home page says nothing to a signed-in visitor", Method: http.MethodGet, URL: "/?account=deleted",
			Headers: cookie(sessionAlice), ExpectedStatus: 200, TestAppFactory: newTestApp,
			NotExpectedContent: []string{"Your account was deleted"},
		},
	})
}
