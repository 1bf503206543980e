package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/domains"
	"sitedrop/ui"
)

func TestSiteDomainsPages(t *testing.T) {
	t.Parallel()
	dns := startFakeDNS(t)
	factory := domainsAppFactory(dns)
	page := "/account/sites/" + idAliceSite
	form := withHeaders(sameOrigin, cookie(sessionAlice))
	withDomain := func(verified bool) func(testing.TB, *tests.TestApp, *core.ServeEvent) {
		return func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
			mustDomain(t, app, idAliceSite, "shop.custom.test", verified)
		}
	}
	count := func(t testing.TB, app *tests.TestApp) int {
		n, err := domains.CountOwned(app, mustFindUser(t, app, "alice@example.com").Id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the panel: records to create, state, usage", Method: http.MethodGet, URL: page + "/domains", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, TestAppFactory: factory, BeforeTestFunc: withDomain(false),
			ExpectedContent: []string{`data-testid="domain-row" data-status="pending"`, `data-testid="domain-verify"`,
				`<code class="long">_sitedrop-challenge.shop.custom.test</code>`, `data-copy="alice-site.sites.test"`,
				"1 of 1 custom domains used on the free plan", `data-testid="domain-form"`},
		},
		{
			Name: "a verified domain links to the site", Method: http.MethodGet, URL: page + "/domains", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, TestAppFactory: factory, BeforeTestFunc: withDomain(true),
			ExpectedContent:    []string{`data-status="verified"`, `href="http://shop.custom.test/"`},
			NotExpectedContent: []string{`data-testid="domain-verify"`, `data-testid="domain-record"`},
		},
		{
			Name: "the account page counts domains", Method: http.MethodGet, URL: "/account", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, TestAppFactory: factory, BeforeTestFunc: withDomain(false),
			ExpectedContent: []string{"1 of 1 custom domains used"},
		},
		{
			Name: "add", Method: http.MethodPost, URL: page + "/domains", Body: formBody("domain", "shop.custom.test"), Headers: form,
			ExpectedStatus: 303, TestAppFactory: factory,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectFlash(t, app, sessionAlice, ui.FlashSuccess, "shop.custom.test added. Create the DNS records below")
				if count(t, app) != 1 {
					t.Error("not added")
				}
			},
		},
		{
			Name: "add a bad domain", Method: http.MethodPost, URL: page + "/domains", Body: formBody("domain", "192.0.2.1"), Headers: form,
			ExpectedStatus: 303, TestAppFactory: factory,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectFlash(t, app, sessionAlice, ui.FlashError, "Domain not added: an IP address is not a domain.")
				if count(t, app) != 0 {
					t.Error("added")
				}
			},
		},
		{
			Name: "add over the limit", Method: http.MethodPost, URL: page + "/domains", Body: formBody("domain", "other.custom.test"), Headers: form,
			ExpectedStatus: 303, TestAppFactory: factory, BeforeTestFunc: withDomain(false),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectFlash(t, app, sessionAlice, ui.FlashError, "Custom domain limit reached (1 on the free plan)")
			},
		},
		{
			Name: "check now, not there yet", Method: http.MethodPost, URL: page + "/domains/shop.custom.test/verify", Headers: form,
			ExpectedStatus: 303, TestAppFactory: factory, BeforeTestFunc: withDomain(false),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectFlash(t, app, sessionAlice, ui.FlashError, "shop.custom.test is not verified yet: no TXT record at _sitedrop-challenge.shop.custom.test.")
			},
		},
		{
			Name: "remove", Method: http.MethodPost, URL: page + "/domains/shop.custom.test/delete", Headers: form,
			ExpectedStatus: 303, TestAppFactory: factory, BeforeTestFunc: withDomain(true),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectFlash(t, app, sessionAlice, ui.FlashSuccess, "shop.custom.test removed")
				if count(t, app) != 0 {
					t.Error("not removed")
				}
			},
		},
		{
			Name: "remove a domain the site does not have", Method: http.MethodPost, URL: page + "/domains/other.custom.test/delete",
			Headers: form, ExpectedStatus: 404, ExpectedContent: []string{`data-testid="error-page"`}, TestAppFactory: factory,
		},
		{
			Name: "remove on someone else's site", Method: http.MethodPost, URL: "/account/sites/" + idBobSite + "/domains/shop.custom.test/delete",
			Headers: form, ExpectedStatus: 404, ExpectedContent: []string{"There is no such site on your account."}, TestAppFactory: factory,
		},
		{
			Name: "add from another origin", Method: http.MethodPost, URL: page + "/domains", Body: formBody("domain", "shop.custom.test"),
			Headers:        withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://alice-site.sites.test", "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus: 403, ExpectedContent: []string{`data-testid="error-page"`}, TestAppFactory: factory,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if count(t, app) != 0 {
					t.Error("added")
				}
			},
		},
	})
}
