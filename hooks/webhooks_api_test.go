package hooks

import (
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites/forms"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// mustWebhook adds an active webhook to a deployment.
func mustWebhook(t testing.TB, app core.App, depID, url string, events ...string) *core.Record {
	t.Helper()
	if len(events) == 0 {
		events = forms.WebhookEvents
	}
	col, _ := app.FindCollectionByNameOrId(forms.WebhooksCollection)
	rec := core.NewRecord(col)
	rec.Set("deployment", depID)
	rec.Set("url", url)
	rec.Set("type", "generic")
	rec.Set("events", events)
	rec.Set("secret", "whsec_test")
	rec.Set("active", true)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func deliveries(t testing.TB, app core.App, event string) []*core.Record {
	t.Helper()
	recs, err := app.FindRecordsByFilter(forms.DeliveriesCollection, "event = {:e}", "created", 0, 0, dbx.Params{"e": event})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func newAppWithWebhook(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/hook")
	return app
}

func TestWebhooksAPI(t *testing.T) {
	t.Parallel()
	create := func(name, body string, status int, content ...string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPost, URL: "/webhooks/" + idAliceSite,
			Headers: bearer(keyAlice), Body: strings.NewReader(body),
			ExpectedStatus: status, ExpectedContent: content, TestAppFactory: newTestApp,
		}
	}
	scenarios := []tests.ApiScenario{
		{
			Name: "without a key", Method: http.MethodPost, URL: "/webhooks/" + idAliceSite,
			Body: strings.NewReader(`{"url":"https://93.184.216.34/"}`), ExpectedStatus: 401,
			ExpectedContent: []string{errBody(msgUnauthorized)}, TestAppFactory: newTestApp,
		},
		{
			Name: "someone else's deployment", Method: http.MethodPost, URL: "/webhooks/" + idAliceSite,
			Headers: bearer(keyBob), Body: strings.NewReader(`{"url":"https://93.184.216.34/"}`), ExpectedStatus: 404,
			ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: newTestApp,
		},
		create("generic webhook with all events", `{"url":"https://93.184.216.34/hook"}`, 200,
			`"deployment_id":"`+idAliceSite+`"`, `"url":"https://93.184.216.34/hook"`, `"type":"generic"`,
			`"events":["submission","deployment.updated","deployment.deleted","deployment.draft","deployment.renamed"]`, `"secret":"whsec_`),
		create("slack webhook for submissions", `{"url":"https://93.184.216.34/slack","type":"slack","events":["submission"]}`, 200,
			`"type":"slack"`, `"events":["submission"]`),
		create("missing url", `{}`, 400, errBody("url is required")),
		create("unknown type", `{"url":"https://93.184.216.34/","type":"teams"}`, 400, errBody(`type must be "generic" or "slack"`)),
		create("unknown event", `{"url":"https://93.184.216.34/","events":["deployment.created"]}`, 400, `unknown event \"deployment.created\"`),
		create("no events", `{"url":"https://93.184.216.34/","events":[]}`, 400, errBody("events must name at least one event")),
		create("a URL PocketBase would refuse", `{"url":"https://93.184.216.34/a b"}`, 400, `"error":"webhook URL`),
	}
	// Every SSRF class is refused when saving.
	for _, u := range []string{
		"ftp://93.184.216.34/", "http://localhost:8080/", "http://127.0.0.1/", "http://10.1.2.3/", "http://172.16.0.1/",
		"http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/", "http://[::1]/",
		"http://[fd00::1]/", "http://224.0.0.1/", "http://0.0.0.0/", "http://user:pass@93.184.216.34/",
	} {
		scenarios = append(scenarios, create("refused "+u, `{"url":"`+u+`"}`, 400, `"error":"webhook URL`))
	}
	scenarios = append(scenarios,
		tests.ApiScenario{
			Name: "private targets allowed with --webhooks-allow-private", Method: http.MethodPost, URL: "/webhooks/" + idAliceSite,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"url":"http://127.0.0.1:9/hook"}`),
			ExpectedStatus: 200, ExpectedContent: []string{`"url":"http://127.0.0.1:9/hook"`},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app, sd := newFixtureApp(t)
				sd.cfg.WebhooksAllowPrivate = true
				return app
			},
		},
		tests.ApiScenario{
			Name: "list hides the secret", Method: http.MethodGet, URL: "/webhooks/" + idAliceSite, Headers: bearer(keyAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`{"webhooks":[{`, `"url":"https://93.184.216.34/hook"`, `"active":true`, `"created_at":"20`},
			NotExpectedContent: []string{"whsec_"},
			TestAppFactory:     newAppWithWebhook,
		},
		tests.ApiScenario{
			Name: "delete someone else's webhook", Method: http.MethodDelete, URL: "/webhooks/" + idBobSite + "/nosuchwebhook00",
			Headers: bearer(keyBob), ExpectedStatus: 404, ExpectedContent: []string{errBody("Webhook not found")},
			TestAppFactory: newAppWithWebhook,
		},
		tests.ApiScenario{
			Name: "notifications without a key", Method: http.MethodPut, URL: "/notifications/" + idAliceSite,
			Body: strings.NewReader(`{"email":true}`), ExpectedStatus: 401, ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory: newTestApp,
		},
		tests.ApiScenario{
			Name: "notifications of someone else's deployment", Method: http.MethodPut, URL: "/notifications/" + idAliceSite,
			Headers: bearer(keyBob), Body: strings.NewReader(`{"email":true}`), ExpectedStatus: 404,
			ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: newTestApp,
		},
		tests.ApiScenario{
			Name: "notifications need email", Method: http.MethodPut, URL: "/notifications/" + idAliceSite,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{}`), ExpectedStatus: 400,
			ExpectedContent: []string{errBody("email is required (true or false)")}, TestAppFactory: newTestApp,
		},
		tests.ApiScenario{
			Name: "turn notifications on", Method: http.MethodPut, URL: "/notifications/" + idAliceSite,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"email":true}`), ExpectedStatus: 200,
			ExpectedContent: []string{`{"email":true}`}, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAliceSite)
				if !rec.GetBool("notify_email") || rec.GetDateTime("notified_until").IsZero() {
					t.Fatal("not turned on")
				}
			},
		},
	)
	runScenarios(t, scenarios)
}

func TestWebhookLimitAndDelete(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	var first string
	for i := range forms.MaxWebhooksPerDeployment {
		res, body := do(t, mux, http.MethodPost, "/webhooks/"+idAliceSite, `{"url":"https://93.184.216.34/h"}`, bearer(keyAlice))
		if res.StatusCode != 200 {
			t.Fatalf("webhook %d: %d %s", i, res.StatusCode, body)
		}
		if i == 0 {
			first = strings.Split(strings.Split(body, `"id":"`)[1], `"`)[0]
		}
	}
	if res, _ := do(t, mux, http.MethodPost, "/webhooks/"+idAliceSite, `{"url":"https://93.184.216.34/h"}`, bearer(keyAlice)); res.StatusCode != 400 {
		t.Fatalf("past the limit: %d", res.StatusCode)
	}
	if res, _ := do(t, mux, http.MethodDelete, "/webhooks/"+idBobSite+"/"+first, "", bearer(keyBob)); res.StatusCode != 404 {
		t.Fatalf("deleting through another deployment: %d", res.StatusCode)
	}
	if res, body := do(t, mux, http.MethodDelete, "/webhooks/"+idAliceSite+"/"+first, "", bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	if _, err := app.FindRecordById(forms.WebhooksCollection, first); err == nil {
		t.Fatal("webhook not deleted")
	}
}

// TestEventsAreQueued: a submission, a PUT and a DELETE queue deliveries
// for the webhooks subscribed to them.
func TestEventsAreQueued(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/all")
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/subs", forms.EventSubmission)
	mux := newMux(t, app)

	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)
	if got := deliveries(t, app, forms.EventSubmission); len(got) != 2 || !strings.Contains(got[0].GetString("payload"), `"name":"Ann"`) {
		t.Fatalf("submission deliveries: %d", len(got))
	}
	do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"v2"}`, bearer(keyAlice))
	if got := deliveries(t, app, forms.EventDeploymentUpdated); len(got) != 1 {
		t.Fatalf("deployment.updated deliveries: %d", len(got))
	}
	do(t, mux, http.MethodPut, "/notifications/"+idAliceSite, `{"email":true}`, bearer(keyAlice))
	if got := deliveries(t, app, forms.EventDeploymentUpdated); len(got) != 1 {
		t.Fatal("a settings change is not a content update")
	}
}

// TestDeploymentDeletionCascades: deleting a deployment, through the API
// or the dashboard, deletes its submissions, webhooks and pending
// deliveries; only its deployment.deleted deliveries remain, to be sent.
func TestDeploymentDeletionCascades(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/all")
	mustWebhook(t, app, idBobSite, "https://93.184.216.34/bob")
	mux := newMux(t, app)
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)
	do(t, mux, http.MethodPost, "/submit/"+idBobSite, `{"name":"Bob"}`, nil)

	if res, _ := do(t, mux, http.MethodDelete, "/deploy/"+idAliceSite, "", bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatal("delete")
	}
	if countSubs(t, app, idAliceSite) != 0 || countSubs(t, app, idBobSite) != 1 {
		t.Fatal("submissions not cascaded")
	}
	if n, _ := app.CountRecords(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite}); n != 0 {
		t.Fatal("webhooks not cascaded")
	}
	if got := deliveries(t, app, forms.EventSubmission); len(got) != 1 || got[0].GetString("deployment") != idBobSite {
		t.Fatalf("pending deliveries of the deleted deployment remain: %d", len(got))
	}
	del := deliveries(t, app, forms.EventDeploymentDeleted)
	if len(del) != 1 || del[0].GetString("deployment") != "" || !strings.Contains(del[0].GetString("payload"), "alice-site") {
		t.Fatalf("deployment.deleted deliveries: %d", len(del))
	}

}
