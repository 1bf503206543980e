package hooks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
	"sitedrop/ui"
)

// Messages of GET /deploy/:id/analytics.
const (
	msgAnalyticsDate  = "from and to must be dates as YYYY-MM-DD"
	msgAnalyticsOrder = "from must not be after to"
	msgAnalyticsRange = "at most 400 days at once"
)

// Analytics periods.
const (
	// analyticsDefaultDays is the period when from is not given.
	analyticsDefaultDays = 30
	// analyticsTopLimit is how many entries each top list of the answer
	// keeps.
	analyticsTopLimit = 20
)

// bindAnalyticsAPI binds GET /deploy/:id/analytics (owner only; 404
// otherwise).
func bindAnalyticsAPI(sd *sitedrop, se *core.ServeEvent) {
	se.Router.GET("/deploy/{id}/analytics", sd.deployAnalytics)
	se.Router.Any("/deploy/{id}/analytics", methodNotAllowed("GET"))
}

// analyticsDay is one day of the answer.
type analyticsDay struct {
	Date      string `json:"date"`
	PageViews int64  `json:"page_views"`
	Visitors  int64  `json:"visitors"`
	NotFound  int64  `json:"not_found"`
	Bytes     int64  `json:"bytes"`
	BotViews  int64  `json:"bot_views"`
}

// analyticsOut is the answer of GET /deploy/:id/analytics: every day of
// the period (oldest first, zeros included) and the period's top lists.
type analyticsOut struct {
	Days          []analyticsDay    `json:"days"`
	TopPages      []analytics.Count `json:"top_pages"`
	Referrers     []analytics.Count `json:"referrers"`
	NotFoundPaths []analytics.Count `json:"not_found_paths"`
}

// deployAnalytics is GET /deploy/:id/analytics?from=&to=.
func (sd *sitedrop) deployAnalytics(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	q := e.Request.URL.Query()
	from, to, err := analyticsPeriod(q.Get("from"), q.Get("to"), time.Now())
	if err != nil {
		return err
	}
	out, err := loadAnalytics(sd.app, rec.Id, from, to)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, out)
}

// analyticsPeriod reads the from and to parameters (UTC days, both
// included): to defaults to today, from to 29 days before to.
func analyticsPeriod(fromParam, toParam string, now time.Time) (from, to time.Time, err error) {
	to = now.UTC().Truncate(24 * time.Hour)
	if toParam != "" {
		if to, err = time.Parse(time.DateOnly, toParam); err != nil {
			return from, to, fail(http.StatusBadRequest, msgAnalyticsDate)
		}
	}
	from = to.AddDate(0, 0, 1-analyticsDefaultDays)
	if fromParam != "" {
		if from, err = time.Parse(time.DateOnly, fromParam); err != nil {
			return from, to, fail(http.StatusBadRequest, msgAnalyticsDate)
		}
	}
	switch {
	case from.After(to):
		return from, to, fail(http.StatusBadRequest, msgAnalyticsOrder)
	case to.Sub(from) >= statsKeepDays*24*time.Hour:
		return from, to, fail(http.StatusBadRequest, msgAnalyticsRange)
	}
	return from, to, nil
}

// loadAnalytics reads deployment dep's rows from from to to (UTC days,
// both included).
func loadAnalytics(app core.App, dep string, from, to time.Time) (analyticsOut, error) {
	rows, err := app.FindRecordsByFilter(statsCollection,
		"deployment = {:d} && date >= {:from} && date <= {:to}", "date", 0, 0,
		dbx.Params{"d": dep, "from": from.Format(time.DateOnly), "to": to.Format(time.DateOnly)})
	if err != nil {
		return analyticsOut{}, fmt.Errorf("read the analytics of %s: %w", dep, err)
	}
	byDate := make(map[string]*core.Record, len(rows))
	var pages, refs, notFound []analytics.Count
	for _, r := range rows {
		byDate[r.GetString("date")] = r
		pages = append(pages, statsList(r, "top_pages")...)
		refs = append(refs, statsList(r, "referrers")...)
		notFound = append(notFound, statsList(r, "not_found_paths")...)
	}
	out := analyticsOut{
		TopPages:      nonNil(analytics.MergeCounts(nil, pages, analyticsTopLimit)),
		Referrers:     nonNil(analytics.MergeCounts(nil, refs, analyticsTopLimit)),
		NotFoundPaths: nonNil(analytics.MergeCounts(nil, notFound, analyticsTopLimit)),
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		day := analyticsDay{Date: d.Format(time.DateOnly)}
		if r := byDate[day.Date]; r != nil {
			day.PageViews = int64(r.GetInt("page_views"))
			day.Visitors = int64(r.GetInt("visitors"))
			day.NotFound = int64(r.GetInt("not_found"))
			day.Bytes = int64(r.GetInt("bytes"))
			day.BotViews = int64(r.GetInt("bot_views"))
		}
		out.Days = append(out.Days, day)
	}
	return out, nil
}

// nonNil makes an empty list answer [] rather than null.
func nonNil(c []analytics.Count) []analytics.Count {
	if c == nil {
		return []analytics.Count{}
	}
	return c
}

// pageAnalytics is the site page's analytics panel: the 30 days to now.
func (sd *sitedrop) pageAnalytics(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error) {
	from, to, err := analyticsPeriod("", "", now)
	if err != nil {
		return ui.SiteAnalytics{}, err
	}
	a, err := loadAnalytics(app, dep, from, to)
	if err != nil {
		return ui.SiteAnalytics{}, err
	}
	out := ui.SiteAnalytics{Off: sd.analytics == nil}
	for _, d := range a.Days {
		out.Days = append(out.Days, ui.AnalyticsDay{Date: d.Date, PageViews: d.PageViews, Visitors: d.Visitors, NotFound: d.NotFound})
	}
	conv := func(cs []analytics.Count) []ui.AnalyticsCount {
		var l []ui.AnalyticsCount
		for _, c := range cs {
			l = append(l, ui.AnalyticsCount{Key: c.Key, Count: c.Count})
		}
		return l
	}
	out.TopPages, out.Referrers, out.NotFoundPaths = conv(a.TopPages), conv(a.Referrers), conv(a.NotFoundPaths)
	return out, nil
}
