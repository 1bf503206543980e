package hooks

import (
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
)

// Job ids of the analytics (Settings › Crons).
const (
	jobStatsFlush = "sitedropFlushAnalytics"
	jobStatsPurge = "sitedropPurgeAnalytics"
)

// statsFlusher writes the aggregator's counts to site_stats. Days whose
// write failed are kept (up to statsPendingLimit) and written with the
// next flush.
type statsFlusher struct {
	mu      sync.Mutex
	pending []analytics.Day
}

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
		if n, err := purgeStats(sd.app, time.Now()); err != nil {
			sd.app.Logger().Error("purge old analytics", "error", err)
		} else if n > 0 {
			sd.app.Logger().Info("purged old analytics", "rows", n)
		}
	})
	sd.app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		sd.jobs.close() // idempotent; the flush job is not running then
		sd.flushAnalytics()
		return e.Next()
	})
}

// flushAnalytics writes what was counted since the last flush.
func (sd *sitedrop) flushAnalytics() {
	if sd.analytics == nil {
		return
	}
	sd.statsFlush.mu.Lock()
	defer sd.statsFlush.mu.Unlock()
	days := append(sd.statsFlush.pending, sd.analytics.Flush()...)
	sd.statsFlush.pending = nil
	if err := saveStats(sd.app, days); err != nil {
		sd.app.Logger().Error("write analytics", "error", err, "days", len(days))
		if len(days) > statsPendingLimit {
			days = days[len(days)-statsPendingLimit:]
		}
		sd.statsFlush.pending = days
	}
}
