package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/forms"
)

// withVersion replaces alice-site (version 1: the fixture's
// "<h1>alice</h1>") by up, published as rel: version 2.
func withVersion(up sites.Upload, rel sites.Release) func(t testing.TB) *tests.TestApp {
	return func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		up.Release = rel
		if _, err := sd.svc.Replace(context.Background(), rec, sites.Metadata{}, up); err != nil {
			t.Fatal(err)
		}
		return app
	}
}

// aliceVersions is the number of versions alice-site keeps.
func aliceVersions(t testing.TB, app *tests.TestApp) int {
	t.Helper()
	n, err := app.CountRecords(sites.VersionsCollection, dbxDeployment(idAliceSite))
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestDraftIsPromoted: a draft PUT answers its preview URL and leaves the
// site, GET /deploy/:id and the live flag as they were; promote makes it
// live.
func TestDraftIsPromoted(t *testing.T) {
	t.Parallel()
	const (
		draftURL = "http://v2--alice-site.sites.test/"
		liveURL  = "http://v1--alice-site.sites.test/"
	)
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	res, b := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<p>draft</p>","draft":true,"message":"check the draft"}`, bearer(keyAlice))
	if res.StatusCode != 200 || !strings.Contains(b, `"url":"http://alice-site.sites.test/","version":2,"draft":true,"preview_url":"`+draftURL+`","warnings"`) {
		t.Fatalf("draft: %d %s", res.StatusCode, b)
	}
	if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<h1>alice</h1>") {
		t.Fatalf("the draft went live: %q", b)
	}
	_, b = do(t, mux, http.MethodGet, "/deploy/"+idAliceSite, "", bearer(keyAlice))
	if !strings.Contains(b, `"version":1,"preview_url":"`+liveURL+`"`) {
		t.Fatalf("GET /deploy/:id after a draft: %s", b)
	}
	_, b = do(t, mux, http.MethodGet, "/deploy/"+idAliceSite+"/versions", "", bearer(keyAlice))
	if !strings.Contains(b, `"live":false,"message":"check the draft","preview_url":"`+draftURL+`"`) ||
		!strings.Contains(b, `"live":true,"message":"","preview_url":"`+liveURL+`"`) {
		t.Fatalf("versions after a draft: %s", b)
	}
	res, b = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/versions/2/promote", "", bearer(keyAlice))
	if res.StatusCode != 200 || !strings.Contains(b, `"version":2,"preview_url":"`+draftURL+`"`) {
		t.Fatalf("promote: %d %s", res.StatusCode, b)
	}
	if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<p>draft</p>") {
		t.Fatalf("after promote the site serves %q", b)
	}
	_, b = do(t, mux, http.MethodGet, "/deploy/"+idAliceSite, "", bearer(keyAlice))
	if !strings.Contains(b, `"version":2,"preview_url":"`+draftURL+`"`) {
		t.Fatalf("GET /deploy/:id after promote: %s", b)
	}
}

// TestPromoteAPI: drafts of a new deployment and of an archive, promote's
// refusals.
func TestPromoteAPI(t *testing.T) {
	const draftURL = "http://v2--alice-site.sites.test/"
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "a new deployment as a draft",
			Method:         http.MethodPost,
			URL:            "/deploy",
			Headers:        bearer(keyAlice),
			Body:           strings.NewReader(`{"slug":"drafty","html":"<p>soon</p>","draft":true,"alias":"review"}`),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"version":1,"draft":true,"preview_url":"http://v1--drafty.sites.test/","alias_url":"http://review--drafty.sites.test/"`,
			},
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if code, b := siteGet(t, app, "drafty.sites.test", "/"); code != 404 || strings.Contains(b, "soon") {
					t.Fatalf("a new draft is served: %d %q", code, b)
				}
			},
		},
		{
			Name:            "promote a version that is not kept",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/versions/7/promote",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Version not found"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "promote a version that is not a number",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/versions/latest/promote",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"version must be a positive version number"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "promote another account's version",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/versions/2/promote",
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  withVersion(htmlUpload("<p>draft</p>"), sites.Release{Draft: true}),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("another account promoted: %q", b)
				}
			},
		},
		{
			Name:            "promote: wrong method",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions/1/promote",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  405,
			ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "an archive draft, its alias and message in the query",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite + "?draft=true&alias=preview&message=from+a+tarball",
			Headers:         withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/gzip"}),
			Body:            tarGzOf(t, "index.html", "<p>packed</p>"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"version":2,"draft":true,"preview_url":"` + draftURL + `","alias_url":"http://preview--alice-site.sites.test/"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				v, err := sites.FindAliasVersion(app, idAliceSite, "preview")
				if err != nil || v.GetInt(sites.FieldVersionNumber) != 2 || v.GetString(sites.FieldVersionMessage) != "from a tarball" {
					t.Fatalf("the archive's alias and message: %v", err)
				}
				if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("the archive draft went live: %q", b)
				}
			},
		},
	})
}

// TestPreviewRefusals: a draft, alias or message a client gets wrong is a
// 400 naming the field, and changes nothing.
func TestPreviewRefusals(t *testing.T) {
	unchanged := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n := aliceVersions(t, app); n != 1 {
			t.Fatalf("a refused deploy saved a version (%d)", n)
		}
		if n, _ := app.CountRecords(sites.AliasesCollection); n != 0 {
			t.Fatalf("a refused deploy saved an alias (%d)", n)
		}
	}
	noDeployment := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n, _ := app.CountRecords(sites.DeploymentsCollection); n != 4 {
			t.Fatalf("a refused deploy created a deployment (%d)", n)
		}
	}
	put := func(name, body, want string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPut, URL: "/deploy/" + idAliceSite, Headers: bearer(keyAlice),
			Body: strings.NewReader(body), ExpectedStatus: 400, ExpectedContent: []string{`{"error":"` + want},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		}
	}
	anon := func(name, body, want string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPost, URL: "/deploy",
			Body: strings.NewReader(body), ExpectedStatus: 400, ExpectedContent: []string{`{"error":"` + want},
			TestAppFactory: newTestApp, AfterTestFunc: noDeployment,
		}
	}
	runScenarios(t, []tests.ApiScenario{
		put("an alias with capitals", `{"html":"x","alias":"Staging"}`, "alias may contain only lowercase letters"),
		put("an alias of a version's form", `{"html":"x","alias":"v3"}`, "alias must not be v followed by digits"),
		put("an alias with a double hyphen", `{"html":"x","alias":"a--b"}`, `alias must not contain \"--\"`),
		put("an alias over 32 characters", `{"html":"x","alias":"`+strings.Repeat("a", 33)+`"}`, "alias is too long: at most 32 characters"),
		put("an empty alias", `{"html":"x","alias":""}`, "alias must not be empty"),
		put("an alias that is not a string", `{"html":"x","alias":3}`, "Invalid type for field alias"),
		put("a message over 200 characters", `{"html":"x","message":"`+strings.Repeat("é", 201)+`"}`, "message is too long: at most 200 characters"),
		put("a message with a control character", `{"html":"x","message":"a\u0007b"}`, "message contains a control character (U+0007)"),
		put("a draft that is not a boolean", `{"html":"x","draft":"yes"}`, "Invalid type for field draft"),
		put("a draft that sets a password", `{"html":"x","draft":true,"password":"correct horse"}`, "password cannot be set by a draft"),
		put("a draft that sets protect", `{"html":"x","draft":true,"protect":true}`, "protect cannot be set by a draft"),
		anon("an anonymous draft", `{"html":"x","draft":true}`, "draft needs an account"),
		anon("an anonymous alias", `{"html":"x","alias":"staging"}`, "alias needs an account"),
		{
			Name: "an archive's draft that is not a boolean", Method: http.MethodPut, URL: "/deploy/" + idAliceSite + "?draft=maybe",
			Headers:        withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/gzip"}),
			Body:           tarGzOf(t, "index.html", "<p>packed</p>"),
			ExpectedStatus: 400, ExpectedContent: []string{`{"error":"draft must be true or false"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		},
		{
			Name: "an anonymous archive draft", Method: http.MethodPost, URL: "/deploy?draft=1",
			Headers:        map[string]string{"Content-Type": "application/zip"},
			Body:           zipOf(t, "index.html", "<p>packed</p>"),
			ExpectedStatus: 400, ExpectedContent: []string{`{"error":"draft needs an account`},
			TestAppFactory: newTestApp, AfterTestFunc: noDeployment,
		},
	})
}

// TestAliasesAPI: a deploy with an alias answers its URL, the versions
// list and GET /deploy/:id/aliases show it, DELETE removes it.
func TestAliasesAPI(t *testing.T) {
	const stagingURL = "http://staging--alice-site.sites.test/"
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "a live deploy with an alias",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>two</p>","alias":"staging"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"version":2,"draft":false,"preview_url":"http://v2--alice-site.sites.test/","alias_url":"` + stagingURL + `"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<p>two</p>") {
					t.Fatalf("a live deploy with an alias is not live: %q", b)
				}
			},
		},
		{
			Name:            "aliases, by name",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/aliases",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"aliases":[{"name":"staging","version":2,"url":"` + stagingURL + `"}]}`},
			TestAppFactory:  withVersion(htmlUpload("<p>two</p>"), sites.Release{Alias: "staging", Draft: true}),
		},
		{
			Name:            "the versions list names the aliases",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"preview_url":"http://v2--alice-site.sites.test/","aliases":["staging"]}`, `"aliases":[]}]}`},
			TestAppFactory:  withVersion(htmlUpload("<p>two</p>"), sites.Release{Alias: "staging", Draft: true}),
		},
		{
			Name:            "delete an alias",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite + "/aliases/staging",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"name":"staging","message":"Alias staging of alice-site deleted"}`},
			TestAppFactory:  withVersion(htmlUpload("<p>two</p>"), sites.Release{Alias: "staging", Draft: true}),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if n, _ := app.CountRecords(sites.AliasesCollection); n != 0 || aliceVersions(t, app) != 2 {
					t.Fatalf("after the delete: %d aliases, %d versions", n, aliceVersions(t, app))
				}
			},
		},
		{
			Name:            "delete an unknown alias",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite + "/aliases/nope",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Alias not found"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "delete another account's alias",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite + "/aliases/staging",
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  withVersion(htmlUpload("<p>two</p>"), sites.Release{Alias: "staging", Draft: true}),
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if n, _ := app.CountRecords(sites.AliasesCollection); n != 1 {
					t.Fatal("another account deleted the alias")
				}
			},
		},
	})
}

// TestVersionFilesAndDiffAPI: a version's files with their sizes and
// hashes; the diff of two versions (added, changed, removed, with sizes);
// bad or unknown versions.
func TestVersionFilesAndDiffAPI(t *testing.T) {
	two := withVersion(sites.Upload{StorageType: sites.StorageFiles, Files: []sites.File{
		{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte("<p>two</p>")},
		{Path: "css/site.css", ContentType: "text/css", Data: []byte("p{color:red}")},
	}}, sites.Release{})
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "a version's files",
			Method:         http.MethodGet,
			URL:            "/deploy/" + idAliceSite + "/versions/2/files",
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`{"version":2,"files":[{"path":"css/site.css","size":12,"hash":"`,
				`{"path":"index.html","size":`,
			},
			TestAppFactory: two,
		},
		{
			Name:            "the files of a version that is not kept",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions/3/files",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Version not found"}`},
			TestAppFactory:  two,
		},
		{
			Name:            "the files of version 0",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions/0/files",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"version must be a positive version number"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "diff: added, changed and removed, with sizes",
			Method:         http.MethodGet,
			URL:            "/deploy/" + idAliceSite + "/diff?from=1&to=2",
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`{"from":1,"to":2,"added":[{"path":"css/site.css","size":12}],"changed":[{"path":"index.html","from_size":`,
				`"removed":[]}`,
			},
			TestAppFactory: two,
		},
		{
			Name:            "diff the other way: the file is removed",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/diff?from=2&to=1",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"added":[],`, `"removed":[{"path":"css/site.css","size":12}]}`},
			TestAppFactory:  two,
		},
		{
			Name:            "diff without from",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/diff?to=1",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"from is required (a positive version number)"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "diff to a word",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/diff?from=1&to=last",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"to must be a positive version number"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "diff with a version that is not kept",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/diff?from=1&to=9",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Version not found"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "diff of another account's deployment",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/diff?from=1&to=2",
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  two,
		},
	})
}

// TestDraftWebhooks: a draft queues deployment.draft with its version and
// preview URL, not deployment.updated; promoting it queues
// deployment.updated, which names the version now live.
func TestDraftWebhooks(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mustWebhook(t, app, idAliceSite, "https://93.184.216.34/all")
	mux := newMux(t, app)
	if res, b := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<p>draft</p>","draft":true}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("draft: %d %s", res.StatusCode, b)
	}
	got := deliveries(t, app, forms.EventDeploymentDraft)
	if len(got) != 1 || !strings.Contains(got[0].GetString("payload"), `"version":2,"preview_url":"http://v2--alice-site.sites.test/"`) {
		t.Fatalf("deployment.draft deliveries: %d %v", len(got), got)
	}
	if n := len(deliveries(t, app, forms.EventDeploymentUpdated)); n != 0 {
		t.Fatalf("a draft queued %d deployment.updated", n)
	}
	if res, b := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/versions/2/promote", "", bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("promote: %d %s", res.StatusCode, b)
	}
	got = deliveries(t, app, forms.EventDeploymentUpdated)
	if len(got) != 1 || !strings.Contains(got[0].GetString("payload"), `"version":2,"preview_url":"http://v2--alice-site.sites.test/"`) {
		t.Fatalf("deployment.updated after promote: %d %v", len(got), got)
	}
	if n := len(deliveries(t, app, forms.EventDeploymentDraft)); n != 1 {
		t.Fatalf("promote queued deployment.draft (%d)", n)
	}
}
