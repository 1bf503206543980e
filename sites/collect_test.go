package sites_test

// A regression test for the collector's reading of manifests: versions
// deleted (API, dashboard, expiry job) while the collector pages through
// them, and other deploys committing between its two passes, must never
// make it delete the blob of a live deployment. Each step is a legitimate
// concurrent action; the test forces the interleaving with dbx's query log
// hook and a store wrapper.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

type hookStore struct {
	store.BlobStore
	afterWalk func()
}

func (h *hookStore) Walk(ctx context.Context, fn func(string, time.Time) error) error {
	err := h.BlobStore.Walk(ctx, fn)
	if h.afterWalk != nil {
		h.afterWalk()
	}
	return err
}

func TestCollectorNeverDeletesLiveContentWhileVersionsChange(t *testing.T) {
	defer sites.SetManifestBatch(10)()
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer app.Cleanup()
	fs, _ := store.NewFSStore(t.TempDir())
	hs := &hookStore{BlobStore: fs}
	svc := sites.NewService(app, hs, sites.ServiceConfig{})
	ctx := context.Background()

	for i := 0; i < 14; i++ {
		if _, err := svc.Create(ctx, sites.CreateParams{AnonTTL: time.Hour,
			Upload: files("index.html", fmt.Sprintf("<p>site %d</p>", i))}); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		ID         string `db:"id"`
		Deployment string `db:"deployment"`
		Manifest   string `db:"manifest"`
	}
	sorted := func() []row {
		var rows []row
		if err := app.DB().NewQuery("SELECT id, deployment, manifest FROM versions ORDER BY id").All(&rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	keeper := sorted()[10]
	m, _ := sites.ParseManifest([]byte(keeper.Manifest))
	keeperHash := m["index.html"].Hash

	deleted := map[string]bool{}
	deleteBefore := func(k int) {
		for _, r := range sorted() {
			if k == 0 {
				return
			}
			if r.ID >= keeper.ID || deleted[r.Deployment] {
				continue
			}
			rec, _ := app.FindRecordById("deployments", r.Deployment)
			if err := svc.Delete(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			deleted[r.Deployment] = true
			k--
		}
	}
	indexOfKeeper := func() int {
		for i, r := range sorted() {
			if r.ID == keeper.ID {
				return i
			}
		}
		return -1
	}

	var pass, inHook, fired int32
	var insertedBefore int
	app.ConcurrentDB().(*dbx.DB).QueryLogFunc = func(_ context.Context, _ time.Duration, q string, _ *sql.Rows, _ error) {
		if !(strings.Contains(q, "versions") && strings.Contains(q, "> ''")) || !atomic.CompareAndSwapInt32(&inHook, 0, 1) {
			return
		}
		defer atomic.StoreInt32(&inHook, 0)
		// page 1 has been snapshotted; a concurrent delete lands before page 2
		atomic.AddInt32(&fired, 1)
		if p := atomic.AddInt32(&pass, 1); p == 1 {
			deleteBefore(1)
		} else if p == 2 {
			deleteBefore(insertedBefore)
		}
	}
	// between the two passes (no gcMu held) other deploys commit
	hs.afterWalk = func() {
		for indexOfKeeper() < 10 {
			if _, err := svc.Create(ctx, sites.CreateParams{AnonTTL: time.Hour,
				Upload: files("index.html", fmt.Sprintf("<p>new %d</p>", time.Now().UnixNano()))}); err != nil {
				t.Fatal(err)
			}
		}
		insertedBefore = indexOfKeeper() - 9
	}

	res, err := svc.CollectGarbage(ctx, -time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if atomic.LoadInt32(&fired) == 0 {
		t.Fatal("the interleaving hook never fired: the test did not exercise the race")
	}
	if _, err := app.FindRecordById("versions", keeper.ID); err != nil {
		t.Fatal("keeper version should still exist")
	}
	if ok, _ := fs.Has(ctx, keeperHash); !ok {
		t.Fatalf("collector deleted the blob of a live deployment (collected %+v)", res)
	}
}
