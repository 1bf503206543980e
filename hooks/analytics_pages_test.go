package hooks

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
)

// mustStats stores a site_stats row for dep, days before today.
func mustStats(t testing.TB, app core.App, dep string, daysAgo, views int, pages, refs []analytics.Count) {
	t.Helper()
	r, err := statsdb.NewRow(app)
	if err != nil {
		t.Fatal(err)
	}
	r.SetDeployment(dep)
	r.SetDay(time.Now().UTC().AddDate(0, 0, -daysAgo))
	r.SetPageViews(int64(views))
	r.SetVisitors(int64(max(views-2, 0)))
	r.SetTopPages(pages)
	r.SetReferrers(refs)
	if err := app.Save(r); err != nil {
		t.Fatal(err)
	}
}

func TestAccountSiteAnalytics(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "the chart and the top lists", Method: http.MethodGet, URL: page + "/analytics", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{`data-testid="analytics-chart"`, `data-testid="chart-bar"`, `role="img"`,
				`<span class="top-key">/about</span> <span class="top-count">7</span>`, `>news.example<`, `data-testid="analytics-table"`},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app := newAppForSitePage(t)
				mustStats(t, app, idAliceSite, 2, 7, []analytics.Count{{Key: "/about", Count: 7}}, []analytics.Count{{Key: "news.example", Count: 3}})
				return app
			},
		},
		{
			Name: "no visits yet", Method: http.MethodGet, URL: page + "/analytics", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{`data-testid="analytics-empty">No visits to the live site in the last 30 days yet`, "No page views yet.",
				`data-testid="analytics-off"`}, // the test config counts nothing
			NotExpectedContent: []string{`data-testid="chart-bar"`, `data-testid="analytics-chart"`},
			TestAppFactory:     newAppForSitePage,
		},
		{
			Name: "the Overview's sparkline", Method: http.MethodGet, URL: page, Headers: cookie(sessionAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="sparkline"`, "7 page views and 5 visitors (counted per day) in the last 30 days."},
			NotExpectedContent: []string{`data-testid="analytics-chart"`, `data-testid="top-pages"`},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app := newAppForSitePage(t)
				mustStats(t, app, idAliceSite, 2, 7, []analytics.Count{{Key: "/about", Count: 7}}, nil)
				return app
			},
		},
		{
			Name: "the Overview says there were no visits", Method: http.MethodGet, URL: page, Headers: cookie(sessionAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="sparkline-empty">No visits to the live site in the last 30 days yet.`},
			NotExpectedContent: []string{`data-testid="sparkline"`},
			TestAppFactory:     newAppForSitePage,
		},
	})
}

// TestBrowserSiteAnalytics: the site page's chart is drawn without
// script, its table opens, and long paths and hosts do not widen the page
// past a phone's 390 px.
func TestBrowserSiteAnalytics(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "stats@example.com", "free", fixtureKey("stats"))
	dep := mustDeploy(t, b.SD, user, "", "stats-site", "<h1>x</h1>", "Stats")
	long := "/" + strings.Repeat("averyveryverylongpathsegment", 6)
	host := strings.Repeat("subdomain", 5) + ".example.com"
	for i := range 30 {
		mustStats(t, b.App, dep.Id, i, 1000*(i%7), []analytics.Count{{Key: long, Count: 12345}}, []analytics.Count{{Key: host, Count: 999}})
	}
	b.SignIn(user)
	b.Step("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.Step("open the site page", chromedp.Navigate(b.WebURL+"/account/sites/"+dep.Id+"/analytics"), chromedp.WaitVisible(testid("analytics-chart")))
	if n := b.Count(`[data-testid="chart-bar"]`); n != 25 { // 30 days, 5 of them without views
		t.Fatalf("%d bars, want 25", n)
	}
	b.Step("open the numbers", chromedp.Click(chromedp.CSS(".analytics summary")), chromedp.WaitVisible(testid("analytics-table")))
	w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || w > 390 {
		wide, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className).slice(0, 8).join(", ")`))
		t.Fatal(fmt.Errorf("the site page is %d px wide at 390 (%v; too wide: %s)", w, err, wide))
	}
}
