package statsdb

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/store/s3store"
)

// memObjects is an in-memory object store (ship.Objects).
type memObjects struct {
	mu   sync.Mutex
	objs map[string][]byte
}

func (m *memObjects) GetObject(_ context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.objs[key]; ok {
		return d, `"e"`, nil
	}
	return nil, "", s3store.ErrNotFound
}

func (m *memObjects) PutObject(_ context.Context, key string, data []byte, cond s3store.Condition) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok && cond.IfNoneMatch {
		return "", s3store.ErrPrecondition
	}
	m.objs[key] = data
	return `"e"`, nil
}

func (m *memObjects) DeleteObject(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

func (m *memObjects) ListObjects(_ context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	m.mu.Lock()
	var keys []string
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	m.mu.Unlock()
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(s3store.ObjectInfo{Key: k}); err != nil {
			return err
		}
	}
	return nil
}

// TestMergeReplicasOnce: a replica's delta is added to its row once:
// applied, then the primary stops before deleting it (a crash between
// the commit and the delete), the next run only deletes it. A second
// delta adds; a malformed one is dropped; nothing is left in the store
// or among the recorded keys.
func TestMergeReplicasOnce(t *testing.T) {
	app := newApp(t)
	dep := mustDeployment(t, app, "merged")
	mem := &memObjects{objs: map[string][]byte{}}
	agg := analytics.New()
	f := NewFlusher(app, agg).WithReplicas(ship.NewInbox(mem), ship.NewSalts(mem))
	today := time.Now().UTC().Truncate(24 * time.Hour)
	put := func(seq int64, views int64, hashes ...uint64) *ship.Delta {
		d := &ship.Delta{Key: ship.DeltaKey("r1", seq), Replica: "r1", Seq: seq, Days: []ship.Day{{
			Site: dep.Id, Date: today.Format(time.DateOnly), PageViews: views,
			Pages: []analytics.Count{{Key: "/", Count: views}}, Hashes: hashes,
		}}}
		data, _ := json.Marshal(d)
		mem.PutObject(context.Background(), d.Key, data, s3store.Condition{})
		return d
	}
	first := put(1, 3, 11, 12)
	if err := applyDelta(app, first); err != nil { // committed; then the crash
		t.Fatal(err)
	}
	put(2, 4, 12, 13)
	mem.PutObject(context.Background(), ship.DeltaKey("r1", 3), []byte(`{"days":[{"site":""}]}`), s3store.Condition{})
	if n := f.MergeReplicas(context.Background()); n != 3 {
		t.Fatalf("merged %d deltas, want 3", n)
	}
	f.Flush(context.Background())
	row := statsRow(t, app, dep.Id, today.Format(time.DateOnly))
	if row == nil || row.PageViews() != 7 || row.TopPages()[0].Count != 7 {
		t.Fatalf("row %+v, want 3+4 page views", row)
	}
	if row.Visitors() != 3 { // 11, 12 and 13: the hashes of a delta applied before merge again, as a union
		t.Fatalf("visitors %d, want 3", row.Visitors())
	}
	if left := len(mem.objs); left != 2 { // today's and tomorrow's salts
		t.Fatalf("%d objects left: %v", left, mem.objs)
	}
	if n, err := app.CountRecords(DeltasCollection); err != nil || n != 0 {
		t.Fatalf("%d delta keys left (%v)", n, err)
	}
}
