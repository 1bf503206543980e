package hooks

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites/accounts"
)

// Job ids, as listed in the dashboard (Settings › Crons).
const (
	jobExpire  = "sitedropExpireAnonymous"
	jobCollect = "sitedropCollectBlobs"
)

// gcFlag records that content may have become unreferenced since the
// collector last ran.
type gcFlag struct{ due atomic.Bool }

func (f *gcFlag) set()       { f.due.Store(true) }
func (f *gcFlag) take() bool { return f.due.Swap(false) }

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

// bindJobs registers the background jobs: every minute, anonymous
// deployments past their expiry are deleted and, when something was
// deleted, unreferenced content is collected; every hour the collector
// runs anyway (it also removes blobs left by a crash mid-deploy).
func bindJobs(sd *sitedrop) {
	sd.jobs.bind(sd.app.Cron(), jobExpire, "* * * * *", sd.expire)
	sd.jobs.bind(sd.app.Cron(), jobCollect, "17 * * * *", sd.collect)
}

// runExpireJob runs the expiry job (expire) through the gate.
func (sd *sitedrop) runExpireJob() { sd.jobs.run(sd.expire) }

// runCollectJob runs the collector (collect) through the gate.
func (sd *sitedrop) runCollectJob() { sd.jobs.run(sd.collect) }

// expire purges expired anonymous deployments, sign-in codes and
// sessions, then collects content when anything became unreferenced.
func (sd *sitedrop) expire() {
	n, err := sd.svc.PurgeExpired(time.Now())
	if err != nil {
		sd.app.Logger().Error("purge expired deployments", "error", err)
	}
	if n > 0 {
		sd.app.Logger().Info("purged expired deployments", "count", n)
	}
	if err := accounts.PurgeExpiredLoginCodes(sd.app, time.Now()); err != nil {
		sd.app.Logger().Error("purge expired login codes", "error", err)
	}
	if err := accounts.PurgeExpiredSessions(sd.app, time.Now()); err != nil {
		sd.app.Logger().Error("purge expired sessions", "error", err)
	}
	if sd.gcDue.take() {
		sd.runCollectJob()
	}
}

// collect deletes blobs that no version references.
func (sd *sitedrop) collect() {
	if sd.publisher != nil && !sd.publisher.Settled() {
		// a change not yet published may drop blobs that replicas still
		// serve: the publisher spares them first (publish.Config.Retention)
		sd.gcDue.set()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := sd.svc.CollectGarbage(ctx, sd.cfg.GCGrace)
	if err != nil {
		sd.app.Logger().Error("collect unreferenced blobs", "error", err)
		sd.gcDue.set()
		return
	}
	if res.Deferred > 0 {
		// too young to remove yet: try again on the next minute's run
		sd.gcDue.set()
	}
	if res.Removed > 0 {
		sd.app.Logger().Info("collected unreferenced blobs", "count", res.Removed)
	}
}
