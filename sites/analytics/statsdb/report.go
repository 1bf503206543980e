package statsdb

import (
	"errors"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
)

// Periods of a report.
const (
	// DefaultDays is the period when its start is not given.
	DefaultDays = 30
	// ReportTopLimit is how many entries each top list of a report keeps.
	ReportTopLimit = 20
)

// Errors of ParsePeriod: the client's.
var (
	ErrPeriodDate  = errors.New("statsdb: a period's bound is not a date as YYYY-MM-DD")
	ErrPeriodOrder = errors.New("statsdb: a period starts after its end")
	ErrPeriodRange = errors.New("statsdb: a period is longer than KeepDays")
)

// ParsePeriod reads a period's bounds, UTC days as YYYY-MM-DD, both
// included: to defaults to now's day, from to DefaultDays-1 days before
// to. A period is at most KeepDays long.
func ParsePeriod(fromParam, toParam string, now time.Time) (from, to time.Time, err error) {
	to = now.UTC().Truncate(24 * time.Hour)
	if toParam != "" {
		if to, err = time.Parse(time.DateOnly, toParam); err != nil {
			return from, to, ErrPeriodDate
		}
	}
	from = to.AddDate(0, 0, 1-DefaultDays)
	if fromParam != "" {
		if from, err = time.Parse(time.DateOnly, fromParam); err != nil {
			return from, to, ErrPeriodDate
		}
	}
	switch {
	case from.After(to):
		return from, to, ErrPeriodOrder
	case to.Sub(from) >= KeepDays*24*time.Hour:
		return from, to, ErrPeriodRange
	}
	return from, to, nil
}

// ReportDay is one day of a report.
type ReportDay struct {
	Date      string `json:"date"`
	PageViews int64  `json:"page_views"`
	Visitors  int64  `json:"visitors"`
	NotFound  int64  `json:"not_found"`
	Bytes     int64  `json:"bytes"`
	BotViews  int64  `json:"bot_views"`
	// PreviewViews are the page views of the site's preview hosts
	// (v<N>--slug, alias--slug), never in PageViews.
	PreviewViews int64 `json:"preview_views"`
}

// Report is a deployment's analytics over a period, as
// GET /deploy/{id}/analytics answers it: every day of the period (oldest
// first, zeros included) and the period's top lists (never nil).
type Report struct {
	Days          []ReportDay       `json:"days"`
	TopPages      []analytics.Count `json:"top_pages"`
	Referrers     []analytics.Count `json:"referrers"`
	NotFoundPaths []analytics.Count `json:"not_found_paths"`
}

// Load reads the report of deployment dep from from to to (UTC days, both
// included).
func Load(app core.App, dep string, from, to time.Time) (Report, error) {
	rows, err := FindRows(app, dep, from, to)
	if err != nil {
		return Report{}, err
	}
	byDate := make(map[string]*Row, len(rows))
	var pages, refs, notFound []analytics.Count
	for _, r := range rows {
		byDate[r.Date()] = r
		pages = append(pages, r.TopPages()...)
		refs = append(refs, r.Referrers()...)
		notFound = append(notFound, r.NotFoundPaths()...)
	}
	out := Report{
		TopPages:      nonNil(analytics.MergeCounts(nil, pages, ReportTopLimit)),
		Referrers:     nonNil(analytics.MergeCounts(nil, refs, ReportTopLimit)),
		NotFoundPaths: nonNil(analytics.MergeCounts(nil, notFound, ReportTopLimit)),
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		day := ReportDay{Date: d.Format(time.DateOnly)}
		if r := byDate[day.Date]; r != nil {
			day.PageViews = r.PageViews()
			day.Visitors = r.Visitors()
			day.NotFound = r.NotFound()
			day.Bytes = r.Bytes()
			day.BotViews = r.BotViews()
			day.PreviewViews = r.PreviewViews()
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
