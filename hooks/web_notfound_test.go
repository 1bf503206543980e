package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	pbui "github.com/pocketbase/pocketbase/ui"

	"sitedrop/sites"
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
			Name:               "unknown path under the admin dashboard, browser: the styled 404 page",
			Method:             http.MethodGet,
			URL:                "/_/nope",
			Headers:            browserAccept,
			ExpectedStatus:     404,
			ExpectedContent:    []string{`data-testid="error-page"`, "Page not found", `href="/_/"`},
			NotExpectedContent: []string{`"status":404`, `"error"`},
			TestAppFactory:     newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Fatalf("Content-Type %q, want HTML", ct)
				}
			},
		},
		{
			Name:               "unknown path under the admin dashboard, API client: PocketBase's JSON 404",
			Method:             http.MethodGet,
			URL:                "/_/nope",
			ExpectedStatus:     404,
			ExpectedContent:    []string{`"status":404`},
			NotExpectedContent: []string{`data-testid="error-page"`},
			TestAppFactory:     newTestApp,
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

// TestWebRobotsTxt: the web host tells crawlers to keep out of the
// account pages, claim links and sign-in; a site's host keeps serving the
// site's own robots.txt (or its 404), untouched.
func TestWebRobotsTxt(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "web host",
			Method:          http.MethodGet,
			URL:             "/robots.txt",
			ExpectedStatus:  200,
			ExpectedContent: []string{"User-agent: *\n", "Disallow: /account\n", "Disallow: /claim\n", "Disallow: /auth\n"},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if ct := res.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Fatalf("Content-Type %q", ct)
				}
			},
		},
	})
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	mustDeploy(t, sd, alice, "", "robots-none", "<h1>x</h1>", "")
	own := "User-agent: *\nAllow: /\n"
	if _, err := sd.svc.Create(context.Background(), sites.CreateParams{Owner: alice, Slug: "robots-own", Upload: sites.Upload{
		StorageType: sites.StorageFiles, Files: []sites.File{
			{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte("<h1>x</h1>")},
			{Path: "robots.txt", ContentType: "text/plain; charset=utf-8", Data: []byte(own)},
		},
	}}); err != nil {
		t.Fatal(err)
	}
	mux := newMux(t, app)
	get := func(host string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "http://"+host+"/robots.txt", nil)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := get("robots-own.sites.test"); code != http.StatusOK || body != own {
		t.Errorf("a site's own robots.txt: %d %q, want %q", code, body, own)
	}
	if code, body := get("robots-none.sites.test"); code != http.StatusNotFound || strings.Contains(body, "Disallow") {
		t.Errorf("a site without robots.txt: %d %q, want its 404", code, body)
	}
	if code, body := get("web.test"); code != http.StatusOK || !strings.Contains(body, "Disallow: /account") {
		t.Errorf("the web host through the front door: %d %q", code, body)
	}
}

// TestAdminDashboardNotFoundPage serves PocketBase's admin dashboard as
// apis.Serve does (its /_/{path...} route, which the tests' router lacks):
// a browser asking for a file it does not have gets the styled 404 page,
// an API client PocketBase's JSON, and the dashboard itself still loads.
func TestAdminDashboardNotFoundPage(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	r, err := apis.NewRouter(app)
	if err != nil {
		t.Fatal(err)
	}
	r.GET("/_/{path...}", apis.Static(pbui.DistDirFS, false))
	se := &core.ServeEvent{App: app, Router: r}
	var mux http.Handler
	if err := app.OnServe().Trigger(se, func(e *core.ServeEvent) (err error) {
		mux, err = e.Router.BuildMux()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		headers    map[string]string
		status     int
		want       string
	}{
		{"browser, unknown file", "/_/nope", browserAccept, 404, `data-testid="error-page"`},
		{"browser, unknown nested file", "/_/images/nope.png", browserAccept, 404, `href="/_/"`},
		{"API client, unknown file", "/_/nope", nil, 404, `"status":404`},
		{"browser, the dashboard", "/_/", browserAccept, 200, "<html"},
	} {
		res, body := do(t, mux, http.MethodGet, c.path, "", c.headers)
		if res.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: GET %s: %d, want %d with %q:\n%.300s", c.name, c.path, res.StatusCode, c.status, c.want, body)
		}
	}
}
