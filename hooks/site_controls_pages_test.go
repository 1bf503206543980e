package hooks

import (
	"context"
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/ui"
)

// TestSiteControlsPages: the site page's pause, resume and rename forms
// answer 303 to the controls with a message, a refusal too (changing
// nothing), and the page shows the state they left.
func TestSiteControlsPages(t *testing.T) {
	t.Parallel()
	base := "/account/sites/" + idAliceSite
	back := wantLocation(base + "/settings#" + ui.PanelControls.ID)
	slugIs := func(want string) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
			t.Helper()
			if got := slugOf(t, app, idAliceSite); got != want {
				t.Fatalf("slug %q, want %q", got, want)
			}
		}
	}
	pausedIs := func(want bool) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
			t.Helper()
			if got := pausedOf(t, app, idAliceSite); got != want {
				t.Fatalf("paused %v, want %v", got, want)
			}
		}
	}
	pausedApp := func(t testing.TB) *tests.TestApp {
		app := newSitePagesApp(t)
		rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if _, err := stateOf(t, app).svc.SetPaused(context.Background(), rec, true); err != nil {
			t.Fatal(err)
		}
		return app
	}
	renamedApp := func(t testing.TB) *tests.TestApp {
		app := newSitePagesApp(t)
		rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if _, err := stateOf(t, app).svc.Rename(context.Background(), rec, "alice-new"); err != nil {
			t.Fatal(err)
		}
		return app
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "rename", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body: formBody("slug", "alice-new"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, slugIs("alice-new"),
				wantFlash(ui.FlashSuccess, "Renamed: the site is now at http://alice-new.sites.test/. http://alice-site.sites.test/ redirects there until ")),
		},
		{
			Name: "rename to a taken slug", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body: formBody("slug", "bob-site"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, slugIs("alice-site"), wantFlash(ui.FlashError, "Not renamed: Slug already taken.")),
		},
		{
			Name: "rename to an invalid slug", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body: formBody("slug", "No Way"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, slugIs("alice-site"), wantFlash(ui.FlashError, "Not renamed: slug must be 3 to 63 lowercase letters")),
		},
		{
			Name: "rename to a reserved slug", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body: formBody("slug", "admin"), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, slugIs("alice-site"), wantFlash(ui.FlashError, "Not renamed: Slug is reserved.")),
		},
		{
			Name: "rename without a slug", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body: formBody("slug", " "), ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, slugIs("alice-site"), wantFlash(ui.FlashError, "Not renamed: type the new slug.")),
		},
		{
			Name: "rename someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/rename",
			Headers: formPost(sessionAlice), Body: formBody("slug", "mine-now"),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, TestAppFactory: newSitePagesApp,
		},
		{
			Name: "pause", Method: http.MethodPost, URL: base + "/pause", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: newSitePagesApp,
			AfterTestFunc: checks(back, pausedIs(true), wantFlash(ui.FlashSuccess, "Site paused")),
		},
		{
			Name: "pause again changes nothing", Method: http.MethodPost, URL: base + "/pause", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: pausedApp,
			AfterTestFunc: checks(back, pausedIs(true), wantFlash(ui.FlashSuccess, "already paused")),
		},
		{
			Name: "resume", Method: http.MethodPost, URL: base + "/resume", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: pausedApp,
			AfterTestFunc: checks(back, pausedIs(false), wantFlash(ui.FlashSuccess, "Site resumed")),
		},
		{
			Name: "pause from another origin", Method: http.MethodPost, URL: base + "/pause",
			Headers:        withHeaders(cookie(sessionAlice), map[string]string{"Origin": "https://evil.example"}),
			ExpectedStatus: 403, ExpectedContent: []string{"Request refused"}, TestAppFactory: newSitePagesApp,
			AfterTestFunc: pausedIs(false),
		},
		{
			Name: "the page shows a paused site and its resume button", Method: http.MethodGet, URL: base + "/settings", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, TestAppFactory: pausedApp,
			ExpectedContent:    []string{`id="site-controls"`, `data-testid="controls-paused"`, `data-testid="controls-resume"`},
			NotExpectedContent: []string{`data-testid="controls-pause"`},
		},
		{
			Name: "the page shows the old address still redirecting", Method: http.MethodGet, URL: base + "/settings", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, TestAppFactory: renamedApp,
			ExpectedContent: []string{`value="alice-new"`, `data-testid="old-slugs"`, "http://alice-site.sites.test/</code> until "},
		},
	})
}
