package statsdb

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
)

// FindRow returns the row of deployment dep on date (YYYY-MM-DD);
// sql.ErrNoRows when there is none.
func FindRow(app core.App, dep, date string) (*Row, error) {
	r := &Row{}
	err := app.RecordQuery(CollectionName).
		AndWhere(dbx.HashExp{fieldDeployment: dep, fieldDate: date}).
		Limit(1).
		One(r)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// FindRows returns the rows of deployment dep from from to to (UTC days,
// both included), oldest first.
func FindRows(app core.App, dep string, from, to time.Time) ([]*Row, error) {
	var rows []*Row
	err := app.RecordQuery(CollectionName).
		AndWhere(dbx.HashExp{fieldDeployment: dep}).
		AndWhere(dbx.Between(fieldDate, from.Format(time.DateOnly), to.Format(time.DateOnly))).
		OrderBy(fieldDate + " ASC").
		All(&rows)
	if err != nil {
		return nil, fmt.Errorf("read the analytics of %s: %w", dep, err)
	}
	return rows, nil
}

// SaveDay adds d to its row (created when missing), in a transaction of
// its own: a row that cannot be written leaves the others alone, and is
// left as it was. The day of a deployment that no longer exists is
// dropped.
func SaveDay(app core.App, d analytics.Day) error {
	return app.RunInTransaction(func(tx core.App) error {
		if _, err := tx.FindRecordById(sites.DeploymentsCollection, d.Site); errors.Is(err, sql.ErrNoRows) {
			return nil // deleted since: its rows are gone too
		} else if err != nil {
			return fmt.Errorf("find deployment %s: %w", d.Site, err)
		}
		date := d.Date.Format(time.DateOnly)
		row, err := FindRow(tx, d.Site, date)
		if errors.Is(err, sql.ErrNoRows) {
			if row, err = NewRow(tx); err != nil {
				return err
			}
			row.SetDeployment(d.Site)
			row.SetDate(date)
		} else if err != nil {
			return fmt.Errorf("find the %s stats of %s: %w", date, d.Site, err)
		}
		row.add(d)
		if err := tx.Save(row); err != nil {
			return fmt.Errorf("save the %s stats of %s: %w", date, d.Site, err)
		}
		return nil
	})
}

// Purge deletes the rows older than KeepDays before now, and says how
// many.
func Purge(app core.App, now time.Time) (int64, error) {
	cutoff := now.UTC().AddDate(0, 0, -KeepDays).Format(time.DateOnly)
	res, err := app.DB().Delete(CollectionName, dbx.NewExp(fieldDate+" < {:cutoff}", dbx.Params{"cutoff": cutoff})).Execute()
	if err != nil {
		return 0, fmt.Errorf("purge %s before %s: %w", CollectionName, cutoff, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
