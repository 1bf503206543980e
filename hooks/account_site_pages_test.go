package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

func newAppForSitePage(t testing.TB) *tests.TestApp {
	app := newAppWithSubmissions(t)
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/hook")
	return app
}

func TestAccountSitePage(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "signed out goes to sign-in", Method: http.MethodGet, URL: page,
			ExpectedStatus: 303, TestAppFactory: newAppForSitePage,
		},
		{
			Name: "someone else's site", Method: http.MethodGet, URL: page, Headers: cookie(sessionBob),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, NotExpectedContent: []string{"first"},
			TestAppFactory: newAppForSitePage,
		},
		{
			Name: "submissions, notifications and webhooks", Method: http.MethodGet, URL: page + "/forms", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{`data-testid="submission-row"`, "second", "b@example.com", `data-testid="submissions-csv"`,
				`data-testid="webhook-row"`, "https://93.184.216.34/hook", `data-testid="notify-toggle"`, "3 in all"},
			TestAppFactory: newAppForSitePage,
		},
		{
			Name: "CSV download", Method: http.MethodGet, URL: page + "/submissions.csv", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{"id,created_at,'@SUM(1),email,n,name"}, TestAppFactory: newAppForSitePage,
		},
		{
			Name: "turn notifications on", Method: http.MethodPost, URL: page + "/notifications",
			Body: formBody("email", "true"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: newAppForSitePage,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				if !rec.GetBool("notify_email") {
					t.Fatal("not on")
				}
				wantLocation(page+"/forms#notifications")(t, app, res)
				msgs := flashesOf(t, app, sessionAlice)
				if len(msgs) != 1 || msgs[0].Panel != "notifications" || !strings.Contains(msgs[0].Text, "will be mailed") {
					t.Fatalf("flash %+v", msgs)
				}
			},
		},
		{
			Name: "notifications from another origin", Method: http.MethodPost, URL: page + "/notifications",
			Body:           formBody("email", "true"),
			Headers:        withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://alice-site.sites.test", "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus: 403, ExpectedContent: []string{`data-testid="error-page"`}, TestAppFactory: newAppForSitePage,
		},
	})
}

func TestAccountSiteWebhookDelete(t *testing.T) {
	t.Parallel()
	app := newAppForSitePage(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	hooks, _ := app.FindAllRecords(forms.WebhooksCollection)
	url := "/account/sites/" + idAliceSite + "/webhooks/" + hooks[0].Id + "/delete"
	if res, _ := do(t, mux, http.MethodPost, "/account/sites/"+idBobSite+"/webhooks/"+hooks[0].Id+"/delete", "", withHeaders(sameOrigin, cookie(sessionAlice))); res.StatusCode != 404 {
		t.Fatalf("through someone else's site: %d", res.StatusCode)
	}
	// the list links to a confirmation, which posts the deletion
	if _, body := do(t, mux, http.MethodGet, "/account/sites/"+idAliceSite+"/forms", "", cookie(sessionAlice)); !strings.Contains(body, `href="`+url+`" data-testid="webhook-delete"`) {
		t.Fatalf("the Forms tab does not link to the confirmation: %s", body)
	}
	if res, body := do(t, mux, http.MethodGet, url, "", cookie(sessionAlice)); res.StatusCode != 200 ||
		!strings.Contains(body, `<form method="post" action="`+url+`"`) || !strings.Contains(body, `data-testid="confirm-webhook">https://93.184.216.34/hook<`) {
		t.Fatalf("confirmation: %d %s", res.StatusCode, body)
	}
	if n, _ := app.CountRecords(forms.WebhooksCollection); n != 1 {
		t.Fatal("the confirmation deleted")
	}
	if res, _ := do(t, mux, http.MethodGet, "/account/sites/"+idBobSite+"/webhooks/"+hooks[0].Id+"/delete", "", cookie(sessionAlice)); res.StatusCode != 404 {
		t.Fatalf("confirmation through someone else's site: %d", res.StatusCode)
	}
	res, _ := do(t, mux, http.MethodPost, url, "", withHeaders(sameOrigin, cookie(sessionAlice)))
	expectRedirect(t, res, "/account/sites/"+idAliceSite+"/forms#webhooks")
	if n, err := app.CountRecords(forms.WebhooksCollection); err != nil || n != 0 {
		t.Fatalf("webhook not deleted: %d, %v", n, err)
	}
	if res, body := do(t, mux, http.MethodGet, url, "", cookie(sessionAlice)); res.StatusCode != 404 || !strings.Contains(body, "Webhook not found") {
		t.Fatalf("confirmation of a deleted webhook: %d", res.StatusCode)
	}
	if _, body := do(t, mux, http.MethodGet, "/account", "", cookie(sessionAlice)); !strings.Contains(body, `data-testid="site-details"`) {
		t.Fatal("no link from the account page")
	}
}

// TestAccountSiteVersions: the site page lists versions, and its "Make
// live" button rolls back (same origin only).
func TestAccountSiteVersions(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	withTwoVersions := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sd.svc.Replace(t.Context(), rec, sites.Metadata{}, htmlUpload("<p>second</p>")); err != nil {
			t.Fatal(err)
		}
		return app
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
			Name: "versions listed, the live one marked", Method: http.MethodGet, URL: page + "/deploys", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{`id="versions-h"`, "Version 2", "Version 1", `data-testid="version-live"`,
				`data-testid="version-rollback"`, `name="version" value="1"`},
			NotExpectedContent: []string{`name="version" value="2"`},
			TestAppFactory:     withTwoVersions,
		},
		{
			Name: "make version 1 live", Method: http.MethodPost, URL: page + "/rollback",
			Body: formBody("version", "1"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: withTwoVersions,
			AfterTestFunc: checks(wantFlash(ui.FlashSuccess, "Version 1 is live."), serves("<h1>alice</h1>")),
		},
		{
			Name: "a version that is not kept", Method: http.MethodPost, URL: page + "/rollback",
			Body: formBody("version", "9"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: withTwoVersions,
			AfterTestFunc: checks(wantFlash(ui.FlashError, "Version 9 is no longer kept"), serves("second")),
		},
		{
			Name: "rollback from another origin", Method: http.MethodPost, URL: page + "/rollback",
			Body:           formBody("version", "1"),
			Headers:        withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://alice-site.sites.test", "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus: 403, ExpectedContent: []string{"Request refused"}, TestAppFactory: withTwoVersions, AfterTestFunc: serves("second"),
		},
		{
			Name: "rollback of someone else's site", Method: http.MethodPost, URL: page + "/rollback",
			Body: formBody("version", "1"), Headers: withHeaders(sameOrigin, cookie(sessionBob)),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, TestAppFactory: withTwoVersions, AfterTestFunc: serves("second"),
		},
	})
}
