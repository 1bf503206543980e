package sites_test

import (
	"context"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// orphan puts a blob no version references.
func orphan(t *testing.T, svc *sites.Service, data string) {
	t.Helper()
	if err := svc.Store().Put(context.Background(), store.HashBytes([]byte(data)), []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// TestUpkeepWaitsForPublishing: while changes are not published to the
// replicas, the collector removes nothing and stays due; once they are,
// it collects.
func TestUpkeepWaitsForPublishing(t *testing.T) {
	_, svc := newService(t)
	orphan(t, svc, "gone")
	settled := false
	u := &sites.Upkeep{Sites: svc, Settled: func() bool { return settled }}
	u.Collect()
	if n := blobCount(t, svc); n != 1 {
		t.Fatalf("%d blobs: collected before the replicas caught up", n)
	}
	if !u.TakeDue() {
		t.Fatal("the collection held back is not due")
	}
	settled = true
	u.Collect()
	if n := blobCount(t, svc); n != 0 || u.TakeDue() {
		t.Fatalf("%d blobs after a settled collection", n)
	}
}

// TestUpkeepGraceKeepsDue: a blob younger than the grace period stays, and
// the collection stays due until it is old enough.
func TestUpkeepGraceKeepsDue(t *testing.T) {
	_, svc := newService(t)
	orphan(t, svc, "young")
	u := &sites.Upkeep{Sites: svc, Grace: time.Hour}
	u.MarkDue()
	u.Expire()
	if n := blobCount(t, svc); n != 1 || !u.TakeDue() {
		t.Fatalf("%d blobs: a young orphan went, or the collection is not due", n)
	}
	u.Grace = 0
	u.Expire() // not due: nothing collected
	if n := blobCount(t, svc); n != 1 {
		t.Fatal("Expire collected while no collection was due")
	}
	u.MarkDue()
	u.Expire()
	if n := blobCount(t, svc); n != 0 {
		t.Fatalf("%d blobs after a due collection", n)
	}
}

// TestUpkeepExpirePurges: Expire deletes the anonymous deployments past
// their expiry and keeps the others.
func TestUpkeepExpirePurges(t *testing.T) {
	app, svc := newService(t)
	ctx := context.Background()
	old, err := svc.Create(ctx, sites.CreateParams{AnonTTL: time.Hour, Upload: files("index.html", "<p>old</p>")})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := svc.Create(ctx, sites.CreateParams{AnonTTL: time.Hour, Upload: files("index.html", "<p>fresh</p>")})
	if err != nil {
		t.Fatal(err)
	}
	dep := sites.DeploymentOf(old.Record)
	dep.SetExpiresAt(time.Now().Add(-time.Minute))
	if err := app.Save(old.Record); err != nil {
		t.Fatal(err)
	}
	(&sites.Upkeep{Sites: svc}).Expire()
	if _, err := app.FindRecordById(sites.DeploymentsCollection, old.Record.Id); err == nil {
		t.Fatal("expired deployment kept")
	}
	if _, err := app.FindRecordById(sites.DeploymentsCollection, fresh.Record.Id); err != nil {
		t.Fatal("live anonymous deployment purged")
	}
}
