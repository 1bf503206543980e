package replica

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/store/s3store/s3test"
)

// countingProxy stands between a store client and versitygw and counts
// the HTTP requests that reach the server, by kind.
type countingProxy struct {
	url string
	mu  sync.Mutex
	// by counts requests: "GET feed 304", "GET feed 200", "LIST",
	// "GET site", "GET blob", "PUT", ...
	by    map[string]int
	total atomic.Int64
}

func startCountingProxy(t testing.TB, endpoint string) *countingProxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{by: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		p.count(resp.Request, resp.StatusCode)
		return nil
	}
	ts := httptest.NewServer(rp)
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}

func (p *countingProxy) count(r *http.Request, status int) {
	kind := r.Method
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
		kind = "LIST"
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+publish.FeedKey):
		kind = fmt.Sprintf("GET feed %d", status)
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/"+publish.SitesPrefix):
		kind = "GET site"
	case r.Method == http.MethodGet:
		kind = "GET blob"
	}
	p.mu.Lock()
	p.by[kind]++
	p.mu.Unlock()
	p.total.Add(1)
}

// take returns the counts since the last take, and starts again.
func (p *countingProxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.by
	p.by = map[string]int{}
	p.total.Store(0)
	return got
}

// openThrough opens a store on a new bucket of srv whose requests go
// through the proxy p (nil: straight to the server).
func openThrough(t testing.TB, srv *s3test.Server, bucket string, p *countingProxy) *s3store.Store {
	t.Helper()
	loc, err := s3store.ParseURL(srv.URL(bucket, "sd"))
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		loc.Endpoint = p.url
	}
	s, err := s3store.Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testSites are the deployments a test primary publishes: slug → the
// page it serves (absent: deleted), its bytes stored as a blob.
type testSites struct {
	store *s3store.Store
	mu    sync.Mutex
	pages map[string]string
	blobs map[string]string // page → hash
}

func newTestSites(s *s3store.Store) *testSites {
	return &testSites{store: s, pages: map[string]string{}, blobs: map[string]string{}}
}

// set makes slug serve page ("" deletes it), storing the page's blob.
func (ts *testSites) set(t testing.TB, slug, page string) {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if page == "" {
		delete(ts.pages, slug)
		return
	}
	if _, ok := ts.blobs[page]; !ok {
		h := store.HashBytes([]byte(page))
		if err := ts.store.Put(context.Background(), h, []byte(page)); err != nil {
			t.Fatal(err)
		}
		ts.blobs[page] = h
	}
	ts.pages[slug] = page
}

// publisher is a Publisher of ts to its store (feed bounded to entries).
func (ts *testSites) publisher(entries int) *publish.Publisher {
	return ts.publisherTelling(entries, nil)
}

// publisherTelling is publisher, which tells changes (nil: none) where
// the feed stands after each write, as the primary does.
func (ts *testSites) publisherTelling(entries int, changes *publish.Changes) *publish.Publisher {
	return publish.New(publish.Config{
		Objects: ts.store, FeedEntries: entries, Changes: changes,
		SiteHost: func(slug string) string { return slug + ".sites.test" },
		Load: func(slug string) (*sites.Site, error) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			page, ok := ts.pages[slug]
			if !ok {
				return nil, fmt.Errorf("%s: %w", slug, sites.ErrNotFound)
			}
			return &sites.Site{ID: "id-" + slug, Slug: slug, Status: sites.StatusActive, VersionID: ts.blobs[page],
				Files: sites.Manifest{"index.html": {Hash: ts.blobs[page], Size: int64(len(page)), Type: "text/html; charset=utf-8"}}}, nil
		},
		Slugs: func() ([]string, error) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			var slugs []string
			for s := range ts.pages {
				slugs = append(slugs, s)
			}
			return slugs, nil
		},
	})
}

// page is what r serves at host's "/": its status and body.
func page(r *Replica, host string) (int, string) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = host
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(body)
}
