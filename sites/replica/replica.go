// Package replica serves sites without the database: from the documents
// the primary publishes (sites/publish) and the blobs in the same S3
// store, through the same serve.Server as the primary, so rules, SPA
// fallback, 404 pages, caching headers and every check a Site carries
// answer identically.
//
// Propagation: every Poll interval (2 s) the replica reads the change
// feed (publish.FeedKey) with a conditional GET, If-None-Match its last
// ETag: when nothing changed that is a 304 and the poll's only request,
// however many sites there are. When the feed changed, the replica
// applies the changes after the last one it applied (host → the
// document's new ETag, or removed); when it cannot (its first poll, a new
// feed epoch, or changes compacted away while it was behind) it lists
// every document once (one ListObjectsV2 request per 1,000 hosts). With no
// feed in the store (a primary that writes none) it lists on every poll.
// A changed document it has cached is read again (one GET each) before
// its site is switched, whole: a response is served from the old
// prepared site or the new one, never a mix. So a change reaches every
// replica within Poll plus the time of those requests: within 5 s on a
// healthy store.
//
// Push: given the primary's address (Config.Primary, serve --replica
// --primary), a replica also holds a long poll to it
// (publish.ChangesPath, with the replica token from the store), which the
// primary answers as soon as it has written the feed: the replica then
// polls at once, so a change arrives one round trip after the primary
// wrote it, and the store is read every Fallback (15 s) only while the
// long poll is healthy. When it fails (the primary down, refusing) the
// replica polls every Poll again at once, and asks the primary again
// with backoff (1 s doubling to 30 s). When the store is unreachable
// the replica keeps serving what it has cached (documents and small
// files), logs, and polls again with backoff (up to 30 s); a site it has
// not cached answers 503. A host with no published document answers 404,
// without a request to the store.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/serve"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// Defaults of Config.
const (
	DefaultPoll            = 2 * time.Second
	DefaultFallback        = 15 * time.Second
	DefaultManifestEntries = 10_000
	DefaultManifestBytes   = 256 << 20
	maxPollBackoff         = 30 * time.Second
	storeRequestTimeout    = 10 * time.Second
)

// Config is a replica's store and cache sizes.
type Config struct {
	// Objects reads the published documents (an *s3store.Store).
	Objects publish.Objects
	// Blobs reads the content (the same store).
	Blobs store.BlobStore
	// Poll is how often the change feed is read. Default 2 s.
	Poll time.Duration
	// Primary is the primary's base URL (serve --replica --primary):
	// the replica holds a long poll to it (publish.ChangesPath) and reads
	// the feed as soon as it answers; while it does, the feed is read
	// every Fallback only, and every Poll again as soon as it fails.
	// "": the replica only polls.
	Primary string
	// Fallback is how often the feed is read while the long poll to
	// Primary is healthy. Default 15 s.
	Fallback time.Duration
	// Client makes the long polls. Default http.DefaultClient.
	Client *http.Client
	// ManifestEntries and ManifestBytes bound the cached documents.
	// Defaults 10,000 and 256 MiB.
	ManifestEntries int
	ManifestBytes   int64
	// Server sizes the site server's caches (prepared sites, small
	// files' bytes).
	Server serve.ServerOptions
	Logger *slog.Logger
}

// Replica serves the published sites; see the package comment.
type Replica struct {
	cfg    Config
	log    *slog.Logger
	server *serve.Server

	mu sync.Mutex
	// index maps every published host to its document's ETag; nil until
	// the first successful poll.
	index map[string]string
	// feed is where the index stands in the change feed.
	feed feedPos
	docs *docCache
	// fetches merges concurrent reads of one host's document.
	fetches singleflight.Group
	// synced is when Poll last succeeded (Unix nanoseconds; 0: never).
	synced atomic.Int64
	// wake asks Run for a poll now: the primary said the feed moved, or
	// its long poll failed.
	wake chan struct{}
	// following: the long poll to Primary is healthy (see Following).
	following atomic.Bool
}

// LastSync is when a poll last succeeded: the index is as current as the
// store was then. Zero before the first.
func (r *Replica) LastSync() time.Time {
	if n := r.synced.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// New returns a replica; Run (or Poll) fills its index.
func New(cfg Config) *Replica {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.ManifestEntries <= 0 {
		cfg.ManifestEntries = DefaultManifestEntries
	}
	if cfg.ManifestBytes <= 0 {
		cfg.ManifestBytes = DefaultManifestBytes
	}
	if cfg.Fallback <= 0 {
		cfg.Fallback = DefaultFallback
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Primary = strings.TrimSuffix(cfg.Primary, "/")
	r := &Replica{cfg: cfg, log: cfg.Logger, docs: newDocCache(cfg.ManifestEntries, cfg.ManifestBytes), wake: make(chan struct{}, 1)}
	r.server = serve.NewServer(r.load, cfg.Blobs, cfg.Server)
	return r
}

// Ready reports whether the replica has listed the published sites once.
func (r *Replica) Ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index != nil
}

// feedPos is the change feed as a replica last applied it.
type feedPos struct {
	etag  string // "": read it unconditionally
	epoch string
	seq   int64
}

// Run polls until ctx ends: a poll starts every Poll (a slow poll delays
// the next one no further), or with backoff while the store fails. With
// a Primary it also holds the long poll to it (follow): a poll starts as
// soon as the primary says the feed moved, and every Fallback only while
// the long poll is healthy.
func (r *Replica) Run(ctx context.Context) {
	if r.cfg.Primary != "" {
		go r.follow(ctx)
	}
	wait := time.Duration(0)
	failures := 0
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.wake:
			t.Stop()
		}
		start := time.Now()
		pctx, cancel := context.WithTimeout(ctx, storeRequestTimeout)
		err := r.Poll(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			failures++
			wait = min(r.cfg.Poll<<min(failures, 4), maxPollBackoff)
			r.log.Error("replica: poll the store; serving what is cached", "error", err, "retry_in", wait)
			continue
		}
		if failures > 0 {
			r.log.Info("replica: the store answers again")
		}
		failures, wait = 0, r.interval()-time.Since(start)
	}
}

// interval is the time between two polls: Fallback while the primary's
// long poll is healthy, Poll otherwise.
func (r *Replica) interval() time.Duration {
	if r.following.Load() {
		return r.cfg.Fallback
	}
	return r.cfg.Poll
}

// nudge asks Run for a poll now.
func (r *Replica) nudge() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Poll reads the change feed (or lists the published documents) and
// switches every changed site (see the package comment).
func (r *Replica) Poll(ctx context.Context) (err error) {
	defer func() {
		if err == nil {
			r.synced.Store(time.Now().UnixNano())
		}
	}()
	r.mu.Lock()
	pos := r.feed
	if r.index == nil {
		pos.etag = "" // not listed yet: read the feed whole
	}
	r.mu.Unlock()
	data, etag, err := r.cfg.Objects.GetObjectIfNoneMatch(ctx, publish.FeedKey, pos.etag)
	if errors.Is(err, s3store.ErrNotModified) {
		return nil
	}
	// a copy: load corrects the index in place (what this poll replaces
	// then is corrected again by the next request)
	r.mu.Lock()
	old := maps.Clone(r.index)
	r.mu.Unlock()
	var next map[string]string
	var at feedPos
	switch {
	case errors.Is(err, s3store.ErrNotFound):
		// no feed: list on every poll (at stays zero)
	case err != nil:
		return fmt.Errorf("read the change feed: %w", err)
	default:
		f, err := publish.ParseFeed(data)
		if err != nil {
			r.log.Warn("replica: an unreadable change feed; listing the sites", "error", err)
			break
		}
		at = feedPos{etag: etag, epoch: f.Epoch, seq: f.Seq}
		if changes, ok := f.Since(pos.epoch, pos.seq); ok && old != nil {
			next = maps.Clone(old)
			for _, c := range changes {
				if c.ETag == "" {
					delete(next, c.Host)
				} else {
					next[c.Host] = c.ETag
				}
			}
		}
	}
	if next == nil {
		// Read before the list (above), the feed's changes after it are
		// applied again by the next poll: the list misses none.
		if next, err = r.list(ctx); err != nil {
			return err
		}
	}
	if err := r.switchTo(ctx, old, next); err != nil {
		return err // the feed is read again next poll: the failed are retried
	}
	r.mu.Lock()
	r.feed = at
	r.mu.Unlock()
	return nil
}

// list lists the published documents: host → ETag.
func (r *Replica) list(ctx context.Context) (map[string]string, error) {
	next := map[string]string{}
	err := r.cfg.Objects.ListObjects(ctx, publish.SitesPrefix, func(o s3store.ObjectInfo) error {
		if host, ok := publish.HostOfKey(o.Key); ok {
			next[host] = o.ETag
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list published sites: %w", err)
	}
	return next, nil
}

// switchTo makes next (host → ETag) the index, old being the index it
// was computed from, and switches the changed sites: a cached document
// that changed is read first, and takes the ETag it was read with. It
// returns the first failed read (that host keeps its old document).
func (r *Replica) switchTo(ctx context.Context, old, next map[string]string) error {
	r.mu.Lock()
	var refetch []string
	var changed []string
	for h, etag := range next {
		if old[h] != etag {
			changed = append(changed, h)
			if r.docs.get(h) != nil {
				refetch = append(refetch, h)
			}
		}
	}
	for h := range old {
		if _, ok := next[h]; !ok {
			changed = append(changed, h)
		}
	}
	r.mu.Unlock()

	// Read the new documents of cached sites before switching, so that
	// no request waits on the store for them.
	fresh := map[string]*cached{}
	var firstErr error
	for _, h := range refetch {
		e, err := r.fetch(ctx, h)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if etag, ok := old[h]; ok {
				next[h] = etag // keep the old one; try again next poll
			} else {
				delete(next, h)
			}
			continue
		}
		if e == nil {
			delete(next, h) // gone since: the feed says so soon
			continue
		}
		fresh[h] = e
		next[h] = e.etag
	}

	done := r.server.Changing(changed...)
	r.mu.Lock()
	for _, h := range changed {
		if _, ok := next[h]; !ok {
			r.docs.remove(h)
			continue
		}
		if e, ok := fresh[h]; ok {
			if cur := r.docs.get(h); cur == nil || e.doc.Generation >= cur.doc.Generation {
				r.docs.put(e)
			}
		} else if cur := r.docs.get(h); cur != nil && cur.etag != next[h] && next[h] != old[h] {
			r.docs.remove(h) // read again on the next request
		}
	}
	r.index = next
	r.mu.Unlock()
	done()
	return firstErr
}

// fetch reads host's document; nil (and no error) when it is gone.
func (r *Replica) fetch(ctx context.Context, host string) (*cached, error) {
	data, etag, err := r.cfg.Objects.GetObject(ctx, publish.Key(host))
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := publish.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", host, err)
	}
	return &cached{host: host, etag: etag, doc: doc, size: int64(len(data))}, nil
}

// load is the site server's SiteLoader: host's site from the cached
// document, or read from the store. A host that is not published is not
// found; a store that fails falls back on the cached document, else the
// site is unavailable (503).
func (r *Replica) load(host string) (*sites.Site, error) {
	r.mu.Lock()
	etag, published := r.index[host]
	ready := r.index != nil
	cur := r.docs.get(host)
	r.mu.Unlock()
	switch {
	case !ready:
		return nil, serve.ErrUnavailable
	case !published:
		return nil, sites.ErrNotFound
	case cur != nil && cur.etag == etag:
		return cur.doc.Site, nil
	}
	// Concurrent first requests for a host share one read.
	v, err, _ := r.fetches.Do(host, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), storeRequestTimeout)
		defer cancel()
		return r.fetch(ctx, host)
	})
	e, _ := v.(*cached)
	if err != nil {
		if cur != nil {
			return cur.doc.Site, nil // stale beats nothing while the store fails
		}
		r.log.Error("replica: read a site document", "host", host, "error", err)
		return nil, serve.ErrUnavailable
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// What was read is the store's truth unless a poll has moved the
	// index since: correct the index (a change feed entry can name an
	// ETag a faster writer has replaced), so the next request needs no
	// read.
	moved := r.index[host] != etag
	if e == nil {
		if !moved {
			delete(r.index, host)
		}
		return nil, sites.ErrNotFound
	}
	if now := r.docs.get(host); now != nil && now.doc.Generation > e.doc.Generation {
		return now.doc.Site, nil // a stale read: keep the newer
	}
	r.docs.put(e)
	if !moved {
		r.index[host] = e.etag
	}
	return e.doc.Site, nil
}
