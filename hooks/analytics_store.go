package hooks

import (
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
	// statsTopLimit is how many entries each stored top list keeps.
	statsTopLimit = 100
	// statsPendingLimit bounds the days kept in memory while the
	// database refuses flushes.
	statsPendingLimit = 10000
)

// saveStats adds days to their rows in site_stats (created when missing),
// in one transaction. Days of deployments that no longer exist are
// dropped.
func saveStats(app core.App, days []analytics.Day) error {
	if len(days) == 0 {
		return nil
	}
	return app.RunInTransaction(func(tx core.App) error {
		col, err := tx.FindCachedCollectionByNameOrId(statsCollection)
		if err != nil {
			return fmt.Errorf("find %s: %w", statsCollection, err)
		}
		for _, d := range days {
			if _, err := tx.FindRecordById("deployments", d.Site); err != nil {
				continue // deleted since: its rows are gone too
			}
			if err := addStats(tx, col, d); err != nil {
				return err
			}
		}
		return nil
	})
}

// addStats adds d to its row.
func addStats(tx core.App, col *core.Collection, d analytics.Day) error {
	date := d.Date.Format(time.DateOnly)
	rec, err := tx.FindFirstRecordByFilter(col, "deployment = {:d} && date = {:date}", dbx.Params{"d": d.Site, "date": date})
	if err != nil {
		rec = core.NewRecord(col)
		rec.Set("deployment", d.Site)
		rec.Set("date", date)
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
		rec.Set(field, analytics.MergeCounts(statsList(rec, field), add, statsTopLimit))
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
