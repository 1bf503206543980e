package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
)

func TestVersionsAPI(t *testing.T) {
	// withSecondVersion replaces alice-site once, so it has versions 1
	// (the fixture, "<h1>alice</h1>") and 2 ("<p>second</p>", live).
	withSecondVersion := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sd.svc.Replace(context.Background(), rec, sites.Metadata{}, htmlUpload("<p>second</p>")); err != nil {
			t.Fatal(err)
		}
		return app
	}
	liveBody := func(t testing.TB, app *tests.TestApp) string {
		_, b := siteGet(t, app, "alice-site.sites.test", "/")
		return b
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "versions, newest first, the live one marked",
			Method:         http.MethodGet,
			URL:            "/deploy/" + idAliceSite + "/versions",
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`{"versions":[{"version":2,"created_at":"`,
				`"file_count":1,"total_bytes":`,
				`"live":true,"message":"","preview_url":"http://v2--alice-site.sites.test/","aliases":[]},{"version":1,`,
				`"live":false,"message":"","preview_url":"http://v1--alice-site.sites.test/","aliases":[]}]}`,
			},
			TestAppFactory: withSecondVersion,
		},
		{
			Name:            "versions of another account's deployment",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions",
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "versions without a key",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/versions",
			ExpectedStatus:  401,
			ExpectedContent: []string{`{"error":"Unauthorized"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "versions: wrong method",
			Method:          http.MethodDelete,
			URL:             "/deploy/" + idAliceSite + "/versions",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  405,
			ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "rollback makes the old version live",
			Method:         http.MethodPost,
			URL:            "/deploy/" + idAliceSite + "/rollback",
			Headers:        bearer(keyAlice),
			Body:           strings.NewReader(`{"version":1}`),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"id":"` + idAliceSite + `"`, `"slug":"alice-site"`, `"url":"http://alice-site.sites.test/"`, `"version":1`,
			},
			TestAppFactory: withSecondVersion,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if b := liveBody(t, app); !strings.Contains(b, "<h1>alice</h1>") {
					t.Fatalf("after rollback the site serves %q", b)
				}
				sd := stateOf(t, app)
				rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				if err != nil {
					t.Fatal(err)
				}
				vs, err := sd.svc.ListVersions(rec)
				if err != nil || len(vs) != 2 || vs[0].Live || !vs[1].Live {
					t.Fatalf("versions after rollback: %+v %v", vs, err)
				}
				// A deploy after a rollback is version 3, and live.
				rec, err = sd.svc.Replace(context.Background(), rec, sites.Metadata{}, htmlUpload("<p>third</p>"))
				if err != nil {
					t.Fatal(err)
				}
				if vs, _ := sd.svc.ListVersions(rec); len(vs) != 3 || vs[0].Number != 3 || !vs[0].Live {
					t.Fatalf("versions after a new deploy: %+v", vs)
				}
				if b := liveBody(t, app); !strings.Contains(b, "third") {
					t.Fatalf("after a new PUT the site serves %q", b)
				}
			},
		},
		{
			Name:               "rollback to a version that is not kept",
			Method:             http.MethodPost,
			URL:                "/deploy/" + idAliceSite + "/rollback",
			Headers:            bearer(keyAlice),
			Body:               strings.NewReader(`{"version":7}`),
			ExpectedStatus:     404,
			ExpectedContent:    []string{`{"error":"Version not found"}`},
			NotExpectedContent: []string{`"version":7`},
			TestAppFactory:     withSecondVersion,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if b := liveBody(t, app); !strings.Contains(b, "second") {
					t.Fatalf("a refused rollback changed the site: %q", b)
				}
			},
		},
		{
			Name:            "rollback without a version",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"version is required (a positive version number)"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "rollback to version 0",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"version":0}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`version is required`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "rollback with a string version",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"version":"1"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "rollback of another account's deployment",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyBob),
			Body:            strings.NewReader(`{"version":1}`),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  withSecondVersion,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if b := liveBody(t, app); !strings.Contains(b, "second") {
					t.Fatalf("another account rolled the site back: %q", b)
				}
			},
		},
		{
			Name:            "rollback: wrong method",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  405,
			ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory:  newTestApp,
		},
	})
}

// TestDashboardRollback: setting live_version in the dashboard (any
// record save) switches the site to that version, and refuses a version
// of another deployment or an unknown id.
func TestDashboardRollback(t *testing.T) {
	app, sd := newFixtureApp(t)
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	first := rec.GetString("live_version")
	if rec, err = sd.svc.Replace(t.Context(), rec, sites.Metadata{}, htmlUpload("<p>second</p>")); err != nil {
		t.Fatal(err)
	}
	bob, _ := app.FindRecordById(sites.DeploymentsCollection, idBobSite)
	for _, bad := range []string{bob.GetString("live_version"), "nosuchversion01", ""} {
		rec.Set("live_version", bad)
		if err := app.Save(rec); err == nil {
			t.Errorf("live_version %q was accepted", bad)
		}
		rec, _ = app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	}
	rec.Set("live_version", first)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "<h1>alice</h1>") {
		t.Fatalf("after the dashboard rollback: %q", b)
	}
}

// TestDashboardVersionEdit: editing the live version itself in the
// dashboard (its manifest) is seen by the next request, as any change of
// its deployment is.
func TestDashboardVersionEdit(t *testing.T) {
	app, _ := newFixtureApp(t)
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 { // cached now
		t.Fatalf("fixture site: %d", code)
	}
	dep, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	v, err := app.FindRecordById(sites.VersionsCollection, dep.GetString("live_version"))
	if err != nil {
		t.Fatal(err)
	}
	v.Set("manifest", map[string]any{}) // every file taken out
	if err := app.Save(v); err != nil {
		t.Fatal(err)
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 404 {
		t.Fatalf("after the live version was emptied: %d, want 404", code)
	}
}
