package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/tests"
)

// browserAccept is what Chromium sends when it navigates to a page.
var browserAccept = map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

func TestWebNotFound(t *testing.T) {
	t.Parallel()
	redirect := func(loc string) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, _ *tests.TestApp, res *http.Response) {
			if got := res.Header.Get("Location"); got != loc {
				t.Fatalf("Location %q, want %q", got, loc)
			}
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:               "unknown path, browser: the styled 404 page",
			Method:             http.MethodGet,
			URL:                "/no/such/page",
			Headers:            browserAccept,
			ExpectedStatus:     404,
			ExpectedContent:    []string{`data-testid="error-page"`, "Page not found", `href="/static/sitedrop.css"`},
			NotExpectedContent: []string{`"error"`},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "unknown path, signed-in browser: the page knows who",
			Method:          http.MethodGet,
			URL:             "/nope",
			Headers:         withHeaders(browserAccept, cookie(sessionAlice)),
			ExpectedStatus:  404,
			ExpectedContent: []string{`data-testid="error-page"`, `data-testid="nav-account"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "unknown path, API client: JSON",
			Method:          http.MethodGet,
			URL:             "/no/such/page",
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgRouteNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "a page's method it lacks, browser: the styled 404",
			Method:          http.MethodPost,
			URL:             "/llms.txt",
			Headers:         browserAccept,
			ExpectedStatus:  404,
			ExpectedContent: []string{`data-testid="error-page"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "favicon.ico is the emoji icon",
			Method:          http.MethodGet,
			URL:             "/favicon.ico",
			ExpectedStatus:  200,
			ExpectedContent: []string{"<svg", "💧"},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if ct := res.Header.Get("Content-Type"); ct != "image/svg+xml" {
					t.Fatalf("Content-Type %q", ct)
				}
			},
		},
		{
			Name:           "trailing slash on a page, browser: 308 without it",
			Method:         http.MethodGet,
			URL:            "/account/",
			Headers:        browserAccept,
			ExpectedStatus: 308,
			TestAppFactory: newTestApp,
			AfterTestFunc:  redirect("/account"),
		},
		{
			Name:           "trailing slash, API client: the same 308, query kept",
			Method:         http.MethodGet,
			URL:            "/auth/login/?next=%2Fclaim%2Fx",
			ExpectedStatus: 308,
			TestAppFactory: newTestApp,
			AfterTestFunc:  redirect("/auth/login?next=%2Fclaim%2Fx"),
		},
		{
			Name:            "trailing slash on a POST: 404 JSON, no redirect",
			Method:          http.MethodPost,
			URL:             "/deploys/",
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgRouteNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "escaped slashes stay a path of this host",
			Method:         http.MethodGet,
			URL:            "/%2F%2Fevil.example/",
			ExpectedStatus: 308,
			TestAppFactory: newTestApp,
			AfterTestFunc:  redirect("/%2F%2Fevil.example"),
		},
		{
			Name:            "PocketBase's /api/ keeps its own 404",
			Method:          http.MethodGet,
			URL:             "/api/nope",
			Headers:         browserAccept,
			ExpectedStatus:  404,
			ExpectedContent: []string{`"status":404`},
			TestAppFactory:  newTestApp,
		},
	})
}
