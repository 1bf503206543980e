package statsdb

import (
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
)

// CollectionName is the collection of the daily rows.
const CollectionName = "site_stats"

// The fields of a row: written here only.
const (
	fieldDeployment    = "deployment"
	fieldDate          = "date"
	fieldPageViews     = "page_views"
	fieldVisitors      = "visitors"
	fieldNotFound      = "not_found"
	fieldBytes         = "bytes"
	fieldBotViews      = "bot_views"
	fieldPreviewViews  = "preview_views"
	fieldTopPages      = "top_pages"
	fieldReferrers     = "referrers"
	fieldNotFoundPaths = "not_found_paths"
)

var _ core.RecordProxy = (*Row)(nil)

// Row is one deployment's counts on one UTC day: a record of the
// site_stats collection.
type Row struct {
	core.BaseRecordProxy
}

// NewRow returns a new blank row, to be saved with app.Save.
func NewRow(app core.App) (*Row, error) {
	col, err := app.FindCachedCollectionByNameOrId(CollectionName)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", CollectionName, err)
	}
	r := &Row{}
	r.SetProxyRecord(core.NewRecord(col))
	return r, nil
}

// AsRow reads rec, a record of the site_stats collection, as a Row.
func AsRow(rec *core.Record) *Row {
	r := &Row{}
	r.SetProxyRecord(rec)
	return r
}

// Deployment returns the id of the deployment counted.
func (r *Row) Deployment() string { return r.GetString(fieldDeployment) }

// SetDeployment sets the id of the deployment counted.
func (r *Row) SetDeployment(id string) { r.Set(fieldDeployment, id) }

// Date returns the UTC day counted, as YYYY-MM-DD.
func (r *Row) Date() string { return r.GetString(fieldDate) }

// SetDate sets the UTC day counted, as YYYY-MM-DD.
func (r *Row) SetDate(date string) { r.Set(fieldDate, date) }

// SetDay sets the UTC day counted.
func (r *Row) SetDay(day time.Time) { r.SetDate(day.Format(time.DateOnly)) }

// PageViews returns the page views of visitors other than bots.
func (r *Row) PageViews() int64 { return int64(r.GetInt(fieldPageViews)) }

// SetPageViews sets the page views of visitors other than bots.
func (r *Row) SetPageViews(n int64) { r.Set(fieldPageViews, n) }

// PreviewViews returns the page views of the site's preview hosts,
// counted apart from PageViews.
func (r *Row) PreviewViews() int64 { return int64(r.GetInt(fieldPreviewViews)) }

// SetPreviewViews sets the page views of the site's preview hosts.
func (r *Row) SetPreviewViews(n int64) { r.Set(fieldPreviewViews, n) }

// Visitors returns the distinct visitors of the day.
func (r *Row) Visitors() int64 { return int64(r.GetInt(fieldVisitors)) }

// SetVisitors sets the distinct visitors of the day.
func (r *Row) SetVisitors(n int64) { r.Set(fieldVisitors, n) }

// NotFound returns the 404 answers (bots left out).
func (r *Row) NotFound() int64 { return int64(r.GetInt(fieldNotFound)) }

// SetNotFound sets the 404 answers (bots left out).
func (r *Row) SetNotFound(n int64) { r.Set(fieldNotFound, n) }

// Bytes returns the body bytes of every answer.
func (r *Row) Bytes() int64 { return int64(r.GetInt(fieldBytes)) }

// SetBytes sets the body bytes of every answer.
func (r *Row) SetBytes(n int64) { r.Set(fieldBytes, n) }

// BotViews returns the page views of bots that say so.
func (r *Row) BotViews() int64 { return int64(r.GetInt(fieldBotViews)) }

// SetBotViews sets the page views of bots that say so.
func (r *Row) SetBotViews(n int64) { r.Set(fieldBotViews, n) }

// TopPages returns the page views by path (empty when absent or
// malformed).
func (r *Row) TopPages() []analytics.Count { return r.list(fieldTopPages) }

// SetTopPages sets the page views by path.
func (r *Row) SetTopPages(c []analytics.Count) { r.Set(fieldTopPages, c) }

// Referrers returns the page views by referrer host (empty when absent
// or malformed).
func (r *Row) Referrers() []analytics.Count { return r.list(fieldReferrers) }

// SetReferrers sets the page views by referrer host.
func (r *Row) SetReferrers(c []analytics.Count) { r.Set(fieldReferrers, c) }

// NotFoundPaths returns the 404s by path (empty when absent or
// malformed).
func (r *Row) NotFoundPaths() []analytics.Count { return r.list(fieldNotFoundPaths) }

// SetNotFoundPaths sets the 404s by path.
func (r *Row) SetNotFoundPaths(c []analytics.Count) { r.Set(fieldNotFoundPaths, c) }

// list reads a stored top list (empty when absent or malformed).
func (r *Row) list(field string) []analytics.Count {
	var out []analytics.Count
	_ = r.UnmarshalJSONField(field, &out)
	return out
}

// add adds d, the counts of the row's deployment and day, to r. A top
// list stays bounded to TopLimit entries and analytics.Other; a list d
// has nothing for is left as stored, unless it is absent (then it is
// stored empty).
func (r *Row) add(d analytics.Day) {
	if d.PreviewViews != 0 {
		r.SetPreviewViews(r.PreviewViews() + d.PreviewViews)
	}
	r.SetPageViews(r.PageViews() + d.PageViews)
	r.SetVisitors(r.Visitors() + d.Visitors)
	r.SetNotFound(r.NotFound() + d.NotFound)
	r.SetBytes(r.Bytes() + d.Bytes)
	r.SetBotViews(r.BotViews() + d.BotViews)
	for _, l := range []struct {
		field string
		add   []analytics.Count
	}{
		{fieldTopPages, d.Pages},
		{fieldReferrers, d.Referrers},
		{fieldNotFoundPaths, d.NotFoundPaths},
	} {
		if len(l.add) == 0 && r.Get(l.field) != nil {
			continue
		}
		r.Set(l.field, analytics.TopN(TopLimit, r.list(l.field), l.add))
	}
}
