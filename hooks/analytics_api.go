package hooks

import (
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/ui"
)

// Messages of GET /deploy/:id/analytics.
const (
	msgAnalyticsDate  = "from and to must be dates as YYYY-MM-DD"
	msgAnalyticsOrder = "from must not be after to"
	msgAnalyticsRange = "at most 400 days at once"
)

// bindAnalyticsAPI binds GET /deploy/:id/analytics (owner only; 404
// otherwise).
func bindAnalyticsAPI(r *router.Router[*core.RequestEvent], auth *apiAuth) {
	r.GET("/deploy/{id}/analytics", deployAnalytics).Bind(auth.requireOwner("id"))
	r.Any("/deploy/{id}/analytics", methodNotAllowed("GET"))
}

// deployAnalytics is GET /deploy/:id/analytics?from=&to=: a
// statsdb.Report.
func deployAnalytics(e *core.RequestEvent) error {
	rec := ownedOf(e)
	q := e.Request.URL.Query()
	from, to, err := statsdb.ParsePeriod(q.Get("from"), q.Get("to"), time.Now())
	if err != nil {
		return err
	}
	out, err := statsdb.Load(e.App, rec.Id, from, to)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, out)
}

// pageAnalytics is the site page's analytics panel: the 30 days to now
// (statsdb.LoadRecent); off says that --analytics=false counts nothing.
func pageAnalytics(off bool) func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error) {
	return func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error) {
		a, err := statsdb.LoadRecent(app, dep, now)
		if err != nil {
			return ui.SiteAnalytics{}, err
		}
		return analyticsPanel(a, off), nil
	}
}

// analyticsPanel is report a as the site page shows it.
func analyticsPanel(a statsdb.Report, off bool) ui.SiteAnalytics {
	out := ui.SiteAnalytics{Off: off}
	for _, d := range a.Days {
		out.Days = append(out.Days, ui.AnalyticsDay{Date: d.Date, PageViews: d.PageViews, Visitors: d.Visitors, NotFound: d.NotFound, PreviewViews: d.PreviewViews})
	}
	conv := func(cs []analytics.Count) []ui.AnalyticsCount {
		var l []ui.AnalyticsCount
		for _, c := range cs {
			l = append(l, ui.AnalyticsCount{Key: c.Key, Count: c.Count})
		}
		return l
	}
	out.TopPages, out.Referrers, out.NotFoundPaths = conv(a.TopPages), conv(a.Referrers), conv(a.NotFoundPaths)
	return out
}
