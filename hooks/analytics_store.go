package hooks

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
)

// Analytics storage: the site_stats collection, one row per deployment
// and UTC day.
const (
	statsCollection = "site_stats"
	// statsKeepDays is how long a day's row is kept.
	statsKeepDays = 400
	// statsTopLimit is how many entries each stored top list keeps,
	// besides analytics.Other, which counts the rest. With keys of
	// analytics.MaxKeyLen bytes at most, a list's JSON stays under
	// statsListMaxJSON, whatever the keys.
	statsTopLimit = 100
	// statsListMaxJSON is the most a stored top list can take as JSON:
	// each key byte is written as 6 bytes at worst (\u00XX for a control
	// character, \ufffd for a byte of invalid UTF-8, \u003c for <), and
	// an entry adds {"key":"","count":N}, with N of up to 20 bytes, and a
	// comma. It is under the lists' MaxSize (migrations/*_site_stats.go),
	// as a test checks.
	statsListMaxJSON = 2 + (statsTopLimit+1)*(6*analytics.MaxKeyLen+len(`{"key":"","count":-9223372036854775808},`))
	// statsPendingLimit bounds the days kept in memory while the
	// database refuses flushes.
	statsPendingLimit = 10000
)

// saveDay adds d to its row in site_stats (created when missing), in a
// transaction of its own: a row that cannot be written leaves the others
// alone, and is left as it was. The day of a deployment that no longer
// exists is dropped.
func saveDay(app core.App, d analytics.Day) error {
	return app.RunInTransaction(func(tx core.App) error {
		col, err := tx.FindCachedCollectionByNameOrId(statsCollection)
		if err != nil {
			return fmt.Errorf("find %s: %w", statsCollection, err)
		}
		if _, err := tx.FindRecordById("deployments", d.Site); errors.Is(err, sql.ErrNoRows) {
			return nil // deleted since: its rows are gone too
		} else if err != nil {
			return fmt.Errorf("find deployment %s: %w", d.Site, err)
		}
		return addStats(tx, col, d)
	})
}

// addStats adds d to its row.
func addStats(tx core.App, col *core.Collection, d analytics.Day) error {
	date := d.Date.Format(time.DateOnly)
	rec, err := tx.FindFirstRecordByFilter(col, "deployment = {:d} && date = {:date}", dbx.Params{"d": d.Site, "date": date})
	if errors.Is(err, sql.ErrNoRows) {
		rec = core.NewRecord(col)
		rec.Set("deployment", d.Site)
		rec.Set("date", date)
	} else if err != nil {
		return fmt.Errorf("find the %s stats of %s: %w", date, d.Site, err)
	}
	rec.Set("page_views", rec.GetInt("page_views")+int(d.PageViews))
	rec.Set("visitors", rec.GetInt("visitors")+int(d.Visitors))
	rec.Set("not_found", rec.GetInt("not_found")+int(d.NotFound))
	rec.Set("bytes", rec.GetInt("bytes")+int(d.Bytes))
	rec.Set("bot_views", rec.GetInt("bot_views")+int(d.BotViews))
	for field, add := range map[string][]analytics.Count{"top_pages": d.Pages, "referrers": d.Referrers, "not_found_paths": d.NotFoundPaths} {
		if len(add) == 0 && rec.Get(field) != nil {
			continue
		}
		rec.Set(field, analytics.TopN(statsTopLimit, statsList(rec, field), add))
	}
	if err := tx.Save(rec); err != nil {
		return fmt.Errorf("save the %s stats of %s: %w", date, d.Site, err)
	}
	return nil
}

// statsList reads a stored top list (empty when absent or malformed).
func statsList(rec *core.Record, field string) []analytics.Count {
	var out []analytics.Count
	_ = rec.UnmarshalJSONField(field, &out)
	return out
}

// purgeStats deletes the rows older than statsKeepDays before now.
func purgeStats(app core.App, now time.Time) (int64, error) {
	cutoff := now.UTC().AddDate(0, 0, -statsKeepDays).Format(time.DateOnly)
	res, err := app.DB().Delete(statsCollection, dbx.NewExp("date < {:cutoff}", dbx.Params{"cutoff": cutoff})).Execute()
	if err != nil {
		return 0, fmt.Errorf("purge %s before %s: %w", statsCollection, cutoff, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
