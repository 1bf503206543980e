package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/store/s3store"
)

// Config is what a Publisher needs from the primary.
type Config struct {
	Objects Objects
	// Load gives a deployment's live state (sites.Service.LoadSite), or an
	// error wrapping sites.ErrNotFound when it is gone.
	Load func(slug string) (*sites.Site, error)
	// Slugs lists every deployment, for the full reconcile.
	Slugs func() ([]string, error)
	// SiteHost is a slug's host, <slug>.<sites-domain>.
	SiteHost func(slug string) string
	// ExtraHosts gives the other hosts a site answers on (verified custom
	// domains); nil: none. An error leaves the site's documents as they
	// are and its publish due (retried), rather than unpublish them.
	ExtraHosts func(siteID string) ([]string, error)
	// Previews gives the preview host labels of a site ("v12--my-site",
	// "staging--my-site": sites.PreviewLabels), each published as a
	// document of its own under SiteHost(label); nil: none. Custom
	// domains have no previews.
	Previews func(site *sites.Site) ([]string, error)
	// Keep spares a blob from the collector until a time (the blob
	// store's KeepUntil); see Retention.
	Keep func(ctx context.Context, hash string, until time.Time) error
	// Retention is how long blobs that a publish drops from a host (an
	// old version's, a deleted site's) are kept: a replica still holding
	// the old document must find them until it sees the new one. Default
	// DefaultRetention.
	Retention time.Duration
	// ReconcileEvery is how often every site is published again, and
	// documents of no site removed. Default one hour.
	ReconcileEvery time.Duration
	// FeedEntries bounds the change feed (FeedKey): a replica that falls
	// further behind lists every document once. Default
	// DefaultFeedEntries.
	FeedEntries int
	// Changes, when set, is told where the feed stands after each write
	// of it, and answers the replicas' long polls (see Changes); nil: no
	// replica is told, they poll the store.
	Changes *Changes
	Logger  *slog.Logger
}

// DefaultRetention is the default Config.Retention: far beyond the
// replicas' propagation bound (sites/replica: 5 s), so that a replica cut
// off from the store for minutes still finds the blobs of what it serves.
const DefaultRetention = 15 * time.Minute

// keepParallel is how many KeepUntil markers are written at once.
const keepParallel = 8

// maxConflicts is how often a publish retries after a conditional write
// lost to another writer.
const maxConflicts = 5

// feedBatch is how many slugs a Flush publishes between two writes of
// the change feed.
const feedBatch = 64

// Publisher publishes the live state of every site that changes, after
// its change commits (Changing), and reconciles all sites at start and
// periodically, so a publish that failed (the store down) is never lost:
// the slug stays dirty and is retried with backoff.
type Publisher struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu         sync.Mutex
	pending    map[string]int  // slugs whose change has not committed yet
	dirty      map[string]bool // slugs to publish
	busy       bool            // a flush is running
	reconciled bool            // a full reconcile has succeeded
	needFull   bool            // a full reconcile is due

	// due are the changes written to documents and not yet to the feed.
	due []Change
	// feedMu serializes the writes of the feed; feed and feedETag are
	// the feed as this publisher last wrote it (nil: read it first).
	feedMu   sync.Mutex
	feed     *Feed
	feedETag string
	// resetFeed: the first feed write of this process drops the feed's
	// changes (Feed.Reset), since one written before a crash may have
	// missed it; every replica lists the documents once.
	resetFeed bool
}

// New returns a Publisher; Run starts its work.
func New(cfg Config) *Publisher {
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.ReconcileEvery <= 0 {
		cfg.ReconcileEvery = time.Hour
	}
	if cfg.FeedEntries <= 0 {
		cfg.FeedEntries = DefaultFeedEntries
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Publisher{
		cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1),
		pending: map[string]int{}, dirty: map[string]bool{}, needFull: true,
		resetFeed: true,
	}
}

// Changing is called before a change to the slugs' deployments is
// written, and done once its transaction has ended (committed or not;
// done may be called more than once): the slugs are then published. A
// slug is not published while a change of it is pending, so what is read
// is what committed.
func (p *Publisher) Changing(slugs ...string) (done func()) {
	p.mu.Lock()
	for _, s := range slugs {
		p.pending[s]++
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			for _, s := range slugs {
				if p.pending[s] <= 1 {
					delete(p.pending, s)
				} else {
					p.pending[s]--
				}
				p.dirty[s] = true
			}
			p.mu.Unlock()
			p.nudge()
		})
	}
}

// Mark asks for slugs to be published.
func (p *Publisher) Mark(slugs ...string) {
	p.mu.Lock()
	for _, s := range slugs {
		p.dirty[s] = true
	}
	p.mu.Unlock()
	p.nudge()
}

func (p *Publisher) nudge() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Settled reports whether every committed change is published: nothing
// pending, dirty or being published, every change in the feed, and a full
// reconcile done. The
// collector waits for it, so that blobs a publish is about to drop are
// spared (Retention) before it looks at them.
func (p *Publisher) Settled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reconciled && !p.needFull && !p.busy && len(p.pending) == 0 && len(p.dirty) == 0 && len(p.due) == 0
}

// Run publishes until ctx ends: what is marked, at once; every site at
// start and every ReconcileEvery; failures again with backoff (1 s
// doubling to 1 min).
func (p *Publisher) Run(ctx context.Context) {
	backoff := time.Second
	next := time.Now()
	for {
		var err error
		if !time.Now().Before(next) {
			p.mu.Lock()
			p.needFull = true
			p.mu.Unlock()
			next = time.Now().Add(p.cfg.ReconcileEvery)
		}
		if p.fullDue() {
			err = p.Reconcile(ctx)
		} else {
			err = p.Flush(ctx)
		}
		wait := time.Until(next)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Error("publish sites to the store", "error", err, "retry_in", backoff)
			wait = min(wait, backoff)
			backoff = min(2*backoff, time.Minute)
		} else {
			backoff = time.Second
		}
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-p.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (p *Publisher) fullDue() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.needFull
}

// Flush publishes the dirty slugs whose changes have committed, and adds
// what they changed to the feed (every feedBatch slugs and at the end); a
// slug that fails stays dirty, a change not yet in the feed stays due. It
// returns the first error.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	if p.busy {
		p.mu.Unlock()
		return nil
	}
	var todo []string
	for s := range p.dirty {
		if p.pending[s] == 0 {
			todo = append(todo, s)
			delete(p.dirty, s)
		}
	}
	p.busy = true
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.busy = false; p.mu.Unlock() }()

	var first error
	for i, slug := range todo {
		if err := p.publishSlug(ctx, slug); err != nil {
			if first == nil {
				first = fmt.Errorf("publish %s: %w", slug, err)
			}
			p.Mark(slug)
			if ctx.Err() != nil {
				p.Mark(todo[i:]...)
				return first
			}
		}
		if (i+1)%feedBatch == 0 && i+1 < len(todo) {
			if err := p.syncFeed(ctx); err != nil && first == nil {
				first = err
			}
		}
	}
	if err := p.syncFeed(ctx); err != nil && first == nil {
		first = err
	}
	return first
}

// note keeps a change for the feed; the document it names is written.
func (p *Publisher) note(c Change) {
	p.mu.Lock()
	p.due = append(p.due, c)
	p.mu.Unlock()
}

// syncFeed adds the due changes to the feed: a conditional write on the
// ETag this publisher last wrote or read (If-None-Match: * for a new
// feed), so that another writer's changes are never overwritten: a lost
// race reads the feed again and adds to it.
func (p *Publisher) syncFeed(ctx context.Context) error {
	p.feedMu.Lock()
	defer p.feedMu.Unlock()
	p.mu.Lock()
	due := slices.Clone(p.due)
	reset := p.resetFeed
	p.mu.Unlock()
	if len(due) == 0 && !reset {
		return nil
	}
	for range maxConflicts {
		if p.feed == nil {
			if err := p.readFeed(ctx); err != nil {
				return err
			}
		}
		f := &Feed{Epoch: p.feed.Epoch, Seq: p.feed.Seq, Floor: p.feed.Floor, Changes: slices.Clone(p.feed.Changes)}
		if reset {
			f.Reset()
		}
		f.Add(p.cfg.FeedEntries, due...)
		data, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("encode the change feed: %w", err)
		}
		cond := s3store.Condition{IfMatch: p.feedETag}
		if p.feedETag == "" {
			cond = s3store.Condition{IfNoneMatch: true}
		}
		etag, err := p.cfg.Objects.PutObject(ctx, FeedKey, data, cond)
		if errors.Is(err, s3store.ErrPrecondition) {
			p.feed = nil // another writer: read again
			continue
		}
		if err != nil {
			p.feed = nil
			return fmt.Errorf("write the change feed: %w", err)
		}
		p.feed, p.feedETag = f, etag
		if p.cfg.Changes != nil {
			p.cfg.Changes.Set(Position{Epoch: f.Epoch, Seq: f.Seq})
		}
		p.mu.Lock()
		p.due = p.due[len(due):]
		if reset {
			p.resetFeed = false
		}
		p.mu.Unlock()
		return nil
	}
	return fmt.Errorf("write the change feed: it kept changing under %d tries", maxConflicts)
}

// readFeed reads the feed into p.feed; a missing or unreadable one is
// replaced by a new feed (another epoch: replicas list again).
func (p *Publisher) readFeed(ctx context.Context) error {
	data, etag, err := p.cfg.Objects.GetObject(ctx, FeedKey)
	if errors.Is(err, s3store.ErrNotFound) {
		p.feed, p.feedETag = NewFeed(), ""
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the change feed: %w", err)
	}
	f, err := ParseFeed(data)
	if err != nil {
		p.log.Warn("replace an unreadable change feed", "error", err)
		f = NewFeed()
	}
	p.feed, p.feedETag = f, etag
	return nil
}

// Reconcile publishes every site, then removes the documents of hosts
// that no site answers on.
func (p *Publisher) Reconcile(ctx context.Context) error {
	slugs, err := p.cfg.Slugs()
	if err != nil {
		return fmt.Errorf("list sites: %w", err)
	}
	p.Mark(slugs...)
	if err := p.Flush(ctx); err != nil {
		return err
	}
	var orphans []string
	err = p.cfg.Objects.ListObjects(ctx, SitesPrefix, func(o s3store.ObjectInfo) error {
		if host, ok := HostOfKey(o.Key); ok {
			orphans = append(orphans, host)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, host := range orphans {
		if err := p.removeIfOrphan(ctx, host); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.reconciled, p.needFull = true, false
	p.mu.Unlock()
	return nil
}

// removeIfOrphan removes host's document unless its site still answers
// on host.
func (p *Publisher) removeIfOrphan(ctx context.Context, host string) error {
	old, _, err := p.get(ctx, host)
	if err != nil || old == nil {
		return err
	}
	var s struct{ Slug string }
	_ = json.Unmarshal(old.Site, &s)
	site, err := p.cfg.Load(s.Slug)
	if err != nil && !errors.Is(err, sites.ErrNotFound) {
		return err
	}
	if err == nil {
		hosts, previews, err := p.hosts(site)
		if err != nil {
			return err
		}
		if slices.Contains(hosts, host) {
			return nil
		}
		if _, ok := previews[host]; ok {
			return nil
		}
	}
	return p.drop(ctx, host, "", old)
}
