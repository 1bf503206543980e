package statsdb

import (
	"context"
	"slices"
	"sync"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
)

// Flusher writes an aggregator's counts to their rows, each on its own.
// Days whose write failed, or that a flush had no time left for, are kept,
// merged by site and date (up to PendingLimit of them), and written with
// the next flush: neither lost nor counted twice. Its methods are safe for
// concurrent use; a nil Flusher, or one without an aggregator, writes
// nothing.
type Flusher struct {
	app core.App
	agg *analytics.Aggregator

	mu      sync.Mutex
	pending []analytics.Day

	// inbox and salts: the replicas' deltas and the salts shared with
	// them (WithReplicas); nil without replicas.
	mergeMu sync.Mutex
	inbox   *ship.Inbox
	salts   *ship.Salts
}

// NewFlusher returns a Flusher of agg's counts into app's database; agg
// may be nil (counting is off).
func NewFlusher(app core.App, agg *analytics.Aggregator) *Flusher {
	return &Flusher{app: app, agg: agg}
}

// Flush writes what was counted since the last flush, and what earlier
// flushes left, a batch at a time (see SaveDays) until ctx ends. A batch
// begun goes on to its end, so the wait can pass ctx's deadline by one
// batch's write (at most SQLite's busy timeout). It keeps what it did not write for the next
// flush, and says how many days that is. Failures are logged.
func (f *Flusher) Flush(ctx context.Context) (left int) {
	if f == nil || f.agg == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	days := mergeDays(f.pending, f.agg.Flush())
	f.pending = nil
	failed, rest, firstErr := SaveDays(ctx, f.app, days)
	f.pending = append(append(f.pending, rest...), failed...)
	if len(failed) > 0 {
		f.app.Logger().Error("write analytics", "error", firstErr, "failed", len(failed), "days", len(days))
	}
	if n := len(f.pending) - PendingLimit; n > 0 {
		// the oldest days go first
		slices.SortStableFunc(f.pending, func(a, b analytics.Day) int { return b.Date.Compare(a.Date) })
		f.pending = f.pending[:PendingLimit]
		f.app.Logger().Error("analytics dropped: too many days not written", "days", n)
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
			pending[i].Add(d, TopLimit)
		} else {
			at[key{d.Site, d.Date.Unix()}] = len(pending)
			pending = append(pending, d)
		}
	}
	return pending
}
