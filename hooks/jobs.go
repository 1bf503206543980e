package hooks

import (
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/lifecycle"
	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/audit"
	"sitedrop/sites/domains"
	"sitedrop/sites/store/s3store"
)

// Job ids, as listed in the dashboard (Settings › Crons).
const (
	jobExpire     = "sitedropExpireAnonymous"
	jobCollect    = "sitedropCollectBlobs"
	jobDomains    = "sitedropVerifyDomains"
	jobStatsFlush = "sitedropFlushAnalytics"
	jobStatsPurge = "sitedropPurgeAnalytics"
	jobAuditPurge = "sitedropPurgeAuditLog"
)

// bindJobs registers the background jobs, each run through the gate
// jobs (closed by the lifecycle: bindLifecycle):
//   - every minute, anonymous deployments past their expiry are deleted
//     (with expired sign-in codes, and the sessions of the users and of
//     the moderation page) and, when something was deleted, unreferenced content is collected;
//     every hour the collector runs anyway (it also removes blobs left by
//     a crash mid-deploy) (sites.Upkeep);
//   - every minute the replicas' analytics deltas are merged (with an S3
//     store) and the analytics counts are written, and daily the rows
//     past their keeping are purged; the lifecycle flushes them at
//     shutdown too. Both are bound whatever --analytics says: with
//     counting off the flush finds nothing to write, and rows counted
//     before are still purged when they are 400 days old;
//   - every minute, the pending custom domains that are due are checked
//     (domains.Service.CheckPending);
//   - daily, the audit log's entries older than 90 days are dropped
//     (audit.Purge).
func bindJobs(app core.App, jobs *lifecycle.Gate, upkeep *sites.Upkeep, domainSvc *domains.Service, stats *statsdb.Flusher) {
	bind := func(id, spec string, job func()) {
		app.Cron().MustAdd(id, spec, func() { jobs.Run(job) })
	}
	bind(jobExpire, "* * * * *", upkeep.Expire)
	bind(jobCollect, "17 * * * *", upkeep.Collect)
	bind(jobStatsFlush, "* * * * *", stats.FlushPeriodic)
	bind(jobStatsPurge, "41 3 * * *", func() { statsdb.PurgeOld(app) })
	bind(jobDomains, "* * * * *", domainSvc.CheckPending)
	bind(jobAuditPurge, "53 3 * * *", func() {
		if _, err := audit.Purge(app, time.Now()); err != nil {
			app.Logger().Error("audit purge", "error", err)
		}
	})
}

// newAnalytics builds the counting of the site server (nil when on is
// false) and its flush, which the jobs run. With an S3 store (s3 not
// nil), visitors are hashed with the day's salt shared with the replicas
// through the store, and the flush merges the counts the replicas ship
// there (sites/analytics/ship).
func newAnalytics(app core.App, on bool, s3 *s3store.Store) (*analytics.Aggregator, *statsdb.Flusher) {
	switch {
	case !on:
		return nil, statsdb.NewFlusher(app, nil)
	case s3 == nil:
		agg := analytics.New()
		return agg, statsdb.NewFlusher(app, agg)
	}
	salts := ship.NewSalts(s3)
	agg := analytics.NewWithOptions(analytics.Options{Salts: salts})
	return agg, statsdb.NewFlusher(app, agg).WithReplicas(ship.NewInbox(s3), salts)
}
