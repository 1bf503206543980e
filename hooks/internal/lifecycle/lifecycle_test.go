package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"
)

// TestLifecycleOrder: services start in the order they were added and
// stop in the reverse order; a service without start runs from the start
// and is stopped at every Stop, one with a start is stopped once.
func TestLifecycleOrder(t *testing.T) {
	var got []string
	var l Lifecycle
	for _, name := range []string{"a", "b", "c"} {
		l.Add(Service{
			Name:  name,
			Start: func() { got = append(got, "start "+name) },
			Stop:  func(context.Context) { got = append(got, "stop "+name) },
			Wait:  time.Minute,
		})
	}
	l.Add(Service{Name: "step", Stop: func(context.Context) { got = append(got, "stop step") }})
	l.Start()
	l.Start() // no second start
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l.Stop(log)
	l.Stop(log)
	want := []string{
		"start a", "start b", "start c",
		"stop step", "stop c", "stop b", "stop a",
		"stop step",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestLifecycleStopBounded: a stop that overruns its wait does not hold
// up the services that stop after it.
func TestLifecycleStopBounded(t *testing.T) {
	var l Lifecycle
	stoppedFirst := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	l.Add(Service{Name: "first", Start: func() {}, Stop: func(context.Context) { close(stoppedFirst) }, Wait: time.Minute})
	l.Add(Service{Name: "stuck", Start: func() {}, Stop: func(context.Context) { <-release }, Wait: time.Millisecond})
	l.Start()
	done := make(chan struct{})
	go func() { l.Stop(slog.New(slog.NewTextHandler(io.Discard, nil))); close(done) }()
	select {
	case <-stoppedFirst:
	case <-time.After(time.Minute):
		t.Fatal("a stuck stop held up the rest")
	}
	<-done
}

// TestLifecycleStopGetsItsDeadline: a stop sees its wait as its ctx's
// deadline, so it can give up by itself.
func TestLifecycleStopGetsItsDeadline(t *testing.T) {
	var l Lifecycle
	var hasDeadline bool
	l.Add(Service{Name: "s", Stop: func(ctx context.Context) { _, hasDeadline = ctx.Deadline() }, Wait: time.Minute})
	l.Stop(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !hasDeadline {
		t.Fatal("the stop's ctx has no deadline")
	}
}

// TestJobGate: Close waits for a running job and lets no job start
// after it; a job that started first finishes undisturbed.
func TestJobGate(t *testing.T) {
	var g Gate
	if !g.Enter() {
		t.Fatal("a job may not start on an open gate")
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while a job was running")
	case <-time.After(50 * time.Millisecond):
	}
	g.Leave()
	<-closed
	if g.Enter() {
		t.Fatal("a job started after the gate closed")
	}
}
