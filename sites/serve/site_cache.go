package serve

import (
	"sync"
	"time"

	"sitedrop/sites"
)

// siteCache maps slugs (or a replica's hosts) to loaded sites, within a byte budget (each site's
// estimated memory, see site.cost). A load that started before a begin
// or end is not stored, so an invalidation is never overwritten by the
// stale result of a load running concurrently with it; nor is a load of a
// slug between begin and end (while its change commits), which may have
// read either side of the commit.
type siteCache struct {
	mu      sync.RWMutex
	budget  int64
	used    int64
	gen     uint64
	pending map[string]pendingChange // slugs begun and not yet ended
	sites   map[string]*site
	// previews are the cached preview keys ("v12--my-site") by their
	// base (see sites.PreviewBase): a change of a site is a change of
	// its previews too (its protection, status, aliases, kept versions).
	previews map[string]map[string]struct{}
}

// pendingChange counts the changes of a slug begun and not yet ended.
type pendingChange struct {
	n     int
	since time.Time // the latest begin
}

// abandonedChangeAfter is how long a change may stay pending: one whose end
// never came (its transaction panicked after the write) must not keep its
// site out of the cache until a restart. A deploy's transaction takes
// milliseconds; its blobs are written before it starts.
const abandonedChangeAfter = time.Minute

func newSiteCache(budget int64) *siteCache {
	return &siteCache{budget: budget, pending: map[string]pendingChange{}, sites: map[string]*site{},
		previews: map[string]map[string]struct{}{}}
}

func (c *siteCache) get(slug string) (*site, bool) {
	c.mu.RLock()
	s, ok := c.sites[slug]
	c.mu.RUnlock()
	return s, ok
}

func (c *siteCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put stores s unless slug was forgotten since gen was read or has a
// change pending (at now), itself or its base (a preview's site),
// evicting arbitrary entries until it fits. A
// site larger than the whole budget is kept alone, every other entry
// evicted: the limits allow such sites (20,000 files with long paths),
// and loading one again for every request would cost far more than its
// memory. The next site stored evicts it. (A site's compiled rules are
// not counted here: they are in the rule cache, see ruleCache.)
func (c *siteCache) put(slug string, s *site, gen uint64, now time.Time) {
	cost := s.cost()
	base := slug
	if isPreviewKey(slug) {
		base = sites.PreviewBase(slug)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changePending(slug, now) || (base != slug && c.changePending(base, now)) {
		return
	}
	if gen != c.gen {
		return
	}
	c.drop(slug)
	for k := range c.sites {
		if c.used+cost <= c.budget {
			break
		}
		c.drop(k)
	}
	c.sites[slug] = s
	c.used += cost
	if base != slug {
		if c.previews[base] == nil {
			c.previews[base] = map[string]struct{}{}
		}
		c.previews[base][slug] = struct{}{}
	}
}

// changePending reports whether key has a change pending at now (one
// begun over abandonedChangeAfter ago is forgotten); c.mu must be held.
func (c *siteCache) changePending(key string, now time.Time) bool {
	p, ok := c.pending[key]
	if !ok {
		return false
	}
	if now.Sub(p.since) < abandonedChangeAfter {
		return true
	}
	delete(c.pending, key) // abandoned: its transaction is over
	return false
}

// begin drops slugs and stores none of them until the matching end (or
// for abandonedChangeAfter from now).
func (c *siteCache) begin(slugs []string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, slug := range slugs {
		p := c.pending[slug]
		c.pending[slug] = pendingChange{n: p.n + 1, since: now}
		c.forget(slug)
	}
}

// end undoes one begin of slugs, dropping them again (nothing stored them
// in between) and making the loads in flight, which may have read before
// the commit, uncacheable.
func (c *siteCache) end(slugs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, slug := range slugs {
		if p, ok := c.pending[slug]; ok {
			if p.n <= 1 {
				delete(c.pending, slug)
			} else {
				c.pending[slug] = pendingChange{n: p.n - 1, since: p.since}
			}
		}
		c.forget(slug)
	}
}

// forget removes slug's entry and those of its previews; c.mu must be
// held.
func (c *siteCache) forget(slug string) {
	c.drop(slug)
	for k := range c.previews[slug] {
		c.drop(k)
	}
}

// drop removes slug's entry; c.mu must be held.
func (c *siteCache) drop(slug string) {
	if old, ok := c.sites[slug]; ok {
		c.used -= old.cost()
		delete(c.sites, slug)
		if isPreviewKey(slug) {
			base := sites.PreviewBase(slug)
			if m := c.previews[base]; m != nil {
				delete(m, slug)
				if len(m) == 0 {
					delete(c.previews, base)
				}
			}
		}
	}
}
