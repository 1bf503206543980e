package serve

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/rules"
)

// TestRuleCacheEviction: with no room left, the least recently used
// rule set is evicted (its entry no longer holds its rules), but never
// one used within keep: then the new set is compiled for its load and
// not kept, and compiled again when asked again.
func TestRuleCacheEviction(t *testing.T) {
	c := newRuleCache(300, 30*time.Second, 1)
	compiles := map[string]int{}
	compile := func(_ context.Context, k ruleKey) (*siteRules, error) {
		compiles[k.redirects]++
		return &siteRules{bytes: 100}, nil
	}
	t0 := time.Unix(1_000_000, 0)
	load := func(name string, at time.Duration) *ruleEntry {
		t.Helper()
		r, e, err := c.load(context.Background(), ruleKey{redirects: name}, t0.Add(at), compile)
		if err != nil || r == nil || e == nil || e.key.redirects != name {
			t.Fatalf("load %s: %v %v %v", name, r, e, err)
		}
		return e
	}
	a, b, cc := load("a", 0), load("b", time.Second), load("c", 2*time.Second)
	if d := load("d", 10*time.Second); d.rules.Load() != nil {
		t.Error("a fourth set was kept while the three others were used within keep")
	}
	load("d", 11*time.Second)
	if compiles["d"] != 2 || a.rules.Load() == nil || b.rules.Load() == nil || cc.rules.Load() == nil {
		t.Errorf("d compiled %d times (want 2, never kept); a, b, c kept: %v %v %v",
			compiles["d"], a.rules.Load() != nil, b.rules.Load() != nil, cc.rules.Load() != nil)
	}
	load("a", 60*time.Second) // a used again: b is now the least recently used
	d := load("d", 61*time.Second)
	if d.rules.Load() == nil || b.rules.Load() != nil || a.rules.Load() == nil || cc.rules.Load() == nil {
		t.Errorf("kept d %v; b evicted %v, a and c kept %v %v", d.rules.Load() != nil,
			b.rules.Load() == nil, a.rules.Load() != nil, cc.rules.Load() != nil)
	}
	for name, want := range map[string]int{"a": 1, "b": 1, "c": 1, "d": 3} {
		if compiles[name] != want {
			t.Errorf("%s compiled %d times, want %d", name, compiles[name], want)
		}
	}
	if c.used != 300 || len(c.entries) != 3 || len(c.lru) != 3 {
		t.Errorf("used %d bytes, %d entries, %d in the heap; want 300, 3, 3", c.used, len(c.entries), len(c.lru))
	}
}

// TestServeRulesAfterEviction: a site still in the site cache whose rule
// set the rule cache evicted gets it back on its next request, compiled
// once more, and the rules apply throughout; a set the rule cache cannot
// keep (every other set used within keep) still applies to its requests.
func TestServeRulesAfterEviction(t *testing.T) {
	sets := map[string]string{}
	files := map[string]map[string]string{}
	for _, slug := range []string{"one", "two", "three"} {
		sets[slug] = placeholderRules(10_000, slug) // about 3 MB each: two fit the smallest budget
		files[slug] = map[string]string{"index.html": "<p>" + slug, rules.RedirectsFile: sets[slug]}
	}
	all, counting := ruleSites(t, files)
	srv := NewServer(func(slug string) (*sites.Site, error) {
		cp := *all[slug]
		return &cp, nil
	}, counting, ServerOptions{RuleCacheBytes: 1})
	if srv.ruleSets.budget != maxRuleSetBytes {
		t.Fatalf("rule cache budget %d, want the floor %d", srv.ruleSets.budget, maxRuleSetBytes)
	}
	clock := time.Unix(1_000_000, 0)
	srv.now = func() time.Time { return clock }
	get := func(slug string) {
		t.Helper()
		if code := serveSlug(srv, slug, fmt.Sprintf("/p/q/r/%s7", slug)); code != 301 {
			t.Fatalf("%s: %d, want the rule's 301", slug, code)
		}
	}
	want := func(step string, one, two, three int) {
		t.Helper()
		if a, b, c := counting.compiles(sets["one"]), counting.compiles(sets["two"]), counting.compiles(sets["three"]); a != one || b != two || c != three {
			t.Errorf("%s: compiled %d, %d, %d times; want %d, %d, %d", step, a, b, c, one, two, three)
		}
	}
	get("one")
	get("two")
	clock = clock.Add(time.Second)
	get("three")
	get("three")
	want("three not kept while one and two are recent", 1, 1, 2)
	clock = clock.Add(time.Minute)
	get("two")
	get("three") // one is the least recently used: evicted for three
	get("three")
	want("three kept in place of one", 1, 1, 3)
	clock = clock.Add(time.Minute)
	get("three")
	get("one") // still in the site cache, its rules evicted: back in place of two
	get("one")
	want("one back in place of two", 2, 1, 3)
	if st, _ := srv.cache.get("one"); st == nil || st.rules.Load().rules.Load() == nil {
		t.Error("site one does not hold its rules again")
	}
}

// TestRuleCacheCompilesOneAtATime: rule sets that are not cached are
// compiled at most slots at a time, however many different sets are
// asked for together (so thrashing past the rule cache's budget holds
// at most that many cores), and each is handed to its caller.
func TestRuleCacheCompilesOneAtATime(t *testing.T) {
	c := newRuleCache(1<<20, time.Second, 1)
	var running, most atomic.Int32
	compile := func(_ context.Context, k ruleKey) (*siteRules, error) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return &siteRules{bytes: 1}, nil
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if r, _, err := c.load(context.Background(), ruleKey{redirects: fmt.Sprint(i)}, time.Now(), compile); err != nil || r == nil {
				t.Errorf("load %d: %v %v", i, r, err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d compiles ran at once, want 1", most.Load())
	}
}
