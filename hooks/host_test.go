package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// TestServerHandlerWrapper checks the production split: site hosts are
// answered by the site server and never reach the wrapped handler.
func TestServerHandlerWrapper(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	reached := 0
	se := &core.ServeEvent{App: app, Server: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, "pocketbase")
	})}}
	wrapServerHandler(sd, se)

	for _, c := range []struct {
		host, path string
		status     int
		body       string
		reachesPB  bool
	}{
		{"alice-site.sites.test", "/", 200, "<h1>alice</h1>", false},
		{"alice-site.sites.test:8090", "/_/", 404, "Not found", false},
		{"x.alice-site.sites.test", "/api/health", 404, "Site not found", false},
		{"nope.sites.test", "/deploys", 404, "Site not found", false},
		{"web.test", "/api/health", 200, "pocketbase", true},
		{"127.0.0.1:8090", "/", 200, "pocketbase", true},
	} {
		before := reached
		req := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		rec := httptest.NewRecorder()
		se.Server.Handler.ServeHTTP(rec, req)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) || (reached > before) != c.reachesPB {
			t.Errorf("%s%s: %d %q, reached PocketBase: %v", c.host, c.path, rec.Code, rec.Body.String(), reached > before)
		}
	}
}

// TestWebHostUnderSitesDomain: with --domain web.sites.test and
// --sites-domain sites.test the web host still serves the API, and no
// site can take the name "web".
func TestWebHostUnderSitesDomain(t *testing.T) {
	t.Parallel()
	factory := func(t testing.TB) *tests.TestApp {
		app, _ := newBareApp(t, func(c *Config) { c.Domain = "web.sites.test" })
		return app
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "the web host answers the API",
			Method:          http.MethodPost,
			URL:             "http://web.sites.test/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"neighbour"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"url":"http://neighbour.sites.test/"`, `"claim_url":"http://web.sites.test/claim/neighbour?token=`},
			TestAppFactory:  factory,
		},
		{
			Name:            "the web host's label is reserved",
			Method:          http.MethodPost,
			URL:             "http://web.sites.test/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"web"}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugReserved)},
			TestAppFactory:  factory,
		},
	})
}
