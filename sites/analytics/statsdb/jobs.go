package statsdb

import (
	"context"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Time budgets of a flush: past them, the rows not yet written wait for
// the next flush (at shutdown there is none: they are dropped, and
// logged). A batch of rows begun goes on to its end, so the wait can pass
// a budget by one batch's write (at most SQLite's busy timeout, 10 s).
const (
	FlushBudget    = 30 * time.Second
	ShutdownBudget = 10 * time.Second
)

// FlushPeriodic is the periodic flush: the replicas' deltas merged (see
// MergeReplicas; within half of FlushBudget), then what was counted since
// the last flush written, within FlushBudget in all.
func (f *Flusher) FlushPeriodic() {
	ctx, cancel := context.WithTimeout(context.Background(), FlushBudget)
	defer cancel()
	mctx, mcancel := context.WithTimeout(ctx, FlushBudget/2)
	f.MergeReplicas(mctx)
	mcancel()
	f.Flush(ctx)
}

// FlushAtShutdown writes what is left to write, within ShutdownBudget and
// ctx, and logs what it had no time for: run it after the flush job's
// last run and before the database closes.
func (f *Flusher) FlushAtShutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, ShutdownBudget)
	defer cancel()
	if left := f.Flush(ctx); left > 0 {
		f.app.Logger().Error("analytics not written at shutdown", "days", left)
	}
}

// PurgeOld deletes the rows past their keeping (Purge) and logs what it
// did: the daily job's run.
func PurgeOld(app core.App) {
	if err := purgeMarks(app, time.Now()); err != nil {
		app.Logger().Error("purge old analytics", "error", err)
	}
	if n, err := Purge(app, time.Now()); err != nil {
		app.Logger().Error("purge old analytics", "error", err)
	} else if n > 0 {
		app.Logger().Info("purged old analytics", "rows", n)
	}
}

// LoadRecent reads deployment dep's report of the default period to now
// (ParsePeriod without from and to): a site page's panel.
func LoadRecent(app core.App, dep string, now time.Time) (Report, error) {
	from, to, err := ParsePeriod("", "", now)
	if err != nil {
		return Report{}, err
	}
	return Load(app, dep, from, to)
}
