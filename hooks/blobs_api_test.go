package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/store"
)

func TestBlobsAPI(t *testing.T) {
	page := "<p>uploaded by digest</p>"
	h := store.HashBytes([]byte(page))
	unknown := store.HashBytes([]byte("nobody uploaded this"))
	// withBlob has page uploaded already.
	withBlob := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		if err := sd.svc.Store().Put(t.Context(), h, []byte(page)); err != nil {
			t.Fatal(err)
		}
		return app
	}
	hasBlob := func(t testing.TB, app *tests.TestApp, hash string) bool {
		ok, err := stateOf(t, app).svc.Store().Has(t.Context(), hash)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "missing lists what the server lacks, once, in order",
			Method:          http.MethodPost,
			URL:             "/blobs/missing",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"hashes":["` + unknown + `","` + h + `","` + strings.ToUpper(unknown) + `"]}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"missing":["` + unknown + `"]}`},
			TestAppFactory:  withBlob,
		},
		{
			Name:            "missing with an invalid hash",
			Method:          http.MethodPost,
			URL:             "/blobs/missing",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"hashes":["abc"]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"invalid sha256 \"abc\" (64 hex digits)"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "missing without hashes",
			Method:          http.MethodPost,
			URL:             "/blobs/missing",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"hashes is required"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "missing without a key",
			Method:          http.MethodPost,
			URL:             "/blobs/missing",
			Body:            strings.NewReader(`{"hashes":[]}`),
			ExpectedStatus:  401,
			ExpectedContent: []string{`{"error":"Unauthorized"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "upload a blob",
			Method:          http.MethodPut,
			URL:             "/blobs/" + h,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(page),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"sha256":"` + h + `","size":25}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if !hasBlob(t, app, h) {
					t.Fatal("the uploaded blob is not stored")
				}
			},
		},
		{
			Name:            "upload whose bytes do not match the name",
			Method:          http.MethodPut,
			URL:             "/blobs/" + unknown,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(page),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"content does not match its name: its sha256 is ` + h},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if hasBlob(t, app, unknown) || hasBlob(t, app, h) {
					t.Fatal("a refused upload stored something")
				}
			},
		},
		{
			Name:            "upload over the body limit",
			Method:          http.MethodPut,
			URL:             "/blobs/" + unknown,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(strings.Repeat("x", 64<<10+1)),
			ExpectedStatus:  413,
			ExpectedContent: []string{`"error":"Request body too large: the limit is 64 KiB"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "upload under an invalid name",
			Method:          http.MethodPut,
			URL:             "/blobs/not-a-hash",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(page),
			ExpectedStatus:  400,
			ExpectedContent: []string{`invalid sha256`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "upload without a key",
			Method:          http.MethodPut,
			URL:             "/blobs/" + h,
			Body:            strings.NewReader(page),
			ExpectedStatus:  401,
			ExpectedContent: []string{`{"error":"Unauthorized"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "deploy naming uploaded content",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"index.html","sha256":"` + h + `"},{"path":"b.txt","content":"inline"}]}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"alice-site"`},
			TestAppFactory:  withBlob,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if code, b := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || !strings.Contains(b, "uploaded by digest") {
					t.Fatalf("site: %d %q", code, b)
				}
				if code, b := siteGet(t, app, "alice-site.sites.test", "/b.txt"); code != 200 || b != "inline" {
					t.Fatalf("inline file: %d %q", code, b)
				}
			},
		},
		{
			Name:            "deploy naming content the server lacks",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"index.html","sha256":"` + unknown + `"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"invalid file path \"index.html\": content with sha256 ` + unknown + ` is not on the server (upload it with PUT /blobs/` + unknown + `)"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("a refused deploy changed the site: %q", b)
				}
			},
		},
		{
			Name:            "deploy with both content and sha256",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"index.html","content":"x","sha256":"` + h + `"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`give content or sha256, not both`},
			TestAppFactory:  withBlob,
		},
		{
			Name:            "anonymous deploys send their bytes",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"index.html","sha256":"` + h + `"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`sha256 entries need an API key: anonymous deploys send their bytes (content)`},
			TestAppFactory:  withBlob,
		},
	})
}

// TestBlobUploadBudget: an account may upload 20 x --max-body an hour.
func TestBlobUploadBudget(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	for i := range 21 {
		body := strings.Repeat(string(rune('a'+i)), 64<<10) // --max-body in tests
		res, b := do(t, mux, http.MethodPut, "/blobs/"+store.HashBytes([]byte(body)), body, bearer(keyAlice))
		want := 200
		if i == 20 {
			want = 429
		}
		if res.StatusCode != want {
			t.Fatalf("upload %d: %d %s, want %d", i+1, res.StatusCode, b, want)
		}
	}
	body := "another account"
	if res, _ := do(t, mux, http.MethodPut, "/blobs/"+store.HashBytes([]byte(body)), body, bearer(keyBob)); res.StatusCode != 200 {
		t.Fatalf("another account's upload: %d", res.StatusCode)
	}
}
