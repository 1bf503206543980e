package statsdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/store/s3store"
)

// DeltasCollection records the replicas' deltas added to the rows: a
// delta's key, written in the same transaction as its counts.
const DeltasCollection = "site_stats_deltas"

// Bounds of a merge of the replicas' deltas.
const (
	// MaxDeltasPerRun is the most deltas one run reads: with the replicas
	// taken in turns (ship.Inbox.Pending), a backlog drains over several
	// runs without starving any replica.
	MaxDeltasPerRun = 100
	// keepMarks is how long a delta's key is kept when its object could
	// not be deleted after the merge (it is deleted with the object).
	keepMarks = 48 * time.Hour
)

// WithReplicas makes f merge, at each periodic flush, the deltas the
// replicas ship to the store (in), and keep salts (the same the
// aggregator hashes visitors with) ready and purged. It returns f.
func (f *Flusher) WithReplicas(in *ship.Inbox, salts *ship.Salts) *Flusher {
	f.inbox, f.salts = in, salts
	return f
}

// MergeReplicas adds the replicas' deltas to the rows, up to
// MaxDeltasPerRun of them, until ctx ends, and says how many it merged.
// Each delta's counters are added to its rows in one transaction that
// also records its key, so a delta is counted once: a delta whose key is
// recorded (the primary stopped between the commit and the delete) is
// only deleted. Its visitor hashes go to the aggregator's day sets
// (analytics.Aggregator.MergeVisitors, a union, so a second time changes
// nothing), and the next Flush writes the new visitors. Failures are
// logged; what was not merged stays in the store for the next run. It
// also makes sure the salts of today and tomorrow exist, and deletes the
// past days'.
func (f *Flusher) MergeReplicas(ctx context.Context) (merged int) {
	if f == nil || f.agg == nil || f.inbox == nil {
		return 0
	}
	f.mergeMu.Lock()
	defer f.mergeMu.Unlock()
	log := f.app.Logger()
	if err := f.salts.Refresh(ctx); err != nil {
		log.Error("analytics: the salts shared with the replicas", "error", err)
	}
	if err := f.salts.Purge(ctx, time.Now()); err != nil {
		log.Error("analytics: purge the past salts", "error", err)
	}
	keys, err := f.inbox.Pending(ctx, MaxDeltasPerRun)
	if err != nil {
		log.Error("analytics: the replicas' deltas", "error", err)
		return 0
	}
	for _, o := range keys {
		if ctx.Err() != nil {
			break
		}
		if err := f.mergeDelta(ctx, o); err != nil {
			log.Error("analytics: merge a replica's delta; retried next run", "key", o.Key, "error", err)
			continue
		}
		merged++
	}
	return merged
}

// mergeDelta adds the delta o to the rows (once), then deletes it.
func (f *Flusher) mergeDelta(ctx context.Context, o s3store.ObjectInfo) error {
	key := o.Key
	d, err := f.inbox.Read(ctx, o)
	if errors.Is(err, ship.ErrBadDelta) {
		f.app.Logger().Error("analytics: a replica's delta dropped", "error", err)
		return f.inbox.Done(ctx, key)
	}
	if err != nil || d == nil {
		return err
	}
	if err := applyDelta(f.app, d); err != nil {
		return err
	}
	for _, day := range d.Days {
		if len(day.Hashes) > 0 {
			a := day.Analytics()
			f.agg.MergeVisitors(a.Site, a.Date, day.Level, day.Hashes)
		}
	}
	if err := f.inbox.Done(ctx, key); err != nil {
		return err // the key stays recorded: the next run only deletes it
	}
	if err := unmark(f.app, key); err != nil {
		return fmt.Errorf("forget the merged delta %s: %w", key, err)
	}
	return nil
}

// applyDelta adds d's days to their rows and records its key, in one
// transaction; a key recorded before means done already.
func applyDelta(app core.App, d *ship.Delta) error {
	return app.RunInTransaction(func(tx core.App) error {
		if ok, err := marked(tx, d.Key); err != nil || ok {
			return err
		}
		for _, day := range d.Days {
			if err := SaveDay(tx, day.Analytics()); err != nil {
				return err
			}
		}
		col, err := tx.FindCachedCollectionByNameOrId(DeltasCollection)
		if err != nil {
			return fmt.Errorf("find %s: %w", DeltasCollection, err)
		}
		rec := core.NewRecord(col)
		rec.Set("key", d.Key)
		if err := tx.Save(rec); err != nil {
			return fmt.Errorf("record the delta %s: %w", d.Key, err)
		}
		return nil
	})
}

// marked reports whether key's delta was added to the rows.
func marked(app core.App, key string) (bool, error) {
	_, err := app.FindFirstRecordByData(DeltasCollection, "key", key)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find the delta %s: %w", key, err)
	}
	return true, nil
}

// unmark forgets key, whose object is deleted.
func unmark(app core.App, key string) error {
	_, err := app.DB().Delete(DeltasCollection, dbx.HashExp{"key": key}).Execute()
	return err
}

// purgeMarks deletes the keys recorded before now-keepMarks (a delete of
// their object that failed, then the process stopped).
func purgeMarks(app core.App, now time.Time) error {
	cutoff := now.Add(-keepMarks).UTC().Format(time.DateTime)
	_, err := app.DB().Delete(DeltasCollection, dbx.NewExp("created < {:cutoff}", dbx.Params{"cutoff": cutoff})).Execute()
	if err != nil {
		return fmt.Errorf("purge %s: %w", DeltasCollection, err)
	}
	return nil
}
