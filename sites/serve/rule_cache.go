package serve

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// ruleKey names a rule set by its files' contents: the content hashes of
// a version's _redirects and _headers ("" for a file it lacks). What
// compileRules makes of them depends on nothing else, so every version of
// every site with the same files shares one compiled set.
type ruleKey struct{ redirects, headers string }

// flightKey is k as a singleflight key.
func (k ruleKey) flightKey() string { return k.redirects + "\x00" + k.headers }

// ruleEntry is a rule set as a site holds it: its key, and its compiled
// rules while the rule cache keeps them (nil once evicted, or when the
// cache could not keep them: see ruleCache.load). A site keeps its entry
// and compiles nothing while rules is set; memory is counted by the
// rule cache alone.
type ruleEntry struct {
	key   ruleKey
	rules atomic.Pointer[siteRules]
	bytes int64
	// used is when the rules last served a request (Unix nanoseconds),
	// written at most once a second (see touch).
	used atomic.Int64
	// stamp is what the cache's heap orders the entry by: a past value
	// of used (stamp <= used), brought up to date lazily when the entry
	// reaches the top. Under the cache's mu.
	stamp int64
}

// touch records a use at now (Unix nanoseconds). Writing at most once a
// second keeps the hot path from writing a shared word on every request.
func (e *ruleEntry) touch(now int64) {
	if now-e.used.Load() >= int64(time.Second) {
		e.used.Store(now)
	}
}

// ruleCache holds compiled rule sets by ruleKey within a byte budget of
// its own, apart from the site cache: sites that evict each other from
// the site cache load again without compiling their rules again. When a
// set must make room, the least recently used sets are evicted, but
// never one used within keep: if the sets used that recently fill the
// budget, a new set is compiled for the requests waiting for it and not
// kept. Requests for a set that is not cached share one compile
// (singleflight by key), whichever sites they are for.
type ruleCache struct {
	budget int64
	keep   time.Duration

	mu      sync.Mutex
	used    int64
	entries map[ruleKey]*ruleEntry
	lru     entryHeap // by stamp: the least recently used on top

	compiling singleflight.Group
	// compileSlots bounds the compiles running at once: past the
	// budget, sets that cannot be kept are compiled for each load, and
	// that work holds no more than these slots' cores.
	compileSlots chan struct{}
}

// Default rule cache budget and the time a used set is protected from
// eviction. The budget holds nine rule sets at the largest plan's limit
// (each up to maxRuleSetBytes), eighteen at the free plan's. Rule sets
// are compiled on half the cores at most (see compileSlots).
const (
	defaultRuleCacheBytes = 64 << 20
	defaultRuleKeep       = 30 * time.Second
)

// defaultCompileSlots is half the cores, at least one.
func defaultCompileSlots() int { return max(runtime.GOMAXPROCS(0)/2, 1) }

// newRuleCache returns a rule cache of budget bytes that keeps a set
// used within keep and compiles at most slots sets at a time.
func newRuleCache(budget int64, keep time.Duration, slots int) *ruleCache {
	return &ruleCache{budget: budget, keep: keep, entries: map[ruleKey]*ruleEntry{},
		compileSlots: make(chan struct{}, max(slots, 1))}
}

// load returns the compiled rules of key and the entry a site should
// hold for them: the cached entry, or, when the set could not be kept, an
// entry whose rules are nil (the set serves the requests waiting for this
// load only). compile runs at most once at a time for a key, and for no
// more keys at once than there are compile slots (a load waits for one);
// it outlives a caller that goes away (the others wait for it).
func (c *ruleCache) load(ctx context.Context, key ruleKey, now time.Time,
	compile func(context.Context, ruleKey) (*siteRules, error)) (*siteRules, *ruleEntry, error) {
	if r, e := c.get(key, now); r != nil {
		return r, e, nil
	}
	type loaded struct {
		r *siteRules
		e *ruleEntry
	}
	v, err, _ := c.compiling.Do(key.flightKey(), func() (any, error) {
		if r, e := c.get(key, now); r != nil {
			return loaded{r, e}, nil // kept by a compile that just ended
		}
		c.compileSlots <- struct{}{}
		r, err := compile(context.WithoutCancel(ctx), key)
		<-c.compileSlots
		if err != nil {
			return nil, err
		}
		return loaded{r, c.put(key, r, now)}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	l := v.(loaded)
	return l.r, l.e, nil
}

// entry is key's cached entry, or a new one without rules (for a site
// to hold until its first request loads them).
func (c *ruleCache) entry(key ruleKey) *ruleEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e
	}
	return &ruleEntry{key: key}
}

// get returns key's cached rules and entry, or nil rules.
func (c *ruleCache) get(key ruleKey, now time.Time) (*siteRules, *ruleEntry) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil {
		return nil, nil
	}
	r := e.rules.Load()
	if r != nil {
		e.touch(now.UnixNano())
	}
	return r, e
}

// put keeps r under key if room can be made for it (see makeRoom), and
// returns the entry a site should hold: the kept one, or one without
// rules.
func (c *ruleCache) put(key ruleKey, r *siteRules, now time.Time) *ruleEntry {
	e := &ruleEntry{key: key, bytes: r.bytes}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.makeRoom(r.bytes, now.UnixNano()) {
		return e
	}
	e.rules.Store(r)
	e.used.Store(now.UnixNano())
	e.stamp = now.UnixNano()
	c.entries[key] = e
	heap.Push(&c.lru, e)
	c.used += e.bytes
	return e
}

// makeRoom evicts the least recently used sets until cost fits the
// budget, and reports whether it does: not when the sets left were all
// used within keep of now. c.mu must be held.
func (c *ruleCache) makeRoom(cost, now int64) bool {
	for c.used+cost > c.budget && len(c.lru) > 0 {
		e := c.lru[0]
		if used := e.used.Load(); used > e.stamp {
			e.stamp = used // used since it was ordered: order it again
			heap.Fix(&c.lru, 0)
			continue
		}
		// e.stamp is its last use, and every other entry's last use is
		// at or after its stamp, which is at or after e's: e is the
		// least recently used.
		if now-e.stamp < int64(c.keep) {
			return false
		}
		heap.Pop(&c.lru)
		delete(c.entries, e.key)
		c.used -= e.bytes
		e.rules.Store(nil) // its sites load it again when next asked
	}
	return c.used+cost <= c.budget
}

// entryHeap orders rule entries by stamp, the smallest on top.
type entryHeap []*ruleEntry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].stamp < h[j].stamp }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(*ruleEntry)) }

func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
