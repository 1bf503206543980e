package hooks

import (
	"sync"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/analytics/statsdb"
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
)

// jobGate keeps the background jobs and the app's shutdown apart.
// PocketBase stops its cron and then closes the databases, but a job the
// cron already started keeps running: it would use a closed (nil)
// database. The app's lifecycle closes the gate (bindLifecycle), which
// waits for the running jobs; a job that finds the gate closed does
// nothing. Every cron job of sitedrop is bound through the gate (bind).
type jobGate struct {
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// enter reports whether a job may run; if so, it must call leave.
func (g *jobGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.running.Add(1)
	return true
}

func (g *jobGate) leave() { g.running.Done() }

// run runs job unless the gate is closed, and holds the gate's close
// until job returns.
func (g *jobGate) run(job func()) {
	if !g.enter() {
		return // the app is shutting down
	}
	defer g.leave()
	job()
}

// bind adds job to the cron c as id, at spec, run through the gate.
func (g *jobGate) bind(c *cron.Cron, id, spec string, job func()) {
	c.MustAdd(id, spec, func() { g.run(job) })
}

// close lets no job start and waits for the running ones.
func (g *jobGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.running.Wait()
}

// bindJobs registers the background jobs, each run through jobs:
//   - every minute, anonymous deployments past their expiry are deleted
//     and, when something was deleted, unreferenced content is collected;
//     every hour the collector runs anyway (it also removes blobs left by
//     a crash mid-deploy) (sites.Upkeep);
//   - every minute the replicas' analytics deltas are merged (with an S3
//     store) and the analytics counts are written, and daily the rows
//     past their keeping are purged; the lifecycle flushes them at
//     shutdown too. Both are bound whatever --analytics says: with
//     counting off the flush finds nothing to write, and rows counted
//     before are still purged when they are 400 days old;
//   - every minute, the pending custom domains that are due are checked
//     (domains.Service.CheckPending).
func bindJobs(app core.App, jobs *jobGate, upkeep *sites.Upkeep, domainSvc *domains.Service, stats *statsdb.Flusher) {
	c := app.Cron()
	jobs.bind(c, jobExpire, "* * * * *", upkeep.Expire)
	jobs.bind(c, jobCollect, "17 * * * *", upkeep.Collect)
	jobs.bind(c, jobStatsFlush, "* * * * *", stats.FlushPeriodic)
	jobs.bind(c, jobStatsPurge, "41 3 * * *", func() { statsdb.PurgeOld(app) })
	jobs.bind(c, jobDomains, "* * * * *", domainSvc.CheckPending)
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
