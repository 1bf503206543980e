package hooks

import (
	"testing"
)

// TestJobsStopBeforeTheDatabaseCloses: the app's terminate hook closes
// the gate, so a job that fires during shutdown does nothing (found as a
// data race between the expiry job and a test app's cleanup).
func TestJobsStopBeforeTheDatabaseCloses(t *testing.T) {
	app, sd := newBareApp(t)
	app.Cleanup()
	if sd.jobs.Enter() {
		t.Fatal("a job may start after the app terminated")
	}
	sd.jobs.Run(sd.upkeep.Expire) // must not touch the closed database
	sd.jobs.Run(sd.upkeep.Collect)
}
