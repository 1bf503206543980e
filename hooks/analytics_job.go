package hooks

import (
	"context"
	"slices"
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

// statsFlusher writes the aggregator's counts to site_stats, each row on
// its own. Days whose write failed, or that a flush had no time left for,
// are kept, merged by site and date (up to statsPendingLimit of them), and
// written with the next flush: neither lost nor counted twice.
type statsFlusher struct {
	mu      sync.Mutex
	pending []analytics.Day
}

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
		if n, err := purgeStats(sd.app, time.Now()); err != nil {
			sd.app.Logger().Error("purge old analytics", "error", err)
		} else if n > 0 {
			sd.app.Logger().Info("purged old analytics", "rows", n)
		}
	})
	sd.app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		sd.jobs.close() // idempotent; the flush job is not running then
		ctx, cancel := context.WithTimeout(context.Background(), statsShutdownBudget)
		defer cancel()
		if left := sd.flushStats(ctx); left > 0 {
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
	sd.flushStats(ctx)
}

// flushStats writes what was counted since the last flush, and what
// earlier flushes left, one row at a time until ctx ends. It keeps what
// it did not write for the next flush, and says how many days that is.
func (sd *sitedrop) flushStats(ctx context.Context) (left int) {
	if sd.analytics == nil {
		return 0
	}
	f := &sd.statsFlush
	f.mu.Lock()
	defer f.mu.Unlock()
	days := mergeDays(f.pending, sd.analytics.Flush())
	f.pending = nil
	var failed int
	var firstErr error
	for i, d := range days {
		if ctx.Err() != nil {
			f.pending = append(f.pending, days[i:]...)
			break
		}
		if err := saveDay(sd.app, d); err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			f.pending = append(f.pending, d)
		}
	}
	if failed > 0 {
		sd.app.Logger().Error("write analytics", "error", firstErr, "failed", failed, "days", len(days))
	}
	if n := len(f.pending) - statsPendingLimit; n > 0 {
		// the oldest days go first
		slices.SortStableFunc(f.pending, func(a, b analytics.Day) int { return b.Date.Compare(a.Date) })
		f.pending = f.pending[:statsPendingLimit]
		sd.app.Logger().Error("analytics dropped: too many days not written", "days", n)
	}
	return len(f.pending)
}

// mergeDays is pending followed by the days of fresh, a day of a site
// already in pending added to it: one entry per site and date.
func mergeDays(pending, fresh []analytics.Day) []analytics.Day {
	if len(pending) == 0 {
		return fresh
	}
	type key struct {
		site string
		day  int64 // Unix seconds of the day's midnight
	}
	at := make(map[key]int, len(pending))
	for i, d := range pending {
		at[key{d.Site, d.Date.Unix()}] = i
	}
	for _, d := range fresh {
		if i, ok := at[key{d.Site, d.Date.Unix()}]; ok {
			pending[i].Add(d, statsTopLimit)
		} else {
			at[key{d.Site, d.Date.Unix()}] = len(pending)
			pending = append(pending, d)
		}
	}
	return pending
}
