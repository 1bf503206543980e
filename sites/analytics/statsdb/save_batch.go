package statsdb

import (
	"context"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
)

// SaveBatch is how many days SaveDays writes in one transaction. A flush
// after a busy minute writes a day for every site seen in it: with one
// transaction and three queries a day, 10,000 sites took 3.6–4.5 s of
// one core at every minute mark (the serving benchmark's dip). A batch
// reads its deployments and its rows in two queries and commits once;
// between batches the write lock is let go, so deploys wait for a
// batch, not for the whole flush.
const SaveBatch = 250

// SaveDays adds each of days to its row (created when missing), SaveBatch
// days per transaction, and returns the days it could not write with the
// first error. A batch that fails is written again day by day (SaveDay),
// so a row that cannot be written leaves the others alone, as with
// SaveDay. Days of deployments that no longer exist are dropped. It stops
// between batches (and between the days of a failed one) once ctx is
// done, and returns the days not written yet in rest.
func SaveDays(ctx context.Context, app core.App, days []analytics.Day) (failed, rest []analytics.Day, firstErr error) {
	for start := 0; start < len(days); start += SaveBatch {
		if ctx.Err() != nil {
			return failed, days[start:], firstErr
		}
		batch := days[start:min(start+SaveBatch, len(days))]
		if err := saveBatch(app, batch); err == nil {
			continue
		}
		for i, d := range batch { // find the one that fails; write the others
			if ctx.Err() != nil {
				return failed, append(batch[i:len(batch):len(batch)], days[start+len(batch):]...), firstErr
			}
			if err := SaveDay(app, d); err != nil {
				failed = append(failed, d)
				if firstErr == nil {
					firstErr = err
				}
			}
		}
	}
	return failed, nil, firstErr
}

// saveBatch writes the days of batch in one transaction: one query for
// which of their deployments exist, one for their rows already stored.
// batch holds one day per site and date (see mergeDays).
func saveBatch(app core.App, batch []analytics.Day) error {
	return app.RunInTransaction(func(tx core.App) error {
		ids := make([]any, 0, len(batch))
		dates := make([]any, 0, 2)
		seenDate := map[string]bool{}
		for _, d := range batch {
			ids = append(ids, d.Site)
			if date := d.Date.Format(time.DateOnly); !seenDate[date] {
				seenDate[date] = true
				dates = append(dates, date)
			}
		}
		var live []string
		err := tx.DB().Select("id").From(sites.DeploymentsCollection).
			Where(dbx.In("id", ids...)).Column(&live)
		if err != nil {
			return fmt.Errorf("find the deployments of %d days: %w", len(batch), err)
		}
		exists := make(map[string]bool, len(live))
		for _, id := range live {
			exists[id] = true
		}
		var stored []*Row
		err = tx.RecordQuery(CollectionName).
			AndWhere(dbx.In(fieldDeployment, ids...)).
			AndWhere(dbx.In(fieldDate, dates...)).
			All(&stored)
		if err != nil {
			return fmt.Errorf("find the stats rows of %d days: %w", len(batch), err)
		}
		type key struct{ dep, date string }
		rows := make(map[key]*Row, len(stored))
		for _, r := range stored {
			rows[key{r.Deployment(), r.Date()}] = r
		}
		for _, d := range batch {
			if !exists[d.Site] {
				continue // deleted since: its rows are gone too
			}
			date := d.Date.Format(time.DateOnly)
			row := rows[key{d.Site, date}]
			if row == nil {
				if row, err = NewRow(tx); err != nil {
					return err
				}
				row.SetDeployment(d.Site)
				row.SetDate(date)
			}
			row.add(d)
			// Without the field validators (half the cost of a save):
			// the deployment exists (above), the date is DateOnly, the
			// counts are sums, and TopN keeps every list within its
			// field (TestWorstListFitsItsField). SaveDay, the fallback
			// of a failed batch, validates.
			if err := tx.SaveNoValidate(row); err != nil {
				return fmt.Errorf("save the %s stats of %s: %w", date, d.Site, err)
			}
		}
		return nil
	})
}
