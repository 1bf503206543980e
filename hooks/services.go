package hooks

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites/analytics/statsdb"
)

// service is one background part of the app that the lifecycle starts and
// stops (Caddy's App{Start; Stop}).
type service struct {
	// name names the service in the log when its stop overruns wait.
	name string
	// start starts the service; nil for a service that runs from the
	// moment it is added (a cron job's gate, the analytics flush).
	start func()
	// stop stops the service; its ctx ends at wait. A service without
	// start is a shutdown step rather than a running thing: its stop runs
	// at every Stop (terminating runs twice after a failed restart, and
	// the analytics flush then writes what was counted meanwhile).
	stop func(ctx context.Context)
	// wait bounds how long Stop waits for stop before going on to the
	// next service; 0 waits until stop returns.
	wait time.Duration
}

// lifecycle starts the app's background services together, in the order
// they were added, and stops them in the reverse order, each within its
// bounded wait (certmagic's Cache: Stop closes, then waits on done). The
// zero value is ready to use.
type lifecycle struct {
	mu       sync.Mutex
	services []service
	running  []bool // running[i]: services[i] has started and not stopped
}

// add appends s: it starts after the services added before it and stops
// before them.
func (l *lifecycle) add(s service) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.services = append(l.services, s)
	l.running = append(l.running, s.start == nil)
}

// Start starts, in order, every service not running yet.
func (l *lifecycle) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.services {
		if !l.running[i] {
			s.start()
			l.running[i] = true
		}
	}
}

// Stop stops the running services in the reverse order of their start.
// A stop that overruns its wait is logged to log and left to finish on its
// own: the services after it are not held up.
func (l *lifecycle) Stop(log *slog.Logger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.services) - 1; i >= 0; i-- {
		s := l.services[i]
		if !l.running[i] {
			continue
		}
		if s.start != nil {
			l.running[i] = false // stopped once, even if it overruns
		}
		if !stopWithin(s) {
			log.Error("a background service did not stop in time", "service", s.name, "wait", s.wait)
		}
	}
}

// stopWithin runs s.stop and reports whether it returned within s.wait.
func stopWithin(s service) bool {
	if s.wait <= 0 {
		s.stop(context.Background())
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.wait)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.stop(ctx)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// bindLifecycle adds the background services to life and stops them
// when the app terminates, after the servers' drain
// (server.GracefulShutdownPriority) and before the databases close, in
// this order: the cron jobs' gate closes (no new run starts) and waits
// for the running jobs, the analytics are flushed (after the jobs, the
// flush job among them), and the senders stop. They are added in the
// reverse order: the senders start when the app serves (life.Start), the
// other two run from here on.
func bindLifecycle(app core.App, life *lifecycle, send *senders, stats *statsdb.Flusher, jobs *jobGate) {
	life.add(service{
		name:  "senders",
		start: send.start,
		stop:  send.stop,
		wait:  workersStopWait,
	})
	life.add(service{
		name: "analytics flush",
		stop: stats.FlushAtShutdown,
		// the flush keeps to statsdb.ShutdownBudget, but a row begun goes
		// on to its end: at most SQLite's busy timeout more
		wait: statsdb.ShutdownBudget + 10*time.Second,
	})
	life.add(service{
		name: "cron jobs",
		// 0: a job still running uses the database, which closes next;
		// each job bounds its own work
		stop: func(context.Context) { jobs.close() },
	})
	app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropStopServices",
		Func: func(e *core.TerminateEvent) error {
			life.Stop(e.App.Logger())
			return e.Next()
		},
	})
}
