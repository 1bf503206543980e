package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
)

// withStats is the fixture app with two days of alice-site's analytics.
func withStats(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	for _, d := range []struct {
		date        string
		views, bots int64
		pages, refs []analytics.Count
	}{
		{"2026-03-01", 10, 2, []analytics.Count{{Key: "/", Count: 7}, {Key: "/about", Count: 3}}, []analytics.Count{{Key: "news.example", Count: 4}}},
		{"2026-03-03", 5, 0, []analytics.Count{{Key: "/about", Count: 5}}, nil},
	} {
		r, err := statsdb.NewRow(app)
		if err != nil {
			t.Fatal(err)
		}
		r.SetDeployment(idAliceSite)
		r.SetDate(d.date)
		r.SetPageViews(d.views)
		r.SetVisitors(d.views - 1)
		r.SetBotViews(d.bots)
		r.SetPreviewViews(d.bots * 3) // apart from page_views
		r.SetBytes(1000)
		r.SetTopPages(d.pages)
		r.SetReferrers(d.refs)
		r.SetNotFoundPaths([]analytics.Count{{Key: "/old", Count: 1}})
		r.SetNotFound(1)
		if err := app.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

func TestAnalyticsAPI(t *testing.T) {
	url := "/deploy/" + idAliceSite + "/analytics"
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "days with zeros between, top lists merged",
			Method:         http.MethodGet,
			URL:            url + "?from=2026-03-01&to=2026-03-03",
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`{"days":[{"date":"2026-03-01","page_views":10,"visitors":9,"not_found":1,"bytes":1000,"bot_views":2,"preview_views":6},` +
					`{"date":"2026-03-02","page_views":0,"visitors":0,"not_found":0,"bytes":0,"bot_views":0,"preview_views":0},` +
					`{"date":"2026-03-03","page_views":5,"visitors":4,"not_found":1,"bytes":1000,"bot_views":0,"preview_views":0}],` +
					`"top_pages":[{"key":"/about","count":8},{"key":"/","count":7}],` +
					`"referrers":[{"key":"news.example","count":4}],` +
					`"not_found_paths":[{"key":"/old","count":2}]}`,
			},
			TestAppFactory: withStats,
		},
		{
			Name:           "default: the last 30 days, empty lists as []",
			Method:         http.MethodGet,
			URL:            url,
			Headers:        bearer(keyAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"top_pages":[],"referrers":[],"not_found_paths":[]`,
			},
			TestAppFactory: newTestApp,
		},
		{
			Name:            "a bad date",
			Method:          http.MethodGet,
			URL:             url + "?from=2026-3-1",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"` + msgAnalyticsDate + `"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "from after to",
			Method:          http.MethodGet,
			URL:             url + "?from=2026-03-02&to=2026-03-01",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"` + msgAnalyticsOrder + `"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "more than 400 days",
			Method:          http.MethodGet,
			URL:             url + "?from=2025-01-01&to=2026-03-01",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"` + msgAnalyticsRange + `"}`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "another account's deployment",
			Method:          http.MethodGet,
			URL:             url,
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{`{"error":"Deployment not found"}`},
			TestAppFactory:  withStats,
		},
		{
			Name:            "without a key",
			Method:          http.MethodGet,
			URL:             url,
			ExpectedStatus:  401,
			ExpectedContent: []string{`"error"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "wrong method",
			Method:          http.MethodPost,
			URL:             url,
			Headers:         bearer(keyAlice),
			ExpectedStatus:  405,
			ExpectedContent: []string{`{"error":"Method not allowed"}`},
			TestAppFactory:  newTestApp,
		},
	})
}
