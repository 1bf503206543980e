package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/store"
)

// emptyReport is the report of a deploy with nothing to report.
const emptyReport = `"report":{"broken_links":[],"forms":[],"rules":[],"untitled_pages":[],"large_images":[],"truncated":false}`

// TestDeployReport checks that every kind of deploy answers with the
// site's quality report (its findings are tested in sites/report).
func TestDeployReport(t *testing.T) {
	t.Parallel()
	page := `<title>Digest</title><a href=\"/nowhere\">x</a>`
	digestPage := strings.ReplaceAll(page, `\"`, `"`)
	h := store.HashBytes([]byte(digestPage))
	withBlob := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		if err := sd.svc.Store().Put(t.Context(), h, []byte(digestPage)); err != nil {
			t.Fatal(err)
		}
		return app
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:    "a keyed JSON deploy reports each problem",
			Method:  http.MethodPost,
			URL:     "/deploy",
			Headers: bearer(keyPia),
			Body: strings.NewReader(`{"files":[` +
				`{"path":"index.html","content":"<title>Home</title><a href=\"/about\">a</a><img src=\"logo.png\"><form method=\"post\"><input name=\"q\"></form>"},` +
				`{"path":"about.html","content":"<p>no title</p>"},` +
				`{"path":"_redirects","content":"/x /y 999\n"}]}`),
			ExpectedStatus: 200,
			ExpectedContent: []string{`"report":{` +
				`"broken_links":[{"page":"index.html","target":"/logo.png"}],` +
				`"forms":[{"page":"index.html","problem":"no action: its submissions go nowhere (use action=\"{{SUBMIT_URL}}\")"}],` +
				`"rules":[{"file":"_redirects","line":1,"message":"status 999 is not supported (200, 301, 302, 303, 307, 308, 404, 410)"}],` +
				`"untitled_pages":["about.html"],"large_images":[],"truncated":false}`},
			TestAppFactory: newTestApp,
		},
		{
			Name:            "an anonymous deploy carries it",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"<a href=\"/nope\">x</a>"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"claim_token":"`, `"broken_links":[{"page":"index.html","target":"/nope"}]`, `"untitled_pages":["index.html"]`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "a page gets the deployment's title",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"<p>hi</p>","title":"Hi"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"warnings":[],` + emptyReport + `}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "an archive deploy carries it",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=zipped",
			Headers:         withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}),
			Body:            zipOf(t, "index.html", `<title>Z</title><script src="app.js"></script>`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"broken_links":[{"page":"index.html","target":"/app.js"}]`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "a digest deploy reports on the stored content",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"index.html","sha256":"` + h + `"}]}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"broken_links":[{"page":"index.html","target":"/nowhere"}]`},
			TestAppFactory:  withBlob,
		},
	})
}
