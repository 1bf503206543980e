package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/ui"
)

// withAliceTakenDown is the fixtures with alice-site taken down.
func withAliceTakenDown(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.TakeDown(t.Context(), rec, "Phishing <kit>", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	return app
}

// TestTakedownPages: the owner sees a taken-down site as such, with the
// reason, on every tab of its page and in the account's list; the page's
// controls refuse with the reason why, changing nothing.
func TestTakedownPages(t *testing.T) {
	t.Parallel()
	base := "/account/sites/" + idAliceSite
	still := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		t.Helper()
		d := takedownOf(t, app, idAliceSite)
		if d.Slug() != "alice-site" || d.Paused() || !d.TakenDown() {
			t.Fatalf("changed: %q paused %v taken down %v", d.Slug(), d.Paused(), d.TakenDown())
		}
	}
	notice := []string{`data-testid="site-takendown"`, `data-testid="site-takendown-badge"`, "Taken down by an admin", "for: Phishing &lt;kit&gt;"}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the overview shows the takedown and its reason", Method: http.MethodGet, URL: base, Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: notice, NotExpectedContent: []string{`class="badge live"`, "Phishing <kit>"},
			TestAppFactory: withAliceTakenDown,
		},
		{
			Name: "every tab shows it", Method: http.MethodGet, URL: base + "/settings", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: notice,
			TestAppFactory: withAliceTakenDown,
		},
		{
			Name: "a running site shows none", Method: http.MethodGet, URL: base, Headers: cookie(sessionAlice),
			ExpectedStatus: 200, NotExpectedContent: []string{"site-takendown", "Taken down"},
			TestAppFactory: newTestApp,
		},
		{
			Name: "the account's list says so", Method: http.MethodGet, URL: "/account", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`class="badge takendown"`, "Taken down by an admin"},
			TestAppFactory: withAliceTakenDown,
		},
		{
			Name: "the page's pause is refused with the reason why", Method: http.MethodPost, URL: base + "/pause", Headers: formPost(sessionAlice),
			ExpectedStatus: 303, TestAppFactory: withAliceTakenDown,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				wantLocation(base+"/settings#"+ui.PanelControls.ID)(t, app, res)
				wantFlash(ui.FlashError, "Not changed: "+msgTakenDown+".")(t, app, res)
				still(t, app, res)
			},
		},
		{
			Name: "the page's rename is refused", Method: http.MethodPost, URL: base + "/rename", Headers: formPost(sessionAlice),
			Body:           strings.NewReader("slug=alice-elsewhere"),
			ExpectedStatus: 303, TestAppFactory: withAliceTakenDown,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				wantFlash(ui.FlashError, "Not renamed: "+msgTakenDown+".")(t, app, res)
				still(t, app, res)
			},
		},
	})
}
