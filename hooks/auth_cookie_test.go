package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"
)

// ownerOf fails the test unless the deployment with slug belongs to the
// user with email ("" for anonymous).
func ownerOf(slug, email string) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		rec, err := app.FindFirstRecordByData("deployments", "slug", slug)
		if err != nil {
			t.Fatalf("no deployment %s: %v", slug, err)
		}
		got := ""
		if id := rec.GetString("owner"); id != "" {
			u, err := app.FindRecordById("users", id)
			if err != nil {
				t.Fatal(err)
			}
			got = u.Email()
		}
		if got != email {
			t.Fatalf("%s belongs to %q, want %q", slug, got, email)
		}
	}
}

// TestAPICookieAuth: the API takes the session cookie only from the web
// host's own pages (Sec-Fetch-Site: same-origin, or an Origin equal to the
// request's own), and an Authorization header always wins over it.
func TestAPICookieAuth(t *testing.T) {
	t.Parallel()
	deploy := func(slug string) *strings.Reader {
		return strings.NewReader(`{"slug":"` + slug + `","html":"<h1>hi</h1>"}`)
	}
	alice := cookie(sessionAlice)
	sameSite := map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://alice-site.sites.test"}
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "cookie + same-origin: the deploy belongs to the account", Method: http.MethodPost, URL: "/deploy",
			Body: deploy("cookie-owned"), Headers: withHeaders(alice, map[string]string{"Sec-Fetch-Site": "same-origin"}),
			ExpectedStatus: 200, ExpectedContent: []string{`"slug":"cookie-owned"`}, NotExpectedContent: []string{"claim_token"},
			AfterTestFunc: ownerOf("cookie-owned", "alice@example.com"), TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + own Origin without Sec-Fetch-Site: owned", Method: http.MethodPost, URL: "http://web.test/deploy",
			Body: deploy("origin-owned"), Headers: withHeaders(alice, map[string]string{"Origin": "http://web.test"}),
			ExpectedStatus: 200, NotExpectedContent: []string{"claim_token"},
			AfterTestFunc: ownerOf("origin-owned", "alice@example.com"), TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + a site host (same-site): anonymous, so refused as any cross-origin anonymous deploy", Method: http.MethodPost, URL: "/deploy",
			Body: deploy("same-site-anon"), Headers: withHeaders(alice, sameSite),
			ExpectedStatus: 403, ExpectedContent: []string{errBody(msgCrossOriginAnonDeploy)},
			ExpectedEvents: map[string]int{"OnRecordCreate": 0}, TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + cross-site: anonymous, refused", Method: http.MethodPost, URL: "/deploy",
			Body: deploy("cross-site-anon"), Headers: withHeaders(alice, crossSite),
			ExpectedStatus: 403, ExpectedContent: []string{errBody(msgCrossOriginAnonDeploy)},
			ExpectedEvents: map[string]int{"OnRecordCreate": 0}, TestAppFactory: newTestApp,
		},
		{
			Name: "cookie without any proof (curl): anonymous", Method: http.MethodPost, URL: "/deploy",
			Body: deploy("no-proof-anon"), Headers: alice,
			ExpectedStatus: 200, ExpectedContent: []string{"claim_token"},
			AfterTestFunc: ownerOf("no-proof-anon", ""), TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + an Origin of another scheme: anonymous", Method: http.MethodPost, URL: "http://web.test/deploy",
			Body: deploy("scheme-anon"), Headers: withHeaders(alice, map[string]string{"Origin": "https://web.test"}),
			ExpectedStatus: 200, ExpectedContent: []string{"claim_token"},
			AfterTestFunc: ownerOf("scheme-anon", ""), TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + same-origin: PUT /deploy/{id} of one's own site", Method: http.MethodPut, URL: "/deploy/" + idAliceSite,
			Body: strings.NewReader(`{"html":"<h1>new</h1>"}`), Headers: withHeaders(alice, map[string]string{"Sec-Fetch-Site": "same-origin"}),
			ExpectedStatus: 200, ExpectedContent: []string{`"slug":"alice-site"`}, TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + same-site: PUT is 401", Method: http.MethodPut, URL: "/deploy/" + idAliceSite,
			Body: strings.NewReader(`{"html":"<h1>new</h1>"}`), Headers: withHeaders(alice, sameSite),
			ExpectedStatus: 401, ExpectedContent: []string{errBody(msgUnauthorized)}, TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + same-origin: POST /blobs/missing", Method: http.MethodPost, URL: "/blobs/missing",
			Body: strings.NewReader(`{"hashes":[]}`), Headers: withHeaders(alice, map[string]string{"Sec-Fetch-Site": "same-origin"}),
			ExpectedStatus: 200, ExpectedContent: []string{`"missing":[]`}, TestAppFactory: newTestApp,
		},
		{
			Name: "cookie + cross-site: POST /blobs/missing is 401", Method: http.MethodPost, URL: "/blobs/missing",
			Body: strings.NewReader(`{"hashes":[]}`), Headers: withHeaders(alice, crossSite),
			ExpectedStatus: 401, ExpectedContent: []string{errBody(msgUnauthorized)}, TestAppFactory: newTestApp,
		},
		{
			Name: "bearer wins over a same-origin cookie", Method: http.MethodPut, URL: "/deploy/" + idAliceSite,
			Body: strings.NewReader(`{"html":"<h1>new</h1>"}`), Headers: withHeaders(alice, bearer(keyBob), map[string]string{"Sec-Fetch-Site": "same-origin"}),
			ExpectedStatus: 404, ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: newTestApp,
		},
		{
			Name: "a bad bearer is 401 even with a same-origin cookie", Method: http.MethodPost, URL: "/deploy",
			Body: deploy("bad-bearer"), Headers: withHeaders(alice, bearer(keyUnknown), map[string]string{"Sec-Fetch-Site": "same-origin"}),
			ExpectedStatus: 401, ExpectedContent: []string{errBody(msgUnauthorized)}, TestAppFactory: newTestApp,
		},
	})
}
