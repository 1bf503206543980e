package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/rules"
	"sitedrop/sites/store"
)

// countingStore counts how often each blob is opened: a site's rule files
// are read once for each time its rules are compiled.
type countingStore struct {
	store.BlobStore
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingStore) Open(ctx context.Context, hash string) (store.Blob, error) {
	c.mu.Lock()
	c.opens[hash]++
	c.mu.Unlock()
	return c.BlobStore.Open(ctx, hash)
}

// compiles is how many times the blob of content was opened.
func (c *countingStore) compiles(content string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[store.HashBytes([]byte(content))]
}

// ruleSites stores each site's files (slug → path → content) and returns
// their manifests and the counting store.
func ruleSites(t testing.TB, bySlug map[string]map[string]string) (map[string]*sites.Site, *countingStore) {
	t.Helper()
	fs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sites.Site{}
	for slug, files := range bySlug {
		st := &sites.Site{ID: slug, Slug: slug, Status: sites.StatusActive, Files: sites.Manifest{}}
		for p, content := range files {
			h := store.HashBytes([]byte(content))
			if err := fs.Put(context.Background(), h, []byte(content)); err != nil {
				t.Fatal(err)
			}
			st.Files[p] = sites.ManifestEntry{Hash: h, Size: int64(len(content)), Type: "text/plain"}
		}
		out[slug] = st
	}
	return out, &countingStore{BlobStore: fs, opens: map[string]int{}}
}

// placeholderRules is a _redirects of n rules that all start with a
// placeholder (so none is indexed by its first segment), tagged so that
// two files differ.
func placeholderRules(n int, tag string) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "/:a/:b/:c/%s%d /y/:a/:b/:c 301\n", tag, i)
	}
	return sb.String()
}

// serveSlug answers GET path on the site slug.
func serveSlug(srv *Server, slug, path string) int {
	rec := httptest.NewRecorder()
	srv.ServeSite(rec, httptest.NewRequest(http.MethodGet, "http://"+slug+".sites.test"+path, nil), slug)
	return rec.Code
}

// TestServeRulesCompiledOncePerLoad: a site's rules are compiled when it
// loads, once, however many requests arrive together while it loads, and
// never again while it stays cached.
func TestServeRulesCompiledOncePerLoad(t *testing.T) {
	redirects := placeholderRules(1000, "x")
	headers := "/*\n  X-Site: 1\n"
	all, counting := ruleSites(t, map[string]map[string]string{"demo": {
		"index.html": "<p>home", rules.RedirectsFile: redirects, rules.HeadersFile: headers,
	}})
	const together = 16
	var arrived, loads atomic.Int32
	srv := NewServer(func(slug string) (*sites.Site, error) {
		loads.Add(1)
		// the first load waits for every request to be under way
		for deadline := time.Now().Add(5 * time.Second); arrived.Load() < together && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cp := *all[slug]
		return &cp, nil
	}, counting)
	var wg sync.WaitGroup
	for range together {
		wg.Go(func() {
			arrived.Add(1)
			if code := serveSlug(srv, "demo", "/p/q/r/x7"); code != 301 {
				t.Errorf("GET: %d", code)
			}
		})
	}
	wg.Wait()
	for range 50 {
		serveSlug(srv, "demo", "/p/q/r/x8")
	}
	if n, r, h := loads.Load(), counting.compiles(redirects), counting.compiles(headers); n != 1 || r != 1 || h != 1 {
		t.Errorf("%d requests: %d loads, _redirects read %d times, _headers %d; want 1 each", together+50, n, r, h)
	}
}

// TestServeRuleHeavySitesDoNotThrash: two sites whose _redirects hold
// 100,000 placeholder rules each (stored before the plans' limits: more
// than any plan allows) used to evict each other from the site cache, so
// that every request compiled 100,000 rules again. What the server reads
// of rule files is bounded by the largest plan's limit, so both stay
// cached in the default budgets and each is compiled once.
func TestServeRuleHeavySitesDoNotThrash(t *testing.T) {
	one, two := placeholderRules(100_000, "a"), placeholderRules(100_000, "b")
	all, counting := ruleSites(t, map[string]map[string]string{
		"one": {"index.html": "<p>1", rules.RedirectsFile: one},
		"two": {"index.html": "<p>2", rules.RedirectsFile: two},
	})
	srv := NewServer(func(slug string) (*sites.Site, error) {
		cp := *all[slug]
		return &cp, nil
	}, counting)
	for range 5 {
		if serveSlug(srv, "one", "/p/q/r/a1") != 301 || serveSlug(srv, "two", "/p/q/r/b1") != 301 {
			t.Fatal("a rule within the limit did not apply")
		}
	}
	if a, b := counting.compiles(one), counting.compiles(two); a != 1 || b != 1 {
		t.Errorf("10 requests alternating between the sites compiled their rules %d and %d times, want once each", a, b)
	}
	if code := serveSlug(srv, "one", fmt.Sprintf("/p/q/r/a%d", sites.MaxRuleLimit().Rules)); code != 404 {
		t.Errorf("the rule past the largest plan's limit applied: %d", code)
	}
	st, _ := srv.cache.get("one")
	if st == nil || st.rules == nil || st.rules.Load().rules.Load() == nil {
		t.Fatal("site one or its rules are not cached")
	}
	if n, max := st.rules.Load().rules.Load().redirects.Len(), sites.MaxRuleLimit(); n != max.Rules {
		t.Fatalf("kept %v rules, want %d", n, max.Rules)
	}
}

// TestRuleCostCountsTheirBytes: the site cache charges a rule set for the
// text it keeps, not only per rule: 500 rules of 4 KiB lines hold 2 MiB.
func TestRuleCostCountsTheirBytes(t *testing.T) {
	var sb strings.Builder
	for i := range 500 {
		fmt.Fprintf(&sb, "/r%d/%s /to 301\n", i, strings.Repeat("x", 4000))
	}
	all, counting := ruleSites(t, map[string]map[string]string{"demo": {rules.RedirectsFile: sb.String()}})
	key, _ := ruleKeyOf(all["demo"].Files)
	sr, err := compileRules(context.Background(), counting, key)
	if err != nil {
		t.Fatal(err)
	}
	if sr.redirects.Len() != 500 || sr.bytes < int64(sb.Len()) {
		t.Errorf("%d rules estimated at %d bytes; their text alone is %d", sr.redirects.Len(), sr.bytes, sb.Len())
	}
}

// TestServeRulesSurviveSiteCachePressure: sites that evict each other
// from the site cache (here a budget that holds one site at a time) do
// not compile their rules again when they load again: compiled rule sets
// are kept by their files' contents, apart from the sites. Three sites
// with 10,000 rules each (two of them with the same files) alternate for
// 30 requests: each distinct rule set is compiled once.
func TestServeRulesSurviveSiteCachePressure(t *testing.T) {
	one, two := placeholderRules(10_000, "a"), placeholderRules(10_000, "b")
	headers := "/private/*\n  Basic-Auth: u:p\n"
	all, counting := ruleSites(t, map[string]map[string]string{
		"one":  {"index.html": "<p>1", rules.RedirectsFile: one, rules.HeadersFile: headers},
		"two":  {"index.html": "<p>2", rules.RedirectsFile: two},
		"copy": {"index.html": "<p>3", rules.RedirectsFile: one, rules.HeadersFile: headers},
	})
	var loads atomic.Int32
	srv := NewServer(func(slug string) (*sites.Site, error) {
		loads.Add(1)
		cp := *all[slug]
		return &cp, nil
	}, counting, ServerOptions{SiteCacheBytes: 1})
	for range 10 {
		if serveSlug(srv, "one", "/p/q/r/a1") != 301 || serveSlug(srv, "two", "/p/q/r/b1") != 301 ||
			serveSlug(srv, "copy", "/p/q/r/a2") != 301 || serveSlug(srv, "copy", "/private/x") != 401 {
			t.Fatal("a rule did not apply")
		}
	}
	if loads.Load() < 30 {
		t.Fatalf("%d site loads: the sites did not evict each other", loads.Load())
	}
	if a, b, h := counting.compiles(one), counting.compiles(two), counting.compiles(headers); a != 1 || b != 1 || h != 1 {
		t.Errorf("40 requests alternating between 3 sites that evict each other read _redirects %d and %d times, _headers %d; want once each", a, b, h)
	}
}

// TestServeRuleBytesBothFilesTogether: the largest plan's byte limit is
// for _redirects and _headers together, so the server reads no more of
// the two than that: with a _headers of 1.5 MiB (stored before the
// limits), only the first half MiB of _redirects applies. _headers is
// read first: its Basic-Auth must not be the part left out.
func TestServeRuleBytesBothFilesTogether(t *testing.T) {
	limit := sites.MaxRuleLimit().Bytes
	var headers strings.Builder
	headers.WriteString("/private/*\n  Basic-Auth: u:p\n")
	for headers.Len() < int(limit)*3/4 {
		headers.WriteString("# " + strings.Repeat("x", 97) + "\n")
	}
	var redirects strings.Builder
	n := 0
	for ; redirects.Len() < int(limit)*3/4; n++ {
		fmt.Fprintf(&redirects, "/r%d/%s /to 301\n", n, strings.Repeat("y", 100))
	}
	all, counting := ruleSites(t, map[string]map[string]string{"demo": {
		"index.html": "<p>home", rules.RedirectsFile: redirects.String(), rules.HeadersFile: headers.String(),
	}})
	srv := NewServer(func(slug string) (*sites.Site, error) {
		cp := *all[slug]
		return &cp, nil
	}, counting)
	if code := serveSlug(srv, "demo", "/private/x"); code != 401 {
		t.Errorf("the path under Basic-Auth answered %d", code)
	}
	if code := serveSlug(srv, "demo", "/r1/"+strings.Repeat("y", 100)); code != 301 {
		t.Errorf("a rule within the limit answered %d", code)
	}
	last := fmt.Sprintf("/r%d/%s", n-1, strings.Repeat("y", 100))
	if code := serveSlug(srv, "demo", last); code != 404 {
		t.Errorf("the last rule, %d bytes into _redirects after %d of _headers (limit %d together), answered %d, want 404",
			redirects.Len(), headers.Len(), limit, code)
	}
}
