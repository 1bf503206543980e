package hooks

import (
	"context"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics/statsdb"
)

// Job ids of the analytics (Settings › Crons).
const (
	jobStatsFlush = "sitedropFlushAnalytics"
	jobStatsPurge = "sitedropPurgeAnalytics"
)

// Time budgets of a flush: past them, the rows not yet written wait for
// the next flush (at shutdown there is none: they are dropped, and
// logged). A row begun goes on to its end, so the wait can pass a budget
// by one row's write (at most SQLite's busy timeout, 10 s).
const (
	statsFlushBudget    = 30 * time.Second
	statsShutdownBudget = 10 * time.Second
)

// bindAnalyticsJobs flushes the counts every minute and at shutdown (after
// the running jobs, before the databases close), and purges old rows
// daily. Both are bound whatever --analytics says: with counting off the
// flush finds nothing to write, and rows counted before are still purged
// when they are 400 days old.
func bindAnalyticsJobs(sd *sitedrop) {
	sd.app.Cron().MustAdd(jobStatsFlush, "* * * * *", func() {
		if !sd.jobs.enter() {
			return // the app is shutting down: the terminate hook flushes
		}
		defer sd.jobs.leave()
		sd.flushAnalytics()
	})
	sd.app.Cron().MustAdd(jobStatsPurge, "41 3 * * *", func() {
		if !sd.jobs.enter() {
			return
		}
		defer sd.jobs.leave()
		if n, err := statsdb.Purge(sd.app, time.Now()); err != nil {
			sd.app.Logger().Error("purge old analytics", "error", err)
		} else if n > 0 {
			sd.app.Logger().Info("purged old analytics", "rows", n)
		}
	})
	sd.app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		sd.jobs.close() // idempotent; the flush job is not running then
		ctx, cancel := context.WithTimeout(context.Background(), statsShutdownBudget)
		defer cancel()
		if left := sd.statsFlush.Flush(ctx); left > 0 {
			sd.app.Logger().Error("analytics not written at shutdown", "days", left)
		}
		return e.Next()
	})
}

// flushAnalytics writes what was counted since the last flush, within
// statsFlushBudget.
func (sd *sitedrop) flushAnalytics() {
	ctx, cancel := context.WithTimeout(context.Background(), statsFlushBudget)
	defer cancel()
	sd.statsFlush.Flush(ctx)
}
