package publish

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/store/s3store"
)

// memObjects is an object store in memory with S3's conditional writes;
// beforePut, when set, runs before each PutObject (outside the lock).
type memObjects struct {
	mu        sync.Mutex
	objs      map[string][]byte
	beforePut func(key string, data []byte) error
}

func newMem() *memObjects { return &memObjects{objs: map[string][]byte{}} }

func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func (m *memObjects) GetObject(_ context.Context, key string) ([]byte, string, error) {
	return m.GetObjectIfNoneMatch(context.Background(), key, "")
}

func (m *memObjects) GetObjectIfNoneMatch(_ context.Context, key, etag string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objs[key]
	if !ok {
		return nil, "", s3store.ErrNotFound
	}
	if etag != "" && etagOf(data) == etag {
		return nil, etag, s3store.ErrNotModified
	}
	return data, etagOf(data), nil
}

func (m *memObjects) PutObject(_ context.Context, key string, data []byte, cond s3store.Condition) (string, error) {
	if m.beforePut != nil {
		if err := m.beforePut(key, data); err != nil {
			return "", err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objs[key]
	if (cond.IfNoneMatch && ok) || (cond.IfMatch != "" && (!ok || etagOf(cur) != cond.IfMatch)) {
		return "", s3store.ErrPrecondition
	}
	m.objs[key] = data
	return etagOf(data), nil
}

func (m *memObjects) DeleteObject(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

func (m *memObjects) ListObjects(_ context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	m.mu.Lock()
	var infos []s3store.ObjectInfo
	for k, v := range m.objs {
		if strings.HasPrefix(k, prefix) {
			infos = append(infos, s3store.ObjectInfo{Key: k, ETag: etagOf(v), Size: int64(len(v))})
		}
	}
	m.mu.Unlock()
	for _, o := range infos {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// feed reads the store's change feed.
func (m *memObjects) feed(t *testing.T) *Feed {
	t.Helper()
	data, _, err := m.GetObject(context.Background(), FeedKey)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFeed(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fakeSites are the deployments a test publisher publishes: slug →
// version (absent: deleted).
type fakeSites struct {
	mu       sync.Mutex
	versions map[string]string
}

func (s *fakeSites) set(slug, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if version == "" {
		delete(s.versions, slug)
	} else {
		s.versions[slug] = version
	}
}

func newTestPublisher(objs Objects, s *fakeSites, entries int) *Publisher {
	return New(Config{
		Objects: objs, FeedEntries: entries,
		SiteHost: func(slug string) string { return slug + ".sites.test" },
		Load: func(slug string) (*sites.Site, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			v, ok := s.versions[slug]
			if !ok {
				return nil, fmt.Errorf("%s: %w", slug, sites.ErrNotFound)
			}
			return &sites.Site{ID: "id-" + slug, Slug: slug, Status: sites.StatusActive, VersionID: v, Files: sites.Manifest{}}, nil
		},
		Slugs: func() ([]string, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			var slugs []string
			for k := range s.versions {
				slugs = append(slugs, k)
			}
			return slugs, nil
		},
	})
}

// TestFeedNamesOnlyWrittenDocuments: at every write of the feed, each
// change it holds names a document as the store has it (the ETag written,
// or no document for a removal): a replica reading the feed never looks
// for a document that is not there yet.
func TestFeedNamesOnlyWrittenDocuments(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	var problems []string
	writes := 0
	m.beforePut = func(key string, data []byte) error {
		if key != FeedKey {
			return nil
		}
		writes++
		f, err := ParseFeed(data)
		if err != nil {
			problems = append(problems, err.Error())
			return nil
		}
		for _, c := range f.Changes {
			_, etag, err := m.GetObject(ctx, Key(c.Host))
			if c.ETag == "" && !errors.Is(err, s3store.ErrNotFound) || c.ETag != "" && etag != c.ETag {
				problems = append(problems, fmt.Sprintf("write %d names %s at %q; the store has %q (%v)", writes, c.Host, c.ETag, etag, err))
			}
		}
		return nil
	}
	s := &fakeSites{versions: map[string]string{}}
	p := newTestPublisher(m, s, 1000)
	for i := range 200 { // more than feedBatch: several feed writes in one flush
		s.set(fmt.Sprint("s", i), "v1")
	}
	if err := p.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	s.set("s1", "v2")
	s.set("s2", "")
	p.Mark("s1", "s2")
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems, first: %s", len(problems), problems[0])
	}
	if writes < 4 {
		t.Fatalf("%d feed writes for 200 sites and a change", writes)
	}
	f := m.feed(t)
	// 1 for the first write's reset, then 200 sites and 2 changes
	last := map[string]string{}
	for _, c := range f.Changes[len(f.Changes)-2:] {
		last[c.Host] = c.ETag
	}
	if e, ok := last["s2.sites.test"]; f.Seq != 1+202 || len(f.Changes) != 200 || !ok || e != "" || last["s1.sites.test"] == "" {
		t.Fatalf("feed seq %d, %d changes, last two %v", f.Seq, len(f.Changes), last)
	}
	if !p.Settled() {
		t.Fatal("not settled with every change in the feed")
	}
}

// TestFeedTwoWritersLoseNothing: two publishers (two primaries for a
// moment) write the feed at once; the one whose conditional write loses
// reads the feed again and adds to it: every host's change is there.
func TestFeedTwoWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	sa := &fakeSites{versions: map[string]string{"a1": "v", "a2": "v"}}
	sb := &fakeSites{versions: map[string]string{"b1": "v"}}
	a, b := newTestPublisher(m, sa, 1000), newTestPublisher(m, sb, 1000)
	// both know the feed as it is before either writes
	seed := newTestPublisher(m, &fakeSites{versions: map[string]string{}}, 1000)
	if err := seed.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Publisher{a, b} {
		p.resetFeed = false
		if err := p.readFeed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// a's feed write comes right after b has written its own
	first := true
	m.beforePut = func(key string, _ []byte) error {
		if key == FeedKey && first {
			first = false
			b.Mark("b1")
			if err := b.Flush(ctx); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	a.Mark("a1", "a2")
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m.beforePut = nil
	got := map[string]string{}
	for _, c := range m.feed(t).Changes {
		got[c.Host] = c.ETag
	}
	for _, h := range []string{"a1.sites.test", "a2.sites.test", "b1.sites.test"} {
		if _, etag, err := m.GetObject(ctx, Key(h)); err != nil || got[h] != etag {
			t.Fatalf("%s: the feed says %q, the store %q (%v); feed %v", h, got[h], etag, err, got)
		}
	}
}

// TestFeedWriteFailsStaysDue: a feed write that fails keeps its changes
// due (not Settled), and the next flush writes them. A new publisher
// (a restart) resets the feed: replicas list once, whatever a crash lost.
func TestFeedWriteFailsStaysDue(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	s := &fakeSites{versions: map[string]string{"x": "v1"}}
	p := newTestPublisher(m, s, 1000)
	if err := p.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	down := errors.New("store down")
	m.beforePut = func(key string, _ []byte) error {
		if key == FeedKey {
			return down
		}
		return nil
	}
	s.set("x", "v2")
	p.Mark("x")
	if err := p.Flush(ctx); !errors.Is(err, down) {
		t.Fatalf("flush with the feed failing: %v", err)
	}
	if p.Settled() {
		t.Fatal("settled with a change not in the feed")
	}
	m.beforePut = nil
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f := m.feed(t)
	_, etag, _ := m.GetObject(ctx, Key("x.sites.test"))
	if len(f.Changes) != 1 || f.Changes[0].ETag != etag || !p.Settled() {
		t.Fatalf("after the store is back: %+v (document %s), settled %v", f.Changes, etag, p.Settled())
	}

	restarted := newTestPublisher(m, s, 1000)
	if err := restarted.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	g := m.feed(t)
	if g.Epoch != f.Epoch || g.Floor != f.Seq+1 || len(g.Changes) != 0 {
		t.Fatalf("after a restart: %+v, before %+v", g, f)
	}
}
