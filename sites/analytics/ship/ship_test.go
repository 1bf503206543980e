package ship

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/analytics"
	"sitedrop/sites/store/s3store"
)

// memObjects is an in-memory store with S3's conditional create; failPut
// makes the next PutObjects store the object and then fail, as a write
// whose answer was lost.
type memObjects struct {
	mu      sync.Mutex
	objs    map[string][]byte
	failPut int
}

func newMem() *memObjects { return &memObjects{objs: map[string][]byte{}} }

func (m *memObjects) GetObject(_ context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objs[key]
	if !ok {
		return nil, "", s3store.ErrNotFound
	}
	sum := md5.Sum(data)
	return data, `"` + hex.EncodeToString(sum[:]) + `"`, nil
}

func (m *memObjects) PutObject(_ context.Context, key string, data []byte, cond s3store.Condition) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok && cond.IfNoneMatch {
		return "", s3store.ErrPrecondition
	}
	m.objs[key] = append([]byte(nil), data...)
	if m.failPut > 0 {
		m.failPut--
		return "", errors.New("connection reset")
	}
	return `"x"`, nil
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

func (m *memObjects) keys(prefix string) []string {
	var out []string
	m.ListObjects(context.Background(), prefix, func(o s3store.ObjectInfo) error {
		out = append(out, o.Key)
		return nil
	})
	return out
}

// TestSaltsShared: two nodes refreshing at once end with the same salts
// for today and tomorrow (the first writer wins), none under sites/; a
// salt not known yet is not waited for; Purge deletes a past day's salt
// only DayGrace after its end.
func TestSaltsShared(t *testing.T) {
	m := newMem()
	now := time.Date(2026, 3, 4, 23, 50, 0, 0, time.UTC)
	a, b := NewSalts(m), NewSalts(m)
	a.now, b.now = func() time.Time { return now }, func() time.Time { return now }
	if _, ok := a.Salt(now); ok {
		t.Fatal("a salt known before any refresh")
	}
	var wg sync.WaitGroup
	for _, s := range []*Salts{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Refresh(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, day := range []time.Time{now, now.AddDate(0, 0, 1)} {
		sa, oka := a.Salt(day)
		sb, okb := b.Salt(day)
		if !oka || !okb || sa != sb || sa == (analytics.Salt{}) {
			t.Fatalf("%s: salts %x (%v) and %x (%v)", day.Format(time.DateOnly), sa, oka, sb, okb)
		}
	}
	if got := m.keys(""); fmt.Sprint(got) != "[analytics/salts/2026-03-04.json analytics/salts/2026-03-05.json]" {
		t.Fatalf("objects %v", got)
	}
	if err := a.Purge(context.Background(), now.Add(10*time.Minute+analytics.DayGrace-time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(m.keys(SaltsPrefix)) != 2 {
		t.Fatal("a salt purged within DayGrace of its day's end")
	}
	if err := a.Purge(context.Background(), now.Add(10*time.Minute+analytics.DayGrace)); err != nil {
		t.Fatal(err)
	}
	if got := m.keys(SaltsPrefix); len(got) != 1 || got[0] != SaltKey(now.AddDate(0, 0, 1)) {
		t.Fatalf("after the purge: %v", got)
	}
}

// TestShipRetriesUnderTheSameKey: a delta whose write failed after the
// store kept it is written again under the same key and bytes, found
// there, and not written twice; the next counts take the next key.
func TestShipRetriesUnderTheSameKey(t *testing.T) {
	m := newMem()
	agg := analytics.NewWithOptions(analytics.Options{Ship: true})
	s := NewShipper(ShipperConfig{Objects: m, Aggregator: agg})
	hit := analytics.Hit{Site: "s1", Path: "/", Status: 200, Page: true, IP: "192.0.2.1", UserAgent: "Mozilla/5.0 Firefox/130.0"}
	agg.Record(hit)
	m.failPut = 1
	if err := s.Ship(context.Background()); err == nil {
		t.Fatal("a failed write reported no error")
	}
	if err := s.Ship(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys := m.keys(DeltasPrefix)
	if len(keys) != 1 || keys[0] != DeltaKey(s.id, 1) {
		t.Fatalf("deltas %v, want the one of seq 1", keys)
	}
	data, _, _ := m.GetObject(context.Background(), keys[0])
	d, err := ParseDelta(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Days) != 1 || d.Days[0].PageViews != 1 || len(d.Days[0].Hashes) != 1 {
		t.Fatalf("delta %+v", d)
	}
	want := analytics.VisitorHash(analytics.Salt{}, "192.0.2.1", hit.UserAgent, "s1")
	if d.Days[0].Hashes[0] == want {
		t.Fatal("hashed with a zero salt")
	}
	agg.Record(hit)
	if err := s.Ship(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keys := m.keys(DeltasPrefix); len(keys) != 2 || keys[1] != DeltaKey(s.id, 2) {
		t.Fatalf("deltas %v", keys)
	}
}

// TestPendingTakesReplicasInTurns: a replica's backlog does not hold up
// the others: up to max keys, one of each replica in turn, each one's in
// order; keys of other shapes are left alone.
func TestPendingTakesReplicasInTurns(t *testing.T) {
	m := newMem()
	for seq := int64(1); seq <= 5; seq++ {
		m.PutObject(context.Background(), DeltaKey("aaaa", seq), []byte("{}"), s3store.Condition{})
	}
	m.PutObject(context.Background(), DeltaKey("bbbb", 7), []byte("{}"), s3store.Condition{})
	m.PutObject(context.Background(), DeltasPrefix+"junk.json", []byte("{}"), s3store.Condition{})
	keys, err := NewInbox(m).Pending(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{DeltaKey("aaaa", 1), DeltaKey("bbbb", 7), DeltaKey("aaaa", 2)}
	var got []string
	for _, o := range keys {
		got = append(got, o.Key)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pending %v, want %v", keys, want)
	}
}

// TestParseDeltaRefuses deltas out of bounds.
func TestParseDeltaRefuses(t *testing.T) {
	for _, bad := range []string{
		`{"days":[{"site":"","date":"2026-03-04"}]}`,
		`{"days":[{"site":"s","date":"2026-3-4"}]}`,
		`{"days":[{"site":"s","date":"2026-03-04","page_views":-1}]}`,
		`{"days":[{"site":"s","date":"2026-03-04","level":64}]}`,
		`{"days":[{"site":"s","date":"2026-03-04","pages":[{"key":"` + strings.Repeat("x", analytics.MaxKeyLen+1) + `","count":1}]}]}`,
		`not json`,
	} {
		if _, err := ParseDelta([]byte(bad)); err == nil {
			t.Errorf("accepted %.80s", bad)
		}
	}
}
