package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/forms"
)

// slugOf is the current slug of the deployment id.
func slugOf(t testing.TB, app core.App, id string) string {
	t.Helper()
	dep, err := sites.FindDeployment(app, id)
	if err != nil {
		t.Fatal(err)
	}
	return dep.Slug()
}

// pausedOf tells whether the deployment id is paused.
func pausedOf(t testing.TB, app core.App, id string) bool {
	t.Helper()
	dep, err := sites.FindDeployment(app, id)
	if err != nil {
		t.Fatal(err)
	}
	return dep.Paused()
}

// unchanged asserts that alice-site kept its slug, is not paused and
// that no old slug is kept: a refused control changed nothing.
func unchanged(t testing.TB, app *tests.TestApp, _ *http.Response) {
	t.Helper()
	if s := slugOf(t, app, idAliceSite); s != "alice-site" {
		t.Fatalf("slug is %q after a refusal", s)
	}
	if pausedOf(t, app, idAliceSite) {
		t.Fatal("paused after a refusal")
	}
	if n, err := app.CountRecords(sites.SlugRedirectsCollection); err != nil || n != 0 {
		t.Fatalf("%d old slugs kept after a refusal (%v)", n, err)
	}
}

// withBobRenamed is the fixtures after bob renamed bob-site to bob-new:
// bob-site is kept for bob.
func withBobRenamed(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idBobSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.Rename(context.Background(), rec, "bob-new"); err != nil {
		t.Fatal(err)
	}
	return app
}

// withAlicePaused is the fixtures with alice-site paused.
func withAlicePaused(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.SetPaused(context.Background(), rec, true); err != nil {
		t.Fatal(err)
	}
	return app
}

func TestSiteControlsAPI(t *testing.T) {
	rename := "/deploy/" + idAliceSite + "/rename"
	refused := func(name, body string, headers map[string]string, status int, msg string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPost, URL: rename, Headers: headers, Body: strings.NewReader(body),
			ExpectedStatus: status, ExpectedContent: []string{`{"error":"` + msg + `"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "rename: the new slug, the old one redirecting for 30 days", Method: http.MethodPost, URL: rename,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"slug":"alice-new"}`),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"id":"` + idAliceSite + `"`, `"slug":"alice-new"`, `"url":"http://alice-new.sites.test/"`,
				`"previous_slug":"alice-site"`, `"previous_url":"http://alice-site.sites.test/"`, `"redirect_until":"`,
			},
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if s := slugOf(t, app, idAliceSite); s != "alice-new" {
					t.Fatalf("slug is %q", s)
				}
				r, err := sites.FindSlugRedirect(app, "alice-site", time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Until(r.ExpiresAt()); d < 29*24*time.Hour || d > 30*24*time.Hour {
					t.Fatalf("the old slug redirects for %v", d)
				}
				if code, b := siteGet(t, app, "alice-new.sites.test", "/"); code != 200 || !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("the new host: %d %q", code, b)
				}
			},
		},
		{
			Name: "rename to the current slug changes nothing", Method: http.MethodPost, URL: rename,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"slug":"alice-site"}`),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`{"id":"` + idAliceSite + `","slug":"alice-site","url":"http://alice-site.sites.test/"}`},
			NotExpectedContent: []string{"previous_slug"},
			TestAppFactory:     newTestApp, AfterTestFunc: unchanged,
		},
		refused("rename without a slug", `{}`, bearer(keyAlice), 400, "slug is required"),
		refused("rename to an empty slug", `{"slug":""}`, bearer(keyAlice), 400, "slug is required"),
		refused("rename to an invalid slug", `{"slug":"Bad_Slug"}`, bearer(keyAlice), 400,
			"slug must be 3 to 63 lowercase letters, words joined by single hyphens (e.g. my-site)"),
		refused("rename with a slug of the wrong type", `{"slug":5}`, bearer(keyAlice), 400, "Invalid type for field slug: expected a string"),
		refused("rename with malformed JSON", `{"slug":`, bearer(keyAlice), 400, "Malformed JSON: unexpected end of input"),
		refused("rename to a reserved slug", `{"slug":"admin"}`, bearer(keyAlice), 409, "Slug is reserved"),
		refused("rename to a slug another site has", `{"slug":"bob-site"}`, bearer(keyAlice), 409, "Slug already taken"),
		refused("rename to an anonymous site's slug", `{"slug":"anon-site"}`, bearer(keyAlice), 409, "Slug already taken"),
		refused("rename another account's site", `{"slug":"stolen-site"}`, bearer(keyBob), 404, "Deployment not found"),
		refused("rename without a key", `{"slug":"alice-new"}`, nil, 401, "Unauthorized"),
		{
			Name: "rename to another site's kept old slug", Method: http.MethodPost, URL: rename,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"slug":"bob-site"}`),
			ExpectedStatus: 409, ExpectedContent: []string{`{"error":"Slug already taken"}`},
			TestAppFactory: withBobRenamed,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if s := slugOf(t, app, idAliceSite); s != "alice-site" {
					t.Fatalf("slug is %q", s)
				}
			},
		},
		{
			Name: "a new deploy cannot take a kept old slug", Method: http.MethodPost, URL: "/deploy",
			Headers: bearer(keyPia), Body: strings.NewReader(`{"html":"<p>x</p>","slug":"bob-site"}`),
			ExpectedStatus: 409, ExpectedContent: []string{`{"error":"Slug already taken"}`},
			TestAppFactory: withBobRenamed,
		},
		{
			Name: "the owner takes a kept old slug back at once", Method: http.MethodPost, URL: "/deploy/" + idBobSite + "/rename",
			Headers: bearer(keyBob), Body: strings.NewReader(`{"slug":"bob-site"}`),
			ExpectedStatus: 200, ExpectedContent: []string{`"slug":"bob-site"`, `"previous_slug":"bob-new"`},
			TestAppFactory: withBobRenamed,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, err := sites.FindSlugRedirect(app, "bob-site", time.Now()); err == nil {
					t.Fatal("bob-site still kept as an old slug while it is the site's slug")
				}
				if code, b := siteGet(t, app, "bob-site.sites.test", "/"); code != 200 || !strings.Contains(b, "<h1>bob</h1>") {
					t.Fatalf("bob-site: %d %q", code, b)
				}
			},
		},
		{
			Name: "rename: wrong method", Method: http.MethodGet, URL: rename, Headers: bearer(keyAlice),
			ExpectedStatus: 405, ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		},
		{
			Name: "pause", Method: http.MethodPost, URL: "/deploy/" + idAliceSite + "/pause", Headers: bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"id":"` + idAliceSite + `","slug":"alice-site","url":"http://alice-site.sites.test/","paused":true}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if !pausedOf(t, app, idAliceSite) {
					t.Fatal("not paused")
				}
			},
		},
		{
			Name: "pause another account's site", Method: http.MethodPost, URL: "/deploy/" + idAliceSite + "/pause", Headers: bearer(keyBob),
			ExpectedStatus: 404, ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		},
		{
			Name: "pause without a key", Method: http.MethodPost, URL: "/deploy/" + idAliceSite + "/pause",
			ExpectedStatus: 401, ExpectedContent: []string{`{"error":"Unauthorized"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		},
		{
			Name: "pause: wrong method", Method: http.MethodGet, URL: "/deploy/" + idAliceSite + "/pause", Headers: bearer(keyAlice),
			ExpectedStatus: 405, ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory: newTestApp, AfterTestFunc: unchanged,
		},
		{
			Name: "the status says paused", Method: http.MethodGet, URL: "/deploy/" + idAliceSite, Headers: bearer(keyAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`"status":"active"`, `"paused":true`},
			TestAppFactory: withAlicePaused,
		},
		{
			Name: "the status says not paused", Method: http.MethodGet, URL: "/deploy/" + idAliceSite, Headers: bearer(keyAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`"paused":false`},
			TestAppFactory: newTestApp,
		},
		{
			Name: "resume", Method: http.MethodPost, URL: "/deploy/" + idAliceSite + "/resume", Headers: bearer(keyAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`"paused":false`},
			TestAppFactory: withAlicePaused,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if pausedOf(t, app, idAliceSite) {
					t.Fatal("still paused")
				}
				if code, b := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("resumed site: %d %q", code, b)
				}
			},
		},
		{
			Name: "a paused site's forms refuse submissions", Method: http.MethodPost, URL: "/submit/" + idAliceSite,
			Body: strings.NewReader(`{"email":"a@example.com"}`), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus:  503,
			ExpectedContent: []string{`{"error":"` + msgSitePaused + `"}`},
			TestAppFactory:  withAlicePaused,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if got := res.Header.Get("Retry-After"); got != "3600" {
					t.Fatalf("Retry-After %q", got)
				}
				if n, _ := app.CountRecords(forms.SubmissionsCollection); n != 0 {
					t.Fatalf("%d submissions stored", n)
				}
			},
		},
	})
}

// TestRenameWebhook: a rename queues deployment.renamed, naming the new
// slug and URL, for a webhook subscribed to it.
func TestRenameWebhook(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	col, err := app.FindCollectionByNameOrId(forms.WebhooksCollection)
	if err != nil {
		t.Fatal(err)
	}
	hook := core.NewRecord(col)
	hook.Set("deployment", idAliceSite)
	hook.Set("url", "https://hooks.example.com/x")
	hook.Set("type", forms.WebhookGeneric)
	hook.Set("events", []string{forms.EventDeploymentRenamed})
	hook.Set("secret", "secret")
	hook.Set("active", true)
	if err := app.Save(hook); err != nil {
		t.Fatal(err)
	}
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.Rename(context.Background(), rec, "alice-new"); err != nil {
		t.Fatal(err)
	}
	ds, err := app.FindAllRecords(forms.DeliveriesCollection)
	if err != nil || len(ds) != 1 {
		t.Fatalf("%d deliveries (%v)", len(ds), err)
	}
	d := forms.DeliveryOf(ds[0])
	if d.Event() != forms.EventDeploymentRenamed || !strings.Contains(d.Payload(), `"slug":"alice-new","url":"http://alice-new.sites.test/"`) {
		t.Fatalf("delivery %s: %s", d.Event(), d.Payload())
	}
}

// TestMCPSiteControls: the rename, pause and resume tools act through
// the API (its answers, its refusals).
func TestMCPSiteControls(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, keyAlice, "")
	text, ans := mustTool(t, cs, "rename", map[string]any{"id": idAliceSite, "slug": "alice-agent"})
	if ans["slug"] != "alice-agent" || !strings.Contains(text, "Renamed: the site is at http://alice-agent.sites.test/") ||
		!strings.Contains(text, "http://alice-site.sites.test/ redirects there until ") {
		t.Fatalf("rename: %q %v", text, ans)
	}
	mustToolError(t, cs, "rename", map[string]any{"id": idAliceSite, "slug": "bob-site"}, "Slug already taken")
	mustToolError(t, cs, "rename", map[string]any{"id": idAliceSite, "slug": " "}, "slug is required")
	mustToolError(t, cs, "pause", map[string]any{"id": idBobSite}, "HTTP 404")
	text, ans = mustTool(t, cs, "pause", map[string]any{"id": idAliceSite})
	if ans["paused"] != true || !strings.Contains(text, "Paused: http://alice-agent.sites.test/") {
		t.Fatalf("pause: %q %v", text, ans)
	}
	if code, body := env.fetch(t, "http://alice-agent.sites.test/"); code != 503 || !strings.Contains(body, "Site paused") {
		t.Fatalf("paused site: %d %.80q", code, body)
	}
	text, ans = mustTool(t, cs, "resume", map[string]any{"id": idAliceSite})
	if ans["paused"] != false || !strings.Contains(text, "Running") {
		t.Fatalf("resume: %q %v", text, ans)
	}
}
