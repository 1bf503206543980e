package hooks

import (
	"context"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/internal/lifecycle"
	"sitedrop/sites/analytics/statsdb"
)

// bindLifecycle adds the background services to life and stops them
// when the app terminates, after the servers' drain
// (server.GracefulShutdownPriority) and before the databases close, in
// this order: the cron jobs' gate closes (no new run starts) and waits
// for the running jobs, the analytics are flushed (after the jobs, the
// flush job among them), and the senders stop. They are added in the
// reverse order: the senders start when the app serves (life.Start), the
// other two run from here on.
func bindLifecycle(app core.App, life *lifecycle.Lifecycle, send *senders, stats *statsdb.Flusher, jobs *lifecycle.Gate) {
	life.Add(lifecycle.Service{
		Name:  "senders",
		Start: send.start,
		Stop:  send.stop,
		Wait:  workersStopWait,
	})
	life.Add(lifecycle.Service{
		Name: "analytics flush",
		Stop: stats.FlushAtShutdown,
		// the flush keeps to statsdb.ShutdownBudget, but a row begun goes
		// on to its end: at most SQLite's busy timeout more
		Wait: statsdb.ShutdownBudget + 10*time.Second,
	})
	life.Add(lifecycle.Service{
		Name: "cron jobs",
		// 0: a job still running uses the database, which closes next;
		// each job bounds its own work
		Stop: func(context.Context) { jobs.Close() },
	})
	app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropStopServices",
		Func: func(e *core.TerminateEvent) error {
			life.Stop(e.App.Logger())
			return e.Next()
		},
	})
}
