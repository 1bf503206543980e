package hooks

import (
	"context"
	"time"

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

// bindAnalyticsJobs flushes the counts every minute and purges old rows
// daily; the lifecycle flushes them at shutdown too (flushAtShutdown).
// Both jobs are bound whatever --analytics says: with counting off the
// flush finds nothing to write, and rows counted before are still purged
// when they are 400 days old.
func bindAnalyticsJobs(sd *sitedrop) {
	sd.jobs.bind(sd.app.Cron(), jobStatsFlush, "* * * * *", sd.flushAnalytics)
	sd.jobs.bind(sd.app.Cron(), jobStatsPurge, "41 3 * * *", sd.purgeAnalytics)
}

// purgeAnalytics deletes the rows past their keeping (statsdb.Purge).
func (sd *sitedrop) purgeAnalytics() {
	if n, err := statsdb.Purge(sd.app, time.Now()); err != nil {
		sd.app.Logger().Error("purge old analytics", "error", err)
	} else if n > 0 {
		sd.app.Logger().Info("purged old analytics", "rows", n)
	}
}

// flushAtShutdown writes what is left to write, within
// statsShutdownBudget and ctx; the lifecycle runs it after the running
// jobs, the flush job among them, and before the databases close.
func (sd *sitedrop) flushAtShutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, statsShutdownBudget)
	defer cancel()
	if left := sd.statsFlush.Flush(ctx); left > 0 {
		sd.app.Logger().Error("analytics not written at shutdown", "days", left)
	}
}

// flushAnalytics writes what was counted since the last flush, within
// statsFlushBudget.
func (sd *sitedrop) flushAnalytics() {
	ctx, cancel := context.WithTimeout(context.Background(), statsFlushBudget)
	defer cancel()
	sd.statsFlush.Flush(ctx)
}
