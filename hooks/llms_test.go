package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"
)

// TestLLMSTxt: /llms.txt on the web host tells an agent how to publish
// here, with this server's URLs and configured limits; a site host
// answers from the site, never with it.
func TestLLMSTxt(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "web host",
			Method:         http.MethodGet,
			URL:            "/llms.txt",
			ExpectedStatus: 200,
			ExpectedContent: []string{
				"# sitedrop\n",
				"curl -s http://web.test/deploy ",
				"http://your-site.sites.test/",
				"expires after 24 hours",
				"Request body: 64 KiB; files per site: 10;",
				"`{{SUBMIT_URL}}`",
				"`share_url` (`?_token=...`)",
				"[OpenAPI 3.1 description of every route](http://web.test/openapi.json)",
				"Streamable HTTP at http://web.test/mcp",
				"Custom domains per account: 1 (free plan), 10 (pro plan).",
				"`POST http://web.test/deploy/{id}/domains {\"domain\": \"shop.example.com\"}`",
				"`POST http://web.test/deploy/{id}/versions/{version}/promote`",
				"list_versions, rollback, promote,\nrename, pause, resume, analytics, whoami. deploy and update take `draft`, `alias` and `message`",
				"`POST http://web.test/deploy/{id}/rename {\"slug\": \"new-name\"}`",
			},
			NotExpectedContent: []string{"<no value>"},
			TestAppFactory:     newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if ct := res.Header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
			},
		},
	})
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	res, body := do(t, mux, http.MethodGet, "http://alice-site.sites.test/llms.txt", "", nil)
	if res.StatusCode != 404 || strings.Contains(body, "# sitedrop") {
		t.Errorf("a site host answered /llms.txt with %d %q", res.StatusCode, body)
	}
}
