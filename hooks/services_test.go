package hooks

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
	var l lifecycle
	for _, name := range []string{"a", "b", "c"} {
		l.add(service{
			name:  name,
			start: func() { got = append(got, "start "+name) },
			stop:  func(context.Context) { got = append(got, "stop "+name) },
			wait:  time.Minute,
		})
	}
	l.add(service{name: "step", stop: func(context.Context) { got = append(got, "stop step") }})
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
	var l lifecycle
	stoppedFirst := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	l.add(service{name: "first", start: func() {}, stop: func(context.Context) { close(stoppedFirst) }, wait: time.Minute})
	l.add(service{name: "stuck", start: func() {}, stop: func(context.Context) { <-release }, wait: time.Millisecond})
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
	var l lifecycle
	var hasDeadline bool
	l.add(service{name: "s", stop: func(ctx context.Context) { _, hasDeadline = ctx.Deadline() }, wait: time.Minute})
	l.Stop(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !hasDeadline {
		t.Fatal("the stop's ctx has no deadline")
	}
}
