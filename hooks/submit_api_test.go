package hooks

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/forms"
)

// countSubs counts the stored submissions of a deployment.
func countSubs(t testing.TB, app core.App, depID string) int64 {
	t.Helper()
	n, err := app.CountRecords(forms.SubmissionsCollection, dbx.HashExp{"deployment": depID})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func expectSubs(depID string, want int64) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if got := countSubs(t, app, depID); got != want {
			t.Fatalf("%d submissions stored, want %d", got, want)
		}
	}
}

func multipartBody(fields map[string]string, file bool) (string, *bytes.Buffer) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if file {
		fw, _ := w.CreateFormFile("upload", "a.txt")
		fw.Write([]byte("file"))
	}
	w.Close()
	return w.FormDataContentType(), &b
}

func TestSubmit(t *testing.T) {
	t.Parallel()
	mpType, mpBody := multipartBody(map[string]string{"name": "Ann", "email": "ann@example.com"}, false)
	mpFileType, mpFileBody := multipartBody(map[string]string{"name": "Ann"}, true)
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "JSON submission",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"name":"Ann","age":42,"tags":["a","b"]}`),
			Headers:         map[string]string{"Content-Type": "application/json", "Origin": "https://elsewhere.example"},
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`, `"id":"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if res.Header.Get("Access-Control-Allow-Origin") != "*" {
					t.Fatal("no CORS header")
				}
				expectSubs(idAliceSite, 1)(t, app, res)
			},
		},
		{
			Name:            "url-encoded form",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader("name=Ann&topic=a&topic=b"),
			Headers:         map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				recs, _ := app.FindAllRecords(forms.SubmissionsCollection)
				if len(recs) != 1 || recs[0].GetString("data") != `{"name":"Ann","topic":["a","b"]}` {
					t.Fatalf("stored %v", recs)
				}
			},
		},
		{
			Name:            "multipart form",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            mpBody,
			Headers:         map[string]string{"Content-Type": mpType},
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 1),
		},
		{
			Name:            "multipart with a file is refused",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            mpFileBody,
			Headers:         map[string]string{"Content-Type": mpFileType},
			ExpectedStatus:  400,
			ExpectedContent: []string{"File uploads are not accepted"},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:            "over 64 KiB",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"x":"` + strings.Repeat("a", 64<<10) + `"}`),
			ExpectedStatus:  413,
			ExpectedContent: []string{errBody("Request body too large: the limit is 64 KiB")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:            "malformed JSON",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"x":`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "null body",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`null`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Request body must be a JSON object")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:            "data after the object",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"a":1} trailing`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:            "a large form of HTML-escaped characters fits",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"a":"` + strings.Repeat("<", 60000) + `"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 1),
		},
		{
			Name:           "a _redirect to the web host is ignored",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=http%3A%2F%2Fweb.test%2F_%2F"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/submitted?") {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:            "honeypot: 200 and nothing stored",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader("name=Bot&_hp=gotcha"),
			Headers:         map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:           "browser form post goes to the thank-you page",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html,application/xhtml+xml"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "/submitted?site=http%3A%2F%2Falice-site.sites.test%2F" {
					t.Fatalf("Location %q", loc)
				}
				expectSubs(idAliceSite, 1)(t, app, res)
			},
		},
		{
			Name:           "browser form post with a same-site _redirect",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=" + "http%3A%2F%2Falice-site.sites.test%2Fthanks"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "http://alice-site.sites.test/thanks" {
					t.Fatalf("Location %q", loc)
				}
				recs, _ := app.FindAllRecords(forms.SubmissionsCollection)
				if strings.Contains(recs[0].GetString("data"), "_redirect") {
					t.Fatal("control fields must not be stored")
				}
			},
		},
		{
			Name:           "a relative _redirect is a page of the site",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=%2Fthanks%3Fok%3D1"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "http://alice-site.sites.test/thanks?ok=1" {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:           "a protocol-relative _redirect to the site, without credentials",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=" + url.QueryEscape("//u:p@alice-site.sites.test/thanks")),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "http://alice-site.sites.test/thanks" {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:           "a protocol-relative _redirect to another host is ignored",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=%2F%2Fevil.example%2Fthanks"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/submitted?") {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:           "a _redirect to another site is ignored",
			Method:         http.MethodPost,
			URL:            "/submit/" + idAliceSite,
			Body:           strings.NewReader("name=Ann&_redirect=https%3A%2F%2Fevil.example%2F"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"},
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/submitted?") {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:           "CORS preflight",
			Method:         http.MethodOptions,
			URL:            "/submit/" + idAliceSite,
			Headers:        map[string]string{"Origin": "https://anywhere.example", "Access-Control-Request-Method": "POST"},
			ExpectedStatus: 204,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				h := res.Header
				if h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
					!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
					t.Fatalf("preflight headers %v", h)
				}
			},
		},
		{
			Name:            "unknown deployment",
			Method:          http.MethodPost,
			URL:             "/submit/doesnotexist123",
			Body:            strings.NewReader(`{"a":1}`),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "expired anonymous deployment",
			Method:          http.MethodPost,
			URL:             "/submit/" + idOldAnon,
			Body:            strings.NewReader(`{"a":1}`),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "never on a site host",
			Method:          http.MethodPost,
			URL:             "http://alice-site.sites.test/submit/" + idAliceSite,
			Body:            strings.NewReader(`{"a":1}`),
			ExpectedStatus:  405,
			ExpectedContent: []string{"Method not allowed"},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 0),
		},
		{
			Name:            "thank-you page",
			Method:          http.MethodGet,
			URL:             "/submitted?site=http%3A%2F%2Falice-site.sites.test%2F",
			ExpectedStatus:  200,
			ExpectedContent: []string{`data-testid="submitted"`, `href="http://alice-site.sites.test/"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "thank-you page links only to sites",
			Method:             http.MethodGet,
			URL:                "/submitted?site=javascript%3A%2F%2Falice-site.sites.test%2F%250aalert(1)",
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="submitted"`},
			NotExpectedContent: []string{"javascript:", "Back to the site"},
			TestAppFactory:     newTestApp,
		},
	})
}

// TestSubmitRateLimit: 10 a minute per deployment, whatever the client.
func TestSubmitRateLimit(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	for i := range 10 {
		req := newRequest(http.MethodPost, "/submit/"+idAliceSite, fmt.Sprintf(`{"n":%d}`, i), nil)
		req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1000", i+1)
		if res := roundTrip(t, mux, req); res.StatusCode != 200 {
			t.Fatalf("submission %d: %d", i, res.StatusCode)
		}
	}
	res, body := do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"n":11}`, nil)
	if res.StatusCode != 429 || !strings.Contains(body, msgRateLimited) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("11th: %d %s", res.StatusCode, body)
	}
	if res, _ := do(t, mux, http.MethodPost, "/submit/"+idBobSite, `{"n":1}`, nil); res.StatusCode != 200 {
		t.Fatal("another deployment was limited")
	}
	if countSubs(t, app, idAliceSite) != 10 {
		t.Fatal("a limited submission was stored")
	}
}

// TestSubmitURLPlaceholder: {{SUBMIT_URL}} in deployed HTML becomes the
// deployment's form endpoint, on create and on PUT; other files keep it.
func TestSubmitURLPlaceholder(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	form := `<form method=post action=\"{{SUBMIT_URL}}\"><input name=email></form>`
	res, body := do(t, mux, http.MethodPost, "/deploy",
		`{"slug":"form-site","files":[{"path":"index.html","content":"`+form+`"},{"path":"notes.txt","content":"{{SUBMIT_URL}}"}]}`, bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	rec, _ := app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", "form-site")
	want := `action="http://web.test/submit/` + rec.Id + `"`
	if _, page := siteGet(t, app, "form-site.sites.test", "/"); !strings.Contains(page, want) {
		t.Fatalf("page %q lacks %s", page, want)
	}
	if _, txt := siteGet(t, app, "form-site.sites.test", "/notes.txt"); txt != "{{SUBMIT_URL}}" {
		t.Fatalf("a text file was changed: %q", txt)
	}
	do(t, mux, http.MethodPut, "/deploy/"+rec.Id, `{"html":"<form action='{{SUBMIT_URL}}'></form>"}`, bearer(keyAlice))
	if _, page := siteGet(t, app, "form-site.sites.test", "/"); !strings.Contains(page, "http://web.test/submit/"+rec.Id) {
		t.Fatalf("after PUT: %q", page)
	}
	// and the form works
	if res, _ := do(t, mux, http.MethodPost, "/submit/"+rec.Id, "email=a%40b.c", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); res.StatusCode != 200 {
		t.Fatalf("submit: %d", res.StatusCode)
	}
}
