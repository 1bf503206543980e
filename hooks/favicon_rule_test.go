package hooks

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
)

// TestFaviconRule: "Icon (one emoji)" is one emoji or nothing, whoever
// sets it: POST and PUT /deploy (JSON and an archive's query) answer 400
// with the rule and change nothing; the admin dashboard's records API
// refuses it on the favicon field, on a deployment and on a version; one
// emoji (a ZWJ sequence, a flag) and an empty icon pass.
func TestFaviconRule(t *testing.T) {
	t.Parallel()
	unchanged := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		if rec.GetString(sites.FieldFavicon) != "" || rec.GetString(sites.FieldTitle) == "Changed" {
			t.Fatalf("a refused deploy changed the site: favicon %q, title %q", rec.GetString(sites.FieldFavicon), rec.GetString(sites.FieldTitle))
		}
	}
	var scenarios []tests.ApiScenario
	for _, bad := range []string{"not-an-emoji", "🚀🚀", "x", "🇫"} {
		scenarios = append(scenarios,
			tests.ApiScenario{
				Name: "POST /deploy, favicon " + bad, Method: http.MethodPost, URL: "/deploy",
				Headers: bearer(keyAlice), Body: strings.NewReader(`{"html":"x","favicon":"` + bad + `"}`),
				ExpectedStatus: 400, ExpectedContent: []string{errBody(sites.MsgFavicon)},
				TestAppFactory: newTestApp,
			},
			tests.ApiScenario{
				Name: "PUT /deploy, favicon " + bad, Method: http.MethodPut, URL: "/deploy/" + idAliceSite,
				Headers: bearer(keyAlice), Body: strings.NewReader(`{"html":"x","title":"Changed","favicon":"` + bad + `"}`),
				ExpectedStatus: 400, ExpectedContent: []string{errBody(sites.MsgFavicon)},
				TestAppFactory: newTestApp, AfterTestFunc: unchanged,
			},
		)
	}
	scenarios = append(scenarios, tests.ApiScenario{
		Name: "archive deploy, favicon in the query", Method: http.MethodPut,
		URL:     "/deploy/" + idAliceSite + "?favicon=" + url.QueryEscape("not-an-emoji"),
		Headers: withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/zip"}),
		Body:    strings.NewReader("PK"), ExpectedStatus: 400, ExpectedContent: []string{errBody(sites.MsgFavicon)},
		TestAppFactory: newTestApp, AfterTestFunc: unchanged,
	})
	for _, good := range []string{"👩‍💻", "🇫🇷", ""} {
		scenarios = append(scenarios, tests.ApiScenario{
			Name: "PUT /deploy, favicon " + good, Method: http.MethodPut, URL: "/deploy/" + idAliceSite,
			Headers: bearer(keyAlice), Body: strings.NewReader(`{"html":"x","favicon":"` + good + `"}`),
			ExpectedStatus: 200, ExpectedContent: []string{`"id":"` + idAliceSite + `"`}, TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				if err != nil {
					t.Fatal(err)
				}
				if icon := rec.GetString(sites.FieldFavicon); icon != good {
					t.Fatalf("favicon %q, want %q", icon, good)
				}
			},
		})
	}
	runScenarios(t, scenarios)

	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	token := superuserToken(t, app)
	edit := func(collection, id, body string) (int, string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPatch, "/api/collections/"+collection+"/records/"+id, body,
			map[string]string{"Authorization": token, "Content-Type": "application/json"})
		return res.StatusCode, out
	}
	dep, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	version := sites.DeploymentOf(dep).LiveVersion()
	for _, c := range []struct{ collection, id string }{{sites.DeploymentsCollection, idAliceSite}, {sites.VersionsCollection, version}} {
		code, out := edit(c.collection, c.id, `{"favicon":"not-an-emoji"}`)
		if code != 400 || !strings.Contains(out, `"favicon"`) || !strings.Contains(out, "must be one emoji") {
			t.Errorf("the dashboard sets a %s record's favicon to not-an-emoji: %d %s", c.collection, code, out)
		}
		rec, err := app.FindRecordById(c.collection, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if icon := rec.GetString(sites.FieldFavicon); icon != "" {
			t.Errorf("a refused favicon was saved on the %s record: %q", c.collection, icon)
		}
	}
	if code, out := edit(sites.DeploymentsCollection, idAliceSite, `{"favicon":"🐙"}`); code != 200 {
		t.Fatalf("the dashboard sets one emoji: %d %s", code, out)
	}
}
