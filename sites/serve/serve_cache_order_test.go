package serve

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites"
)

// versionedLoader is a SiteLoader over one deployment whose live version a
// test changes (the "commit"); a load can be paused after it has read.
type versionedLoader struct {
	live  atomic.Value // string: the committed version
	pause chan chan struct{}
}

func (l *versionedLoader) load(slug string) (*sites.Site, error) {
	if slug != "demo" {
		return nil, sites.ErrNotFound
	}
	site := &sites.Site{ID: "d1", Slug: slug, Status: sites.StatusActive, VersionID: l.live.Load().(string), Files: sites.Manifest{}}
	select {
	case release := <-l.pause: // a test asked this load to stop after its read
		<-release
	default:
	}
	return site, nil
}

// TestSiteCacheNeverGoesBack runs the interleaving of issue 12: a load
// reads v1 just before a redeploy commits v2 and stalls; a load after the
// commit reads v2 and serves it; then the stalled load finishes. A reader
// that saw v2 must never see v1 afterwards.
func TestSiteCacheNeverGoesBack(t *testing.T) {
	l := &versionedLoader{pause: make(chan chan struct{}, 1)}
	l.live.Store("v1")
	srv := NewServer(l.load, nil)

	release := make(chan struct{})
	l.pause <- release
	var wg sync.WaitGroup
	wg.Go(func() { // reader A: reads v1, stalls
		if s, err := srv.site("demo"); err != nil || s.versionID != "v1" {
			t.Errorf("reader A: %v, %v", s, err)
		}
	})
	for len(l.pause) > 0 { // until A has taken the pause: it has read v1
		runtime.Gosched()
	}

	// The redeploy: the commit, with the cache told before and after.
	done := srv.Changing("demo")
	l.live.Store("v2")         // commit
	s, err := srv.site("demo") // reader B, after the commit
	if err != nil || s.versionID != "v2" {
		t.Fatalf("reader B: %v, %v; want v2", s, err)
	}
	close(release) // A finishes and offers v1 to the cache
	wg.Wait()
	s, err = srv.site("demo") // reader C, before the invalidation that follows the commit
	if err != nil || s.versionID != "v2" {
		t.Fatalf("reader C after B saw v2: got %v, %v", s.versionID, err)
	}
	done()
	done()        // twice is once
	for range 2 { // reader D loads and caches v2; reader E hits it
		if s, err := srv.site("demo"); err != nil || s.versionID != "v2" {
			t.Fatalf("reader after the change: %v, %v", s, err)
		}
	}
	if _, ok := srv.cache.get("demo"); !ok {
		t.Error("site not cached once the change has ended")
	}
	if len(srv.cache.pending) != 0 {
		t.Errorf("pending changes left: %v", srv.cache.pending)
	}
}

// TestSiteCacheAbandonedChange: a change whose done never runs (its
// transaction panicked after the write) keeps its site uncached only for a
// while, not until the next restart.
func TestSiteCacheAbandonedChange(t *testing.T) {
	l := &versionedLoader{pause: make(chan chan struct{}, 1)}
	l.live.Store("v1")
	srv := NewServer(l.load, nil)
	now := time.Now()
	srv.now = func() time.Time { return now }

	srv.Changing("demo") // done is lost
	if _, err := srv.site("demo"); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.cache.get("demo"); ok {
		t.Fatal("cached while its change is pending")
	}
	now = now.Add(abandonedChangeAfter + time.Second)
	if _, err := srv.site("demo"); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.cache.get("demo"); !ok {
		t.Error("still not cached long after a change that never ended")
	}
	if len(srv.cache.pending) != 0 {
		t.Errorf("pending changes left: %v", srv.cache.pending)
	}
}
