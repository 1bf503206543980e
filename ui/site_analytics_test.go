package ui

import (
	"strings"
	"testing"
)

func TestSiteAnalyticsChart(t *testing.T) {
	evil := `<script>alert(1)</script>`
	a := SiteAnalytics{
		Days: []AnalyticsDay{
			{Date: "2026-03-01", PageViews: 10, Visitors: 4, NotFound: 1},
			{Date: "2026-03-02"},
			{Date: "2026-03-03", PageViews: 5, Visitors: 5, PreviewViews: 3},
		},
		TopPages:  []AnalyticsCount{{Key: "/about", Count: 8}, {Key: "/" + evil, Count: 7}},
		Referrers: []AnalyticsCount{{Key: "news.example", Count: 4}},
	}
	got := render(t, siteAnalytics(a))
	for _, want := range []string{
		`role="img" aria-labelledby="chart-title"`,
		`<title id="chart-title">Page views and visitors per day, 2026-03-01 to 2026-03-03: 15 page views, 9 visitors (counted per day), 1 not found. Busiest day: 2026-03-01, 10 page views.</title>`,
		// the busiest day's bar is the chart's full height; the 5 views of the 3rd day half of it
		`<rect class="chart-views" x="20.0" y="10.0" width="160.0" height="140.0" data-testid="chart-bar">`,
		`<rect class="chart-views" x="420.0" y="80.0" width="160.0" height="70.0" data-testid="chart-bar">`,
		`<details><summary>Numbers by day</summary>`,
		`<th scope="row"><time datetime="2026-03-02">2026-03-02</time></th><td>0</td><td>0</td><td>0</td><td>0</td>`,
		`<th scope="row"><time datetime="2026-03-03">2026-03-03</time></th><td>5</td><td>5</td><td>0</td><td>3</td>`,
		`<p data-testid="analytics-previews">Preview addresses (v1--…, staging--…) had 3 page views in the period, counted apart`,
		`<span class="top-key">/about</span> <span class="top-count">8</span>`,
		`>news.example<`,
		`No missing pages asked for.`,
		"&lt;script&gt;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("analytics panel lacks %s", want)
		}
	}
	if strings.Contains(got, evil) {
		t.Error("a page path is not escaped")
	}
	if n := strings.Count(got, `data-testid="chart-bar"`); n != 2 {
		t.Errorf("%d bars, want one per day with views", n)
	}
	if strings.Contains(got, "style=") || strings.Contains(got, "<script") {
		t.Error("the panel needs a style attribute or a script (CSP)")
	}
	if strings.Contains(got, `data-testid="analytics-off"`) {
		t.Error("says counting is off")
	}
}

func TestSiteAnalyticsEmptyAndOff(t *testing.T) {
	got := render(t, siteAnalytics(SiteAnalytics{Off: true, Days: []AnalyticsDay{{Date: "2026-03-01"}}}))
	for _, want := range []string{`data-testid="analytics-off"`, `No page views yet.`, `No visits from other sites yet.`,
		`<p class="chart-empty" data-testid="analytics-empty">No visits to the live site in the last day yet`} {
		if !strings.Contains(got, want) {
			t.Errorf("empty panel lacks %s", want)
		}
	}
	if strings.Contains(got, `data-testid="analytics-chart"`) || strings.Contains(got, "Busiest") || strings.Contains(got, "analytics-previews") {
		t.Error("an empty period draws a chart")
	}
}

// TestVisitsSparkline: the Overview's sparkline draws the page views of
// the days, busiest at the top, sums them in words, and says so when
// there were none.
func TestVisitsSparkline(t *testing.T) {
	days := []AnalyticsDay{{Date: "2026-03-01"}, {Date: "2026-03-02", PageViews: 4, Visitors: 2}, {Date: "2026-03-03", PageViews: 2, Visitors: 1}}
	got := render(t, visitsSparkline("d1", days, false))
	for _, want := range []string{`<polyline points="0.0,39.0 150.0,1.0 300.0,20.0">`, "6 page views and 3 visitors (counted per day) in the last 3 days.",
		`href="/account/sites/d1/analytics"`} {
		if !strings.Contains(got, want) {
			t.Errorf("sparkline lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "sparkline-empty") {
		t.Error("says it is empty")
	}
	empty := render(t, visitsSparkline("d1", []AnalyticsDay{{Date: "2026-03-01"}, {Date: "2026-03-02"}}, true))
	if !strings.Contains(empty, `data-testid="sparkline-empty">No visits to the live site in the last 2 days yet.`) || strings.Contains(empty, "<polyline") ||
		!strings.Contains(empty, "Counting is turned off") {
		t.Errorf("empty sparkline: %s", empty)
	}
}
