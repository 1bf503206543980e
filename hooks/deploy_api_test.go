package hooks

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/intake"
)

func errBody(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

// decodeJSONBody decodes a JSON response body.
func decodeJSONBody(t testing.TB, res *http.Response) map[string]any {
	t.Helper()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return out
}

// expectSite checks what the site at host serves after a request.
func expectSite(host string, status int, contains string) func(testing.TB, *tests.TestApp, *http.Response) {
	return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		got, body := siteGet(t, app, host, "/")
		if got != status || !strings.Contains(body, contains) {
			t.Fatalf("site %s: got %d %q, want %d containing %q", host, got, body, status, contains)
		}
	}
}

func TestDeployCreate(t *testing.T) {
	t.Parallel()
	scenarios := []tests.ApiScenario{
		{
			Name:           "anonymous html deploy returns claim fields",
			Method:         http.MethodPost,
			URL:            "/deploy",
			Body:           strings.NewReader(`{"html":"<h1>hi</h1>","slug":"fresh-page","title":"Hi"}`),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"slug":"fresh-page"`,
				`"url":"http://fresh-page.sites.test/"`,
				`"claim_token":"`,
				`"claim_url":"http://web.test/claim/fresh-page?token=`,
				`"expires_at":"`,
			},
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				body := decodeJSONBody(t, res)
				rec, err := app.FindFirstRecordByData("deployments", "slug", "fresh-page")
				if err != nil {
					t.Fatal(err)
				}
				if rec.GetString("owner") != "" || rec.GetDateTime("expires_at").IsZero() {
					t.Fatalf("want anonymous with expiry, got owner %q expires %v", rec.GetString("owner"), rec.Get("expires_at"))
				}
				if got := rec.GetString("claim_token_hash"); got != accounts.HashSecret(body["claim_token"].(string)) {
					t.Fatalf("claim token not stored as its hash")
				}
				if rec.GetString("storage_type") != "html" {
					t.Fatalf("storage_type = %q", rec.GetString("storage_type"))
				}
				expectSite("fresh-page.sites.test", 200, "<title>Hi</title>")(t, app, res)
			},
		},
		{
			Name:               "keyed deploy belongs to the account and has no claim fields",
			Method:             http.MethodPost,
			URL:                "/deploy",
			Headers:            bearer(keyAlice),
			Body:               strings.NewReader(`{"html":"<p>mine</p>","slug":"my-page"}`),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"slug":"my-page"`, `"url":"http://my-page.sites.test/"`, `"id":"`},
			NotExpectedContent: []string{"claim_token", "expires_at"},
			TestAppFactory:     newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				rec, err := app.FindFirstRecordByData("deployments", "slug", "my-page")
				if err != nil {
					t.Fatal(err)
				}
				alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
				if rec.GetString("owner") != alice.Id || !rec.GetDateTime("expires_at").IsZero() {
					t.Fatal("keyed deployment must be owned and not expire")
				}
				expectSite("my-page.sites.test", 200, "<p>mine</p>")(t, app, res)
			},
		},
		{
			Name:    "multi-file deploy with base64, nested paths and generated slug",
			Method:  http.MethodPost,
			URL:     "/deploy",
			Headers: bearer(keyAlice),
			Body: strings.NewReader(`{"files":[
				{"path":"/index.html","content":"<h1>home</h1>","contentType":"text/html"},
				{"path":"./docs/guide.html","content":"<h1>guide</h1>"},
				{"path":"img/dot.png","content":"iVBORw0KGgo=","encoding":"base64"}
			],"is_spa":true}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"url":"http://`, `.sites.test/"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				body := decodeJSONBody(t, res)
				slug := body["slug"].(string)
				if err := sites.ValidateSlug(slug); err != nil {
					t.Fatalf("generated slug %q: %v", slug, err)
				}
				sd := stateOf(t, app)
				site, err := sd.svc.LoadSite(slug)
				if err != nil {
					t.Fatal(err)
				}
				if len(site.Files) != 3 || site.Files["img/dot.png"].Type != "image/png" || !site.IsSPA {
					t.Fatalf("manifest %+v spa %v", site.Files, site.IsSPA)
				}
				if code, b := siteGet(t, app, slug+".sites.test", "/docs/guide"); code != 200 || !strings.Contains(b, "guide") {
					t.Fatalf("clean URL: %d %q", code, b)
				}
				rec, _ := app.FindRecordById("deployments", body["id"].(string))
				if rec.GetString("storage_type") != "files" {
					t.Fatalf("storage_type %q", rec.GetString("storage_type"))
				}
			},
		},
		{
			Name:            "a site without index.html is allowed",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"a.txt","content":"a"}]}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "invalid key is 401, not anonymous",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyUnknown),
			Body:            strings.NewReader(`{"html":"x"}`),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "non-bearer Authorization is 401",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         map[string]string{"Authorization": "Basic YTpi"},
			Body:            strings.NewReader(`{"html":"x"}`),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "neither html nor files",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"title":"x"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgHTMLRequired)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "html null counts as missing",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":null}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgHTMLRequired)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "both html and files",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","files":[{"path":"a.html","content":"a"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgBothContent)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "empty files array",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("files must not be empty")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "malformed JSON",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html": "x",`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "trailing data after the object",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html": "x"} {}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON: unexpected data after the JSON object"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "empty body",
			Method:          http.MethodPost,
			URL:             "/deploy",
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Request body must be a JSON object")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "body is not an object",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`["html"]`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Request body must be a JSON object")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "html of the wrong type",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":5}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Invalid type for field html: expected a string")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "is_spa of the wrong type",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","is_spa":"yes"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Invalid type for field is_spa: expected a boolean")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "files of the wrong type",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":{"path":"a"}}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Invalid type for field files: expected an array")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "file content of the wrong type",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"a.html","content":1}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("Invalid type for field files.content: expected a string")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "unknown encoding names the path",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"a.bin","content":"x","encoding":"hex"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"invalid file path \"a.bin\": unknown encoding`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "base64 that does not decode names the path",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"img/a.png","content":"***","encoding":"base64"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`img/a.png`, `content is not valid base64`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "title too long",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","title":"` + strings.Repeat("t", intake.MaxTitleLen+1) + `"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("title is too long: at most 500 characters")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "favicon that is not an emoji",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","favicon":"<script>"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(sites.MsgFavicon)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "slug taken",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"html":"x","slug":"alice-site"}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugTaken)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			// the slug is checked before the files: a client learns of a
			// taken slug before it uploads content by hash
			Name:            "slug taken is answered before unknown content",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"slug":"alice-site","files":[{"path":"a.js","sha256":"` + strings.Repeat("ab", 32) + `"}]}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugTaken)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "slug taken by a live anonymous deployment",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"anon-site"}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugTaken)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "slug of an expired anonymous deployment is free at once",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"html":"<p>new owner</p>","slug":"old-anon"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"old-anon"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if _, err := app.FindRecordById("deployments", idOldAnon); err == nil {
					t.Fatal("the expired deployment should be gone")
				}
				expectSite("old-anon.sites.test", 200, "new owner")(t, app, res)
			},
		},
		{
			Name:            "reserved slug",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"admin"}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugReserved)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "slug sent on create must follow the rule",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"My_Site"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"slug must be 3 to 63 lowercase letters`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "an empty slug is refused, not generated",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":""}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"slug must be 3 to 63 lowercase letters`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "free plan at its limit",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"x","slug":"one-too-many"}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody(msgSlotLimit)},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app, sd := newFixtureApp(t)
				alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
				for _, s := range []string{"two", "three", "four", "five"} {
					mustDeploy(t, sd, alice, "", "site-"+s, "x", "")
				}
				return app
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, err := app.FindFirstRecordByData("deployments", "slug", "one-too-many"); err == nil {
					t.Fatal("nothing may be created past the limit")
				}
			},
		},
		{
			Name:            "body over --max-body",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"` + strings.Repeat("x", 64<<10) + `"}`),
			ExpectedStatus:  413,
			ExpectedContent: []string{errBody("Request body too large: the limit is 64 KiB")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "chunked body over --max-body (no Content-Length)",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            io.MultiReader(strings.NewReader(`{"html":"` + strings.Repeat("x", 64<<10) + `"}`)),
			ExpectedStatus:  413,
			ExpectedContent: []string{errBody("Request body too large: the limit is 64 KiB")},
			TestAppFactory:  newTestApp,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				if n, _ := app.CountRecords("deployments"); n != 4 {
					t.Fatal("fixtures")
				}
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if n, _ := app.CountRecords("deployments"); n != 4 {
					t.Fatalf("an oversize deploy created a deployment (%d)", n)
				}
			},
		},
		{
			Name:            "more files than --max-files",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[` + strings.TrimSuffix(strings.Repeat(`{"path":"a.txt","content":"a"},`, 11), ",") + `]}`),
			ExpectedStatus:  413,
			ExpectedContent: []string{errBody("Too many files: the limit is 10")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "wrong method on /deploy",
			Method:          http.MethodGet,
			URL:             "/deploy",
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "wrong method on /deploy/claim",
			Method:          http.MethodPatch,
			URL:             "/deploy/claim",
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if got := res.Header.Get("Allow"); got != "POST" {
					t.Fatalf("Allow: %q", got)
				}
			},
		},
		{
			Name:            "unknown route answers in the API's error shape",
			Method:          http.MethodGet,
			URL:             "/no/such/route",
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgRouteNotFound)},
			TestAppFactory:  newTestApp,
		},
	}
	runScenarios(t, scenarios)
}

func TestDeployCreateHostilePaths(t *testing.T) {
	t.Parallel()
	var scenarios []tests.ApiScenario
	for _, path := range []string{`../etc/passwd`, `a/../../b`, `a//b`, `a\\b`, `a\u0000b`, `a\nb`, ``, `.`, `//abs`, `dir/`} {
		scenarios = append(scenarios, tests.ApiScenario{
			Name:            "path " + path,
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"` + path + `","content":"x"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"invalid file path `},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if n, _ := app.CountRecords("deployments"); n != 4 {
					t.Fatalf("a refused deploy created a deployment (%d)", n)
				}
			},
		})
	}
	scenarios = append(scenarios, tests.ApiScenario{
		Name:            "duplicate path after normalising",
		Method:          http.MethodPost,
		URL:             "/deploy",
		Body:            strings.NewReader(`{"files":[{"path":"/a.html","content":"1"},{"path":"a.html","content":"2"}]}`),
		ExpectedStatus:  400,
		ExpectedContent: []string{`duplicate path`},
		TestAppFactory:  newTestApp,
	})
	runScenarios(t, scenarios)
}

func TestDeployViewListDelete(t *testing.T) {
	t.Parallel()
	scenarios := []tests.ApiScenario{
		{
			Name:            "view without a key",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite,
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "view with an unknown key",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyUnknown),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "view someone else's deployment is 404",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "view an unknown id",
			Method:          http.MethodGet,
			URL:             "/deploy/doesnotexist123",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "view an anonymous deployment is 404 to everyone",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAnonSite,
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "view own deployment",
			Method:         http.MethodGet,
			URL:            "/deploy/" + idAliceSite,
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"id":"` + idAliceSite + `"`,
				`"slug":"alice-site"`,
				`"url":"http://alice-site.sites.test/"`,
				`"status":"active"`,
				`"storage_type":"html"`,
				`"is_spa":false`,
				`"title":"Alice"`,
				`"description":null`,
				`"favicon":""`,
				`"created_at":"20`,
				`"updated_at":"20`,
			},
			NotExpectedContent: []string{"claim", "live_version", "owner"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "list without a key",
			Method:          http.MethodGet,
			URL:             "/deploys",
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "list shows only the caller's deployments",
			Method:             http.MethodGet,
			URL:                "/deploys",
			Headers:            bearer(keyAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`{"deployments":[{"id":"` + idAliceSite + `","slug":"alice-site","url":"http://alice-site.sites.test/","title":"Alice","updated_at":"`},
			NotExpectedContent: []string{"bob-site", "anon-site"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "list of an account with none is empty",
			Method:          http.MethodGet,
			URL:             "/deploys",
			Headers:         bearer(keyPia),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"deployments":[]}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "wrong method on /deploys",
			Method:          http.MethodPost,
			URL:             "/deploys",
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "delete without a key",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite,
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "delete someone else's deployment is 404 and changes nothing",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "delete own deployment takes it offline and frees slug and slot",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"id":"` + idAliceSite + `"`, `"message":"Deployment alice-site deleted"`},
			ExpectedEvents: map[string]int{
				"OnRecordAfterDeleteSuccess": 2, // the deployment and its version
			},
			TestAppFactory: newTestApp,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				// warm the cache: deletion must still take effect at once
				if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
					t.Fatal("fixture site not served")
				}
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectSite("alice-site.sites.test", 404, "")(t, app, res)
				if n, _ := app.CountRecords("versions", nil); n != 3 {
					t.Fatalf("versions left: %d, want 3 (the other fixtures')", n)
				}
				sd := stateOf(t, app)
				alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
				if _, err := sd.svc.Create(t.Context(), sites.CreateParams{Owner: alice, Slug: "alice-site", Upload: htmlUpload("again")}); err != nil {
					t.Fatalf("slug not freed: %v", err)
				}
			},
		},
	}
	runScenarios(t, scenarios)
}

func TestDeployUpdate(t *testing.T) {
	t.Parallel()
	scenarios := []tests.ApiScenario{
		{
			Name:            "without a key",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Body:            strings.NewReader(`{"html":"x"}`),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "someone else's",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"html":"<p>hijacked</p>"}`),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "slug cannot be changed",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"x","slug":"other-name"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgSlugImmutable)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "neither html nor files",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"title":"only"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgHTMLRequired)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "both html and files",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"x","files":[]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgBothContent)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "malformed JSON",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "body over --max-body",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"` + strings.Repeat("x", 70<<10) + `"}`),
			ExpectedStatus:  413,
			ExpectedContent: []string{errBody("Request body too large: the limit is 64 KiB")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "replace content, keep omitted metadata",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"index.html","content":"<html><head></head><body>v2</body></html>"},{"path":"about.html","content":"about"}],"description":"Second"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"id":"` + idAliceSite + `","slug":"alice-site","url":"http://alice-site.sites.test/","version":2,"draft":false,"preview_url":"http://v2--alice-site.sites.test/","warnings":[],` + emptyReport + `}`},
			TestAppFactory:  newTestApp,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				siteGet(t, app, "alice-site.sites.test", "/") // warm the cache
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAliceSite)
				if rec.GetString("title") != "Alice" || rec.GetString("description") != "Second" || rec.GetString("storage_type") != "files" {
					t.Fatalf("metadata after PUT: title %q description %q type %q", rec.GetString("title"), rec.GetString("description"), rec.GetString("storage_type"))
				}
				if !rec.GetDateTime("updated").After(rec.GetDateTime("created")) && rec.GetDateTime("updated").Equal(rec.GetDateTime("created")) {
					t.Fatal("updated_at did not change")
				}
				expectSite("alice-site.sites.test", 200, `<title>Alice</title><meta name="description" content="Second">`)(t, app, res)
				if code, b := siteGet(t, app, "alice-site.sites.test", "/about"); code != 200 || !strings.HasSuffix(b, "</head>about") {
					t.Fatalf("about: %d %q", code, b)
				}
				if n, _ := app.CountRecords("versions", nil); n != 5 {
					t.Fatalf("versions: %d, want 5", n)
				}
			},
		},
		{
			Name:            "wrong method on /deploy/:id",
			Method:          http.MethodPatch,
			URL:             "/deploy/" + idAliceSite,
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  newTestApp,
		},
	}
	runScenarios(t, scenarios)
}

func TestDeployClaim(t *testing.T) {
	t.Parallel()
	claim := func(slug, token string) *strings.Reader {
		b, _ := json.Marshal(map[string]string{"slug": slug, "claim_token": token})
		return strings.NewReader(string(b))
	}
	scenarios := []tests.ApiScenario{
		{
			Name:            "without a key",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Body:            claim("anon-site", anonToken),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "missing slug",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"claim_token":"x"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("slug is required")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "missing token",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"slug":"anon-site"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("claim_token is required")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "wrong token",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("anon-site", "not-the-token"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgInvalidClaimToken)},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				if rec.GetString("owner") != "" {
					t.Fatal("a wrong token must change nothing")
				}
			},
		},
		{
			Name:            "unknown slug",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("no-such-site", anonToken),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "expired",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("old-anon", oldToken),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "already claimed (owned)",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("alice-site", anonToken),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "claim ties it to the account; it no longer expires",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("anon-site", anonToken),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"id":"` + idAnonSite + `","slug":"anon-site","url":"http://anon-site.sites.test/"}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				if rec.GetString("owner") != bob.Id || !rec.GetDateTime("expires_at").IsZero() || rec.GetString("claim_token_hash") != "" {
					t.Fatalf("after claim: owner %q expires %v", rec.GetString("owner"), rec.Get("expires_at"))
				}
				expectSite("anon-site.sites.test", 200, "anon-site")(t, app, res)
			},
		},
		{
			Name:            "claim when the plan is full",
			Method:          http.MethodPost,
			URL:             "/deploy/claim",
			Headers:         bearer(keyBob),
			Body:            claim("anon-site", anonToken),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody(msgSlotLimit)},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app, sd := newFixtureApp(t)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				for _, s := range []string{"two", "three", "four", "five"} {
					mustDeploy(t, sd, bob, "", "bob-"+s, "x", "")
				}
				return app
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				if rec.GetString("owner") != "" {
					t.Fatal("a refused claim must change nothing")
				}
			},
		},
	}
	runScenarios(t, scenarios)
}

func TestSiteHost(t *testing.T) {
	t.Parallel()
	scenarios := []tests.ApiScenario{
		{
			Name:            "site host serves the site",
			Method:          http.MethodGet,
			URL:             "http://alice-site.sites.test/",
			ExpectedStatus:  200,
			ExpectedContent: []string{"<h1>alice</h1>", "<title>Alice</title>"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "site host with a port",
			Method:             http.MethodGet,
			URL:                "http://alice-site.sites.test:8090/",
			ExpectedStatus:     200,
			ExpectedContent:    []string{"<h1>alice</h1>"},
			NotExpectedContent: []string{"Set-Cookie"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:               "no admin UI on a site host",
			Method:             http.MethodGet,
			URL:                "http://alice-site.sites.test/_/",
			ExpectedStatus:     404,
			NotExpectedContent: []string{"pocketbase", "PocketBase"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:               "no PocketBase API on a site host",
			Method:             http.MethodGet,
			URL:                "http://alice-site.sites.test/api/health",
			ExpectedStatus:     404,
			NotExpectedContent: []string{"API is healthy"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:               "no deploy API on a site host",
			Method:             http.MethodGet,
			URL:                "http://alice-site.sites.test/deploys",
			Headers:            bearer(keyAlice),
			ExpectedStatus:     404,
			NotExpectedContent: []string{"deployments"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "site hosts accept only GET and HEAD",
			Method:          http.MethodPost,
			URL:             "http://alice-site.sites.test/deploy",
			Body:            strings.NewReader(`{"html":"x"}`),
			ExpectedStatus:  405,
			ExpectedContent: []string{"Method not allowed"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "unknown slug",
			Method:          http.MethodGet,
			URL:             "http://no-such-site.sites.test/",
			ExpectedStatus:  404,
			ExpectedContent: []string{"Site not found"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "nested host under the sites domain never reaches the API",
			Method:          http.MethodGet,
			URL:             "http://a.alice-site.sites.test/api/health",
			ExpectedStatus:  404,
			ExpectedContent: []string{"Site not found"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "expired anonymous site is offline at once",
			Method:          http.MethodGet,
			URL:             "http://old-anon.sites.test/",
			ExpectedStatus:  404,
			ExpectedContent: []string{"Site not found"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "live anonymous site is served",
			Method:          http.MethodGet,
			URL:             "http://anon-site.sites.test/",
			ExpectedStatus:  200,
			ExpectedContent: []string{"<h1>anon-site</h1>"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "the web host still answers the API",
			Method:          http.MethodGet,
			URL:             "http://web.test/api/health",
			ExpectedStatus:  200,
			ExpectedContent: []string{"API is healthy"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "landing page",
			Method:          http.MethodGet,
			URL:             "http://web.test/",
			ExpectedStatus:  200,
			ExpectedContent: []string{"Publish a web site with one request", "curl -s http://web.test/deploy", "http://your-site.sites.test/"},
			TestAppFactory:  newTestApp,
		},
	}
	runScenarios(t, scenarios)
}
