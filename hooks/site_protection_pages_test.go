package hooks

import (
	"context"
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/ui"
)

// TestSiteProtectionForms: each form of the Settings tab's Protection
// panel answers 303 to that panel with its flash, and changes what it says
// (a refused one changes nothing).
func TestSiteProtectionForms(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	post := func(name string, before func(testing.TB, *tests.TestApp), kind, flash string, check func(testing.TB, *sites.Protection), kv ...string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPost, URL: page + "/protection",
			Body: formBody(kv...), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				if before != nil {
					before(t, app)
				}
			},
			ExpectedStatus: 303, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, page+"/settings#protection")
				expectFlash(t, app, sessionAlice, kind, flash)
				rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				check(t, sites.ProtectionOf(rec))
			},
		}
	}
	public := func(t testing.TB, p *sites.Protection) {
		if p != nil {
			t.Fatalf("protection %+v", p)
		}
	}
	var sharedBefore string // alice-site's share token as protectAlice sets it, per scenario
	remember := func(t testing.TB, app *tests.TestApp) {
		protectAlice(t, app)
		rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		sharedBefore = sites.ProtectionOf(rec).ShareToken()
	}
	runScenarios(t, []tests.ApiScenario{
		post("set a password", nil, ui.FlashSuccess, "Password set", func(t testing.TB, p *sites.Protection) {
			if p == nil || !p.CheckPassword("page password") || p.Link {
				t.Fatalf("protection %+v", p)
			}
		}, "action", "password", "password", "page password"),
		post("a short password is refused", nil, ui.FlashError, "Password not set: password must be 8 to 128 characters.", public,
			"action", "password", "password", "short"),
		post("remove the password", protectAlice, ui.FlashSuccess, "Password removed.", func(t testing.TB, p *sites.Protection) {
			if p == nil || p.PasswordHash != "" || !p.Link {
				t.Fatalf("protection %+v", p)
			}
		}, "action", "remove-password"),
		post("share link on", nil, ui.FlashSuccess, "Share link on", func(t testing.TB, p *sites.Protection) {
			if p == nil || !p.Link {
				t.Fatalf("protection %+v", p)
			}
		}, "action", "link-on"),
		post("share link off, no password left: public", func(t testing.TB, app *tests.TestApp) {
			rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
			on := true
			if _, err := stateOf(t, app).svc.SetProtection(context.Background(), rec, sites.ProtectionChange{Link: &on}); err != nil {
				t.Fatal(err)
			}
		}, ui.FlashSuccess, "The site is public now.", public, "action", "link-off"),
		post("rotate", remember, ui.FlashSuccess, "New share link made", func(t testing.TB, p *sites.Protection) {
			if p == nil || !p.Link || p.ShareToken() == sharedBefore || !p.CheckPassword("alice's password") {
				t.Fatalf("protection %+v", p)
			}
		}, "action", "rotate"),
		post("an unknown action changes nothing", protectAlice, ui.FlashError, "unknown action", func(t testing.TB, p *sites.Protection) {
			if p == nil || !p.Link || p.PasswordHash == "" {
				t.Fatalf("protection %+v", p)
			}
		}, "action", "explode"),
		{
			Name: "from another origin", Method: http.MethodPost, URL: page + "/protection",
			Body:           formBody("action", "link-on"),
			Headers:        withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://alice-site.sites.test", "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus: 403, ExpectedContent: []string{`data-testid="error-page"`}, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				if sites.ProtectionOf(rec) != nil {
					t.Fatal("a refused form changed the protection")
				}
			},
		},
		{
			Name: "someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/protection",
			Body: formBody("action", "link-on"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 404, ExpectedContent: []string{"Site not found"}, TestAppFactory: newTestApp,
		},
		{
			Name: "the page of a public site", Method: http.MethodGet, URL: page + "/settings", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{`data-testid="protection-panel"`, "Public: anyone with the address", `data-testid="share-on"`,
				`<label for="protect-password">Password</label>`},
			NotExpectedContent: []string{`data-testid="share-url"`, `data-testid="protect-password-remove"`},
			TestAppFactory:     newTestApp,
		},
		{
			Name: "the page of a protected site shows and copies the share link", Method: http.MethodGet, URL: page + "/settings", Headers: cookie(sessionAlice),
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus: 200,
			ExpectedContent: []string{"Visitors need the password or the share link", `data-testid="share-url">http://alice-site.sites.test/?_token=`,
				`data-testid="share-copy"`, `data-copy="http://alice-site.sites.test/?_token=`, `data-testid="share-rotate"`, `data-testid="protect-password-remove"`,
				"Change password"},
			TestAppFactory: newTestApp,
		},
		{
			Name: "the Overview badges a protected site", Method: http.MethodGet, URL: page, Headers: cookie(sessionAlice),
			BeforeTestFunc:  func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:  200,
			ExpectedContent: []string{`href="/account/sites/` + idAliceSite + `/settings#protection" data-testid="site-protected">Protected</a>`},
			TestAppFactory:  newTestApp,
		},
		{
			Name: "the account page badges protected sites", Method: http.MethodGet, URL: "/account", Headers: cookie(sessionAlice),
			BeforeTestFunc:  func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:  200,
			ExpectedContent: []string{`data-testid="protected-badge">Protected</span>`},
			TestAppFactory:  newTestApp,
		},
		{
			Name: "no badge on a public site", Method: http.MethodGet, URL: "/account", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, NotExpectedContent: []string{`data-testid="protected-badge"`}, TestAppFactory: newTestApp,
		},
	})
}
