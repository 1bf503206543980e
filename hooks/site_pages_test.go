package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// Fixed ids of the site page tests' records.
const (
	idAliceHook     = "alicehook000001"
	idAliceSub      = "alicesub0000001"
	idBobSub        = "bobsub000000001"
	idFailedDeliver = "faileddeliver01"
	idPendingDelive = "pendingdeliver1"
)

// newSitePagesApp is the fixtures plus, on alice-site, a webhook with a
// failed and a pending delivery and a submission; on bob-site a
// submission.
func newSitePagesApp(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	hook := mustWebhook(t, app, idAliceSite, "https://93.184.216.34/hook")
	if _, err := app.NonconcurrentDB().Update(forms.WebhooksCollection, dbx.Params{"id": idAliceHook}, dbx.HashExp{"id": hook.Id}).Execute(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ id, dep string }{{idAliceSub, idAliceSite}, {idBobSub, idBobSite}} {
		rec := mustSubmission(t, app, s.dep, map[string]any{"msg": "line one\nline two"})
		if _, err := app.NonconcurrentDB().Update(forms.SubmissionsCollection, dbx.Params{"id": s.id}, dbx.HashExp{"id": rec.Id}).Execute(); err != nil {
			t.Fatal(err)
		}
	}
	col, _ := app.FindCollectionByNameOrId(forms.DeliveriesCollection)
	for _, d := range []struct{ id, status string }{{idFailedDeliver, forms.DeliveryFailed}, {idPendingDelive, forms.DeliveryPending}} {
		rec := core.NewRecord(col)
		rec.Set("id", d.id)
		rec.Set("deployment", idAliceSite)
		rec.Set("webhook", idAliceHook)
		rec.Set("event", forms.EventSubmission)
		rec.Set("url", "https://93.184.216.34/hook")
		rec.Set("type", forms.WebhookGeneric)
		rec.Set("secret", "whsec_test")
		rec.Set("payload", `{"event":"submission"}`)
		rec.Set("status", d.status)
		rec.Set("attempts", 8)
		rec.Set("last_status", 500)
		rec.Set("last_error", "HTTP 500: receiver broke")
		rec.Set("next_attempt_at", time.Now().Add(time.Hour))
		if err := app.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// wantFlash checks the message the last form post left for alice's next page.
func wantFlash(kind, text string) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		t.Helper()
		msgs := flashesOf(t, app, sessionAlice)
		for _, m := range msgs {
			if m.Kind == kind && strings.Contains(m.Text, text) {
				return
			}
		}
		t.Fatalf("no %s flash with %q: %+v", kind, text, msgs)
	}
}

// checks runs several AfterTestFuncs.
func checks(fs ...func(testing.TB, *tests.TestApp, *http.Response)) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, res *http.Response) {
		t.Helper()
		for _, f := range fs {
			f(t, app, res)
		}
	}
}

// wantCount checks how many records of collection match filter.
func wantCount(collection string, where dbx.Expression, want int) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		t.Helper()
		if n, err := app.CountRecords(collection, where); err != nil || int(n) != want {
			t.Fatalf("%s: %d records (%v), want %d", collection, n, err, want)
		}
	}
}

// formPost is a same-origin form post of alice (or of bob, as the session).
func formPost(session string) map[string]string {
	return withHeaders(sameOrigin, cookie(session))
}

func TestSitePageState(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	disabled := func(t testing.TB) *tests.TestApp {
		app := newSitePagesApp(t)
		rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		rec.Set("status", "disabled")
		if err := app.Save(rec); err != nil {
			t.Fatal(err)
		}
		return app
	}
	tabBar := func(current string) []string {
		out := []string{`<nav class="tabs" aria-label="Site" data-testid="site-tabs">`}
		for _, t := range []struct{ path, label string }{{"", "Overview"}, {"/deploys", "Deploys"}, {"/analytics", "Analytics"},
			{"/forms", "Forms"}, {"/domains", "Domains"}, {"/settings", "Settings"}} {
			attr := ""
			if t.label == current {
				attr = ` aria-current="page"`
			}
			out = append(out, `<a href="`+page+t.path+`"`+attr+` data-testid="tab-`+strings.ToLower(t.label)+`">`+t.label+`</a>`)
		}
		return append(out, "<title>"+current+" · Alice · sitedrop</title>")
	}
	scenarios := []tests.ApiScenario{
		{
			Name: "Overview: live, the address with its copy button, the last deploy, no other tab's content", Method: http.MethodGet, URL: page,
			Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent: append(tabBar("Overview"), `data-testid="site-state"`, ">Live<", `data-copy="http://alice-site.sites.test/"`,
				`src="/static/copy.js"`, `data-testid="site-slug">alice-site<`, `<div id="site-summary" data-refresh`,
				`Live version: <strong>1</strong>, deployed <time datetime="`, `data-testid="visits-sparkline"`, `data-testid="drop-deploy"`),
			NotExpectedContent: []string{"Disabled by an admin", `data-testid="submission-row"`, `data-testid="webhook-row"`,
				`data-testid="version-row"`, `data-testid="settings-form"`, `data-testid="domain-form"`, `data-testid="analytics-chart"`},
			TestAppFactory: newSitePagesApp,
		},
		{
			Name: "Forms: the endpoint, submissions with a confirmation link, notifications, webhooks with their log", Method: http.MethodGet, URL: page + "/forms",
			Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent: append(tabBar("Forms"), `data-copy="http://web.test/submit/`+idAliceSite+`"`, `data-testid="delivery-row" data-status="failed"`,
				"HTTP 500: receiver broke", "failed · HTTP 500 · 8 attempts", `data-testid="delivery-redeliver"`,
				`data-testid="webhook-test"`, "line one\nline two", `name="events" value="submission" checked`,
				`<a class="button small danger" href="`+page+`/submissions/`+idAliceSub+`/delete" data-testid="submission-delete"`,
				`<li class="webhook" id="webhook-`+idAliceHook+`"`, `<section class="panel" id="submissions"`, `data-testid="notify-toggle"`),
			NotExpectedContent: []string{`data-testid="drop-deploy"`, `data-testid="settings-form"`, `data-testid="version-row"`},
			TestAppFactory:     newSitePagesApp,
		},
		{
			Name: "Settings: the form says what a title does, protection, delete link", Method: http.MethodGet, URL: page + "/settings",
			Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent: append(tabBar("Settings"), `name="title" value="Alice"`, "Used on pages without a <code>&lt;title&gt;</code> of their own.",
				`data-testid="protection-panel"`, `href="/account/sites/`+idAliceSite+`/delete"`),
			NotExpectedContent: []string{`data-testid="submission-row"`, `data-testid="drop-deploy"`},
			TestAppFactory:     newSitePagesApp,
		},
		{
			Name: "Deploys: the versions to refresh after a drop, and the drop zone", Method: http.MethodGet, URL: page + "/deploys",
			Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent:    append(tabBar("Deploys"), `<ul class="sites" id="versions-list" data-refresh`, `data-testid="version-row"`, `data-testid="drop-deploy"`),
			NotExpectedContent: []string{`data-testid="submission-row"`, `data-testid="settings-form"`},
			TestAppFactory:     newSitePagesApp,
		},
		{
			Name: "Analytics", Method: http.MethodGet, URL: page + "/analytics", Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent: append(tabBar("Analytics"), `data-testid="analytics"`), NotExpectedContent: []string{`data-testid="submission-row"`},
			TestAppFactory: newSitePagesApp,
		},
		{
			Name: "Domains", Method: http.MethodGet, URL: page + "/domains", Headers: cookie(sessionAlice), ExpectedStatus: 200,
			ExpectedContent: append(tabBar("Domains"), `data-testid="domain-form"`), NotExpectedContent: []string{`data-testid="submission-row"`},
			TestAppFactory: newSitePagesApp,
		},
		{
			Name: "an old link to a page of submissions goes on to the Forms tab", Method: http.MethodGet, URL: page + "?page=2",
			Headers: cookie(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: wantLocation(page + "/forms?page=2#submissions"),
		},
	}
	// A disabled site says so on every tab.
	for _, tab := range []string{"", "/deploys", "/analytics", "/forms", "/domains", "/settings"} {
		scenarios = append(scenarios, tests.ApiScenario{
			Name: "disabled by an admin: " + page + tab, Method: http.MethodGet, URL: page + tab, Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`<div class="alert" data-testid="site-disabled"><p><strong>Disabled by an admin.</strong>`,
				`data-testid="site-disabled-badge">Disabled</span></h1>`},
			NotExpectedContent: []string{`<p data-testid="site-state"><span class="badge live">`},
			TestAppFactory:     disabled,
		})
	}
	for _, tab := range []string{"/forms", "/settings"} {
		scenarios = append(scenarios, tests.ApiScenario{
			Name: "signed out: " + tab, Method: http.MethodGet, URL: page + tab, ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
		}, tests.ApiScenario{
			Name: "someone else's site: " + tab, Method: http.MethodGet, URL: "/account/sites/" + idBobSite + tab, Headers: cookie(sessionAlice),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, TestAppFactory: newSitePagesApp,
		})
	}
	runScenarios(t, scenarios)
}

func TestSitePageSettings(t *testing.T) {
	t.Parallel()
	url := "/account/sites/" + idAliceSite + "/settings"
	versions := func(want int) func(testing.TB, *tests.TestApp, *http.Response) {
		return wantCount(sites.VersionsCollection, dbx.HashExp{"deployment": idAliceSite}, want)
	}
	field := func(name, want string) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
			rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
			if got := rec.GetString(name); got != want {
				t.Fatalf("%s = %q, want %q", name, got, want)
			}
		}
	}
	serves := func(want string) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
			if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, want) {
				t.Fatalf("site serves %q, want %q", b, want)
			}
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "a new title is a new version", Method: http.MethodPost, URL: url, Headers: formPost(sessionAlice),
			Body:           formBody("title", "Renamed", "description", "About", "favicon", "🐙"),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantLocation("/account/sites/"+idAliceSite+"/settings#settings"), wantFlash(ui.FlashSuccess, "version 2 is live"), versions(2), field("title", "Renamed"),
				field("favicon", "🐙"), serves("<title>Renamed</title>"), wantCount(forms.DeliveriesCollection,
					dbx.HashExp{"event": forms.EventDeploymentUpdated}, 1)),
		},
		{
			Name: "SPA alone changes the record only", Method: http.MethodPost, URL: url, Headers: formPost(sessionAlice),
			Body:           formBody("title", "Alice", "is_spa", "true"),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashSuccess, "Settings saved."), versions(1), func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, b := siteGet(t, app, "alice-site.sites.test", "/no/such/page"); !strings.Contains(b, "alice") {
					t.Fatalf("SPA fallback not served: %s", b)
				}
			}),
		},
		{
			Name: "the API's limits refuse, with its message", Method: http.MethodPost, URL: url, Headers: formPost(sessionAlice),
			Body:           formBody("title", strings.Repeat("x", 501)),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashError, "title is too long: at most 500 characters"), versions(1), field("title", "Alice")),
		},
		{
			Name: "a favicon that is not an emoji", Method: http.MethodPost, URL: url, Headers: formPost(sessionAlice),
			Body:           formBody("title", "Alice", "favicon", "<b>"),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashError, sites.MsgFavicon), versions(1), field("favicon", "")),
		},
		{
			Name: "past the account's deploy rate", Method: http.MethodPost, URL: url, Headers: formPost(sessionAlice),
			Body: formBody("title", "Renamed"), ExpectedStatus: 303,
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app := newSitePagesApp(t)
				sd := stateOf(t, app)
				rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				for sd.gate.Keyed.Check(rec.GetString("owner")) == nil {
				}
				return app
			},
			AfterTestFunc: checks(wantFlash(ui.FlashError, "Settings not saved: "+msgRateLimited), versions(1), field("title", "Alice")),
		},
		{
			Name: "someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/settings",
			Headers: formPost(sessionAlice), Body: formBody("title", "Mine now"),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, TestAppFactory: newSitePagesApp,
		},
	})
}

func TestSitePageDelete(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite + "/delete"
	alive := func(want int) func(testing.TB, *tests.TestApp, *http.Response) {
		return wantCount(sites.DeploymentsCollection, dbx.HashExp{"id": idAliceSite}, want)
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the confirmation names the site", Method: http.MethodGet, URL: page, Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{"Delete Alice?", `data-testid="delete-slug"`, "alice-site", `method="post"`},
			TestAppFactory: newSitePagesApp,
		},
		{
			Name: "a wrong slug refuses", Method: http.MethodPost, URL: page, Headers: formPost(sessionAlice),
			Body: formBody("slug", "alice"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp, AfterTestFunc: checks(wantLocation(page), wantFlash(ui.FlashError, "does not match"), alive(1)),
		},
		{
			Name: "the slug deletes, as the API does", Method: http.MethodPost, URL: page, Headers: formPost(sessionAlice),
			Body: formBody("slug", "alice-site"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantLocation("/account"), wantFlash(ui.FlashSuccess, "Site alice-site deleted"), alive(0),
				wantCount(forms.DeliveriesCollection, dbx.HashExp{"event": forms.EventDeploymentDeleted}, 1)),
		},
		{
			Name: "someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/delete",
			Headers: formPost(sessionAlice), Body: formBody("slug", "bob-site"), ExpectedStatus: 404, ExpectedContent: []string{"Site not found"},
			TestAppFactory: newSitePagesApp, AfterTestFunc: wantCount(sites.DeploymentsCollection, dbx.HashExp{"id": idBobSite}, 1),
		},
		{
			Name: "confirmation of someone else's site", Method: http.MethodGet, URL: "/account/sites/" + idBobSite + "/delete",
			Headers: cookie(sessionAlice), ExpectedStatus: 404, ExpectedContent: []string{"not found"}, TestAppFactory: newSitePagesApp,
		},
	})
}

func TestSitePageSubmissionDelete(t *testing.T) {
	t.Parallel()
	base := "/account/sites/" + idAliceSite + "/submissions/"
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the confirmation shows the submission and posts its deletion", Method: http.MethodGet, URL: base + idAliceSub + "/delete",
			Headers: cookie(sessionAlice), ExpectedStatus: 200, TestAppFactory: newSitePagesApp,
			ExpectedContent: []string{"Delete this submission?", "<dt>msg</dt><dd>line one\nline two</dd>",
				`<form method="post" action="` + base + idAliceSub + `/delete"`, `data-testid="delete-cancel"`},
			AfterTestFunc: wantCount(forms.SubmissionsCollection, dbx.HashExp{"id": idAliceSub}, 1),
		},
		{
			Name: "the confirmation of a submission that is gone says so on the Forms tab", Method: http.MethodGet, URL: base + idBobSub + "/delete",
			Headers: cookie(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantLocation("/account/sites/"+idAliceSite+"/forms#submissions"), wantFlash(ui.FlashError, "no longer exists"),
				wantCount(forms.SubmissionsCollection, dbx.HashExp{"id": idBobSub}, 1)),
		},
		{
			Name: "the confirmation on someone else's site", Method: http.MethodGet, URL: "/account/sites/" + idBobSite + "/submissions/" + idBobSub + "/delete",
			Headers: cookie(sessionAlice), ExpectedStatus: 404, ExpectedContent: []string{"not found"}, NotExpectedContent: []string{"line one"},
			TestAppFactory: newSitePagesApp,
		},
		{
			Name: "delete one", Method: http.MethodPost, URL: base + idAliceSub + "/delete", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantLocation("/account/sites/"+idAliceSite+"/forms#submissions"), wantFlash(ui.FlashSuccess, "Submission deleted"),
				wantCount(forms.SubmissionsCollection, dbx.HashExp{"id": idAliceSub}, 0)),
		},
		{
			Name: "another site's submission through mine", Method: http.MethodPost, URL: base + idBobSub + "/delete",
			Headers: formPost(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashError, "no longer exists"), wantCount(forms.SubmissionsCollection, dbx.HashExp{"id": idBobSub}, 1)),
		},
		{
			Name: "someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/submissions/" + idBobSub + "/delete",
			Headers: formPost(sessionAlice), ExpectedStatus: 404, ExpectedContent: []string{"not found"}, TestAppFactory: newSitePagesApp,
			AfterTestFunc: wantCount(forms.SubmissionsCollection, dbx.HashExp{"id": idBobSub}, 1),
		},
	})
}

func TestSitePageWebhooks(t *testing.T) {
	t.Parallel()
	base := "/account/sites/" + idAliceSite + "/webhooks"
	hooksOf := func(want int) func(testing.TB, *tests.TestApp, *http.Response) {
		return wantCount(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite}, want)
	}
	pending := func(event string, want int) func(testing.TB, *tests.TestApp, *http.Response) {
		return wantCount(forms.DeliveriesCollection, dbx.HashExp{"event": event, "status": forms.DeliveryPending}, want)
	}
	secretShown := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		msgs := flashesOf(t, app, sessionAlice)
		hooks, _ := app.FindRecordsByFilter(forms.WebhooksCollection, "url = 'https://93.184.216.35/new'", "", 0, 0)
		if len(msgs) != 1 || len(hooks) != 1 || msgs[0].Secret == "" || msgs[0].Secret != hooks[0].GetString("secret") {
			t.Fatalf("secret not shown once: %+v", msgs)
		}
		if ev := hooks[0].GetStringSlice("events"); len(ev) != 1 || ev[0] != forms.EventSubmission || hooks[0].GetString("type") != "slack" {
			t.Fatalf("saved %v %s", ev, hooks[0].GetString("type"))
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "create, the secret shown once", Method: http.MethodPost, URL: base, Headers: formPost(sessionAlice),
			Body:           formBody("url", "https://93.184.216.35/new", "type", "slack", "events", "submission"),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp, AfterTestFunc: checks(secretShown, hooksOf(2)),
		},
		{
			Name: "the SSRF guard refuses", Method: http.MethodPost, URL: base, Headers: formPost(sessionAlice),
			Body: formBody("url", "http://127.0.0.1/x", "events", "submission"), ExpectedStatus: 303,
			TestAppFactory: newSitePagesApp, AfterTestFunc: checks(wantFlash(ui.FlashError, "Webhook not added:"), hooksOf(1)),
		},
		{
			Name: "no event ticked", Method: http.MethodPost, URL: base, Headers: formPost(sessionAlice),
			Body: formBody("url", "https://93.184.216.35/new"), ExpectedStatus: 303,
			TestAppFactory: newSitePagesApp, AfterTestFunc: checks(wantFlash(ui.FlashError, "events must name at least one event"), hooksOf(1)),
		},
		{
			Name: "create on someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/webhooks",
			Headers: formPost(sessionAlice), Body: formBody("url", "https://93.184.216.35/new", "events", "submission"),
			ExpectedStatus: 404, ExpectedContent: []string{"not found"}, TestAppFactory: newSitePagesApp,
			AfterTestFunc: wantCount(forms.WebhooksCollection, dbx.HashExp{"deployment": idBobSite}, 0),
		},
		{
			Name: "send a test", Method: http.MethodPost, URL: base + "/" + idAliceHook + "/test", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashSuccess, "Test delivery queued"), pending(forms.EventTest, 1)),
		},
		{
			Name: "test through someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/webhooks/" + idAliceHook + "/test",
			Headers: formPost(sessionAlice), ExpectedStatus: 404, ExpectedContent: []string{"not found"}, TestAppFactory: newSitePagesApp, AfterTestFunc: pending(forms.EventTest, 0),
		},
		{
			Name: "redeliver a failed delivery", Method: http.MethodPost, URL: base + "/" + idAliceHook + "/deliveries/" + idFailedDeliver + "/redeliver",
			Headers: formPost(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashSuccess, "queued again"), pending(forms.EventSubmission, 2)),
		},
		{
			Name: "a pending delivery is not copied", Method: http.MethodPost, URL: base + "/" + idAliceHook + "/deliveries/" + idPendingDelive + "/redeliver",
			Headers: formPost(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashError, "still queued"), pending(forms.EventSubmission, 1)),
		},
		{
			Name: "delete", Method: http.MethodPost, URL: base + "/" + idAliceHook + "/delete",
			Headers: formPost(sessionAlice), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(wantFlash(ui.FlashSuccess, "deleted"), hooksOf(0)),
		},
	})
}

// TestSubmissionFieldOrder: the site page lists a submission's fields in
// the order the form sent them, for every body type; the API's data is
// the same object as before.
func TestSubmissionFieldOrder(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	posts := []struct{ ctype, body string }{
		{"application/x-www-form-urlencoded", "zeta=1&alpha=2&mid=3&zeta=4"},
		{"application/json", `{"zeta":"1","alpha":"2","mid":{"b":1,"a":2}}`},
		{"multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"zeta\"\r\n\r\n1\r\n--XX\r\nContent-Disposition: form-data; name=\"alpha\"\r\n\r\n2\r\n--XX\r\nContent-Disposition: form-data; name=\"mid\"\r\n\r\n3\r\n--XX--\r\n"},
	}
	for _, p := range posts {
		res, body := do(t, mux, http.MethodPost, "/submit/"+idAliceSite, p.body, map[string]string{"Content-Type": p.ctype})
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", p.ctype, res.StatusCode, body)
		}
	}
	_, page := do(t, mux, http.MethodGet, "/account/sites/"+idAliceSite+"/forms", "", cookie(sessionAlice))
	if n := strings.Count(page, `data-testid="submission-row"`); n != 3 {
		t.Fatalf("%d rows", n)
	}
	for _, row := range strings.Split(page, `data-testid="submission-row"`)[1:] {
		z, a, m := strings.Index(row, "<dt>zeta</dt>"), strings.Index(row, "<dt>alpha</dt>"), strings.Index(row, "<dt>mid</dt>")
		if z < 0 || !(z < a && a < m) {
			t.Fatalf("fields not in the form's order: %s", row)
		}
	}
	_, api := do(t, mux, http.MethodGet, "/submissions/"+idAliceSite, "", bearer(keyAlice))
	if !strings.Contains(api, `"data":{"alpha":"2","mid":"3","zeta":"1"}`) || !strings.Contains(api, `"zeta":["1","4"]`) {
		t.Fatalf("API data changed: %s", api)
	}
}

// wantLocation checks where a redirect goes.
func wantLocation(want string) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, _ *tests.TestApp, res *http.Response) {
		t.Helper()
		if got := res.Header.Get("Location"); got != want {
			t.Fatalf("Location %q, want %q", got, want)
		}
	}
}

// TestSiteTabMessageBesideItsForm: the page a form post leads to shows
// its message inside the panel (or row) of the form, not at the top; a
// message whose panel the page lacks shows at the top.
func TestSiteTabMessageBesideItsForm(t *testing.T) {
	t.Parallel()
	app := newSitePagesApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	page := "/account/sites/" + idAliceSite
	follow := func(post string, want ...string) string {
		t.Helper()
		res, body := do(t, mux, http.MethodPost, page+post, "", formPost(sessionAlice))
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d %s", post, res.StatusCode, body)
		}
		loc := res.Header.Get("Location")
		path, _, _ := strings.Cut(loc, "#")
		_, body = do(t, mux, http.MethodGet, path, "", cookie(sessionAlice))
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("after POST %s, %s lacks %s", post, loc, w)
			}
		}
		if strings.Contains(body, `<main id="main" tabindex="-1"><div class="`) {
			t.Errorf("after POST %s, a message at the top of %s", post, loc)
		}
		return loc
	}
	if loc := follow("/notifications", `<h2 id="notify-h">E-mail notifications</h2><div class="notice success" role="status" data-testid="flash-success"><p>New submissions are no longer mailed.</p>`); loc != page+"/forms#notifications" {
		t.Errorf("notifications: to %s", loc)
	}
	if loc := follow("/webhooks/"+idAliceHook+"/test", `<li class="webhook" id="webhook-`+idAliceHook+`" data-testid="webhook-row"><div class="notice success" role="status" data-testid="flash-success"><p>Test delivery queued`); loc != page+"/forms#webhook-"+idAliceHook {
		t.Errorf("test: to %s", loc)
	}
	if loc := follow("/rollback", `<h2 id="versions-h">Versions</h2><div class="alert" role="alert" data-testid="flash-error"><p>No such version`); loc != page+"/deploys#versions" {
		t.Errorf("rollback: to %s", loc)
	}
	if loc := follow("/protection", `<h2 id="protect-h">Protection</h2><div class="alert" role="alert" data-testid="flash-error"><p>Nothing changed: unknown action.`); loc != page+"/settings#protection" {
		t.Errorf("protection: to %s", loc)
	}

	// A message for a row that is gone by the time the page loads: at
	// the top.
	res, _ := do(t, mux, http.MethodPost, page+"/webhooks/"+idAliceHook+"/test", "", formPost(sessionAlice))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatal(res.StatusCode)
	}
	if err := forms.DeleteWebhook(context.Background(), app, mustFindWebhook(t, app, idAliceHook)); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, mux, http.MethodGet, page+"/forms", "", cookie(sessionAlice)); !strings.Contains(body, `<main id="main" tabindex="-1"><div class="notice success" role="status" data-testid="flash-success"><p>Test delivery queued`) {
		t.Errorf("a message for a row the page lacks is not at the top: %s", body)
	}
}

// mustFindWebhook is the webhook id of alice's site.
func mustFindWebhook(t testing.TB, app *tests.TestApp, id string) *forms.Webhook {
	t.Helper()
	w, err := forms.FindWebhook(app, idAliceSite, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
