package hooks

import (
	"testing"
	"time"
)

// TestJobGate: closing waits for a running job and lets no job start
// after it; a job that started first finishes undisturbed.
func TestJobGate(t *testing.T) {
	var g jobGate
	if !g.enter() {
		t.Fatal("a job may not start on an open gate")
	}
	closed := make(chan struct{})
	go func() { g.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while a job was running")
	case <-time.After(50 * time.Millisecond):
	}
	g.leave()
	<-closed
	if g.enter() {
		t.Fatal("a job started after the gate closed")
	}
}

// TestJobsStopBeforeTheDatabaseCloses: the app's terminate hook closes
// the gate, so a job that fires during shutdown does nothing (found as a
// data race between the expiry job and a test app's cleanup).
func TestJobsStopBeforeTheDatabaseCloses(t *testing.T) {
	app, sd := newBareApp(t)
	app.Cleanup()
	if sd.jobs.enter() {
		t.Fatal("a job may start after the app terminated")
	}
	sd.jobs.run(sd.upkeep.Expire) // must not touch the closed database
	sd.jobs.run(sd.upkeep.Collect)
}
