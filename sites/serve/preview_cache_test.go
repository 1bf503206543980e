package serve

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"sitedrop/sites"
)

// previewLoader serves the deployment "demo": its live version and its
// previews, v<N>--demo and the alias staging--demo, whose targets a test
// moves (the "commit").
type previewLoader struct {
	mu      sync.Mutex
	live    string
	staging string
	loads   int
}

func (l *previewLoader) load(key string) (*sites.Site, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loads++
	site := &sites.Site{ID: "d1", Slug: "demo", Status: sites.StatusActive, Files: sites.Manifest{}}
	switch key {
	case "demo":
		site.VersionID = l.live
	case "v1--demo", "v2--demo":
		site.VersionID, site.Preview = key[:2], key[:2]
	case "staging--demo":
		site.VersionID, site.Preview = l.staging, "staging"
	default:
		return nil, sites.ErrNotFound
	}
	return site, nil
}

// TestPreviewCacheKeyedByVersion: the live site and each preview have
// their own cache entry, so that one is never answered from the other's;
// a change of the site (a promote, an alias moved) forgets its previews
// with it, and a preview load that raced the change is not stored.
func TestPreviewCacheKeyedByVersion(t *testing.T) {
	l := &previewLoader{live: "v1", staging: "v1"}
	srv := NewServer(l.load, nil)
	version := func(key string) string {
		t.Helper()
		s, err := srv.site(key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return s.versionID
	}
	for range 2 {
		if v := version("demo"); v != "v1" {
			t.Fatalf("live %s", v)
		}
		if v := version("v2--demo"); v != "v2" {
			t.Fatalf("v2's preview %s", v)
		}
		if v := version("staging--demo"); v != "v1" {
			t.Fatalf("staging %s", v)
		}
	}
	if l.loads != 3 {
		t.Fatalf("%d loads for three keys read twice: not cached apart", l.loads)
	}

	// A promote of v2 that also moves the alias: the change of "demo".
	done := srv.Changing("demo")
	l.mu.Lock()
	l.live, l.staging = "v2", "v2"
	l.mu.Unlock()
	if v := version("staging--demo"); v != "v2" {
		t.Fatalf("staging during the change: %s, want the committed v2", v)
	}
	if _, ok := srv.cache.get("staging--demo"); ok {
		t.Fatal("a preview was cached while its site's change is pending")
	}
	done()
	for _, c := range [][2]string{{"demo", "v2"}, {"v2--demo", "v2"}, {"v1--demo", "v1"}, {"staging--demo", "v2"}} {
		if v := version(c[0]); v != c[1] {
			t.Errorf("%s after the promote: %s, want %s", c[0], v, c[1])
		}
	}
	if len(srv.cache.previews["demo"]) != 3 {
		t.Errorf("previews indexed: %v", srv.cache.previews)
	}
	srv.Changing("demo")()
	if len(srv.cache.sites) != 0 || len(srv.cache.previews) != 0 {
		t.Errorf("a change of the site left entries: %d sites, previews %v", len(srv.cache.sites), srv.cache.previews)
	}
}

// TestPreviewAnswersNoindex: every answer of a preview key carries
// X-Robots-Tag: noindex, the unknown preview's 404 too; the live site's
// none.
func TestPreviewAnswersNoindex(t *testing.T) {
	l := &previewLoader{live: "v1", staging: "v1"}
	srv := NewServer(l.load, nil)
	for key, want := range map[string]string{"demo": "", "v1--demo": "noindex", "v9--demo": "noindex", "staging--demo": "noindex"} {
		w := httptest.NewRecorder()
		srv.ServeSite(w, httptest.NewRequest(http.MethodGet, "http://"+key+".sites.test/", nil), key)
		if got := w.Header().Get("X-Robots-Tag"); got != want {
			t.Errorf("%s: X-Robots-Tag %q, want %q", key, got, want)
		}
	}
}
