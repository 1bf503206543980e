// Package lifecycle starts an app's background services together and
// stops them in the reverse order, each within a bounded wait (Caddy's
// App{Start; Stop}, certmagic's Cache), and keeps cron jobs and the
// shutdown apart (Gate). It knows nothing of what the services and jobs
// are: the bindings (hooks' bindLifecycle, bindJobs) add them and call
// Start and Stop.
//
//	var life lifecycle.Lifecycle
//	life.Add(lifecycle.Service{Name: "senders", Start: s.start, Stop: s.stop, Wait: 10 * time.Second})
//	life.Start()        // when the app serves
//	defer life.Stop(log) // when it terminates
package lifecycle

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Service is one background part of an app that a Lifecycle starts and
// stops (Caddy's App{Start; Stop}).
type Service struct {
	// Name names the service in the log when its stop overruns wait.
	Name string
	// Start starts the service; nil for a service that runs from the
	// moment it is added (a cron job's gate, the analytics flush).
	Start func()
	// Stop stops the service; its ctx ends at Wait. A service without
	// Start is a shutdown step rather than a running thing: its stop runs
	// at every Stop (terminating runs twice after a failed restart, and
	// the analytics flush then writes what was counted meanwhile).
	Stop func(ctx context.Context)
	// Wait bounds how long Lifecycle.Stop waits for Stop before going on to the
	// next service; 0 waits until Stop returns.
	Wait time.Duration
}

// Lifecycle starts an app's background services together, in the order
// they were added, and stops them in the reverse order, each within its
// bounded wait (certmagic's Cache: Stop closes, then waits on done). The
// zero value is ready to use.
type Lifecycle struct {
	mu       sync.Mutex
	services []Service
	running  []bool // running[i]: services[i] has started and not stopped
}

// Add appends s: it starts after the services added before it and stops
// before them.
func (l *Lifecycle) Add(s Service) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.services = append(l.services, s)
	l.running = append(l.running, s.Start == nil)
}

// Start starts, in order, every service not running yet.
func (l *Lifecycle) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.services {
		if !l.running[i] {
			s.Start()
			l.running[i] = true
		}
	}
}

// Stop stops the running services in the reverse order of their start.
// A stop that overruns its wait is logged to log and left to finish on its
// own: the services after it are not held up.
func (l *Lifecycle) Stop(log *slog.Logger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.services) - 1; i >= 0; i-- {
		s := l.services[i]
		if !l.running[i] {
			continue
		}
		if s.Start != nil {
			l.running[i] = false // stopped once, even if it overruns
		}
		if !stopWithin(s) {
			log.Error("a background service did not stop in time", "service", s.Name, "wait", s.Wait)
		}
	}
}

// stopWithin runs s.Stop and reports whether it returned within s.Wait.
func stopWithin(s Service) bool {
	if s.Wait <= 0 {
		s.Stop(context.Background())
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Wait)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Stop(ctx)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Gate keeps an app's background jobs and its shutdown apart. PocketBase
// stops its cron and then closes the databases, but a job the cron
// already started keeps running: it would use a closed (nil) database.
// The lifecycle closes the gate (a Service whose Stop calls Close), which
// waits for the running jobs; a job that finds the gate closed does
// nothing. Every cron job is run through the gate (Run). The zero value
// is open.
type Gate struct {
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// Enter reports whether a job may run; if so, it must call Leave.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.running.Add(1)
	return true
}

// Leave ends a job that entered.
func (g *Gate) Leave() { g.running.Done() }

// Run runs job unless the gate is closed, and holds the gate's Close
// until job returns.
func (g *Gate) Run(job func()) {
	if !g.Enter() {
		return // the app is shutting down
	}
	defer g.Leave()
	job()
}

// Close lets no job start and waits for the running ones.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.running.Wait()
}
