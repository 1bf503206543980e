package serve

import (
	"sync"
	"time"
)

// siteCache maps slugs to loaded sites, within a byte budget (each site's
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
	return &siteCache{budget: budget, pending: map[string]pendingChange{}, sites: map[string]*site{}}
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
// change pending (at now), evicting arbitrary entries until it fits. A
// site larger than the whole budget is kept alone, every other entry
// evicted: the limits allow such sites (20,000 files with long paths),
// and loading one again for every request would cost far more than its
// memory. The next site stored evicts it. (A site's compiled rules are
// not counted here: they are in the rule cache, see ruleCache.)
func (c *siteCache) put(slug string, s *site, gen uint64, now time.Time) {
	cost := s.cost()
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.pending[slug]; ok {
		if now.Sub(p.since) < abandonedChangeAfter {
			return
		}
		delete(c.pending, slug) // abandoned: its transaction is over
	}
	if gen != c.gen {
		return
	}
	c.drop(slug)
	for k, v := range c.sites {
		if c.used+cost <= c.budget {
			break
		}
		c.used -= v.cost()
		delete(c.sites, k)
	}
	c.sites[slug] = s
	c.used += cost
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
		c.drop(slug)
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
		c.drop(slug)
	}
}

// drop removes slug's entry; c.mu must be held.
func (c *siteCache) drop(slug string) {
	if old, ok := c.sites[slug]; ok {
		c.used -= old.cost()
		delete(c.sites, slug)
	}
}
