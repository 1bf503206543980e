package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/store"
)

// hits is a Recorder that keeps what it is given.
type hits struct {
	mu  sync.Mutex
	got []analytics.Hit
}

func (h *hits) Record(hit analytics.Hit) {
	h.mu.Lock()
	h.got = append(h.got, hit)
	h.mu.Unlock()
}

// recordingServer serves files as the site "demo" (id "d1", or offline)
// with rec as its Recorder.
func recordingServer(t testing.TB, files []sites.File, status string, rec Recorder) *Server {
	t.Helper()
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, blobs, err := sites.DeployedFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for h, data := range blobs {
		if err := blobStore.Put(context.Background(), h, data); err != nil {
			t.Fatal(err)
		}
	}
	site := sites.Site{ID: "d1", Slug: "demo", Status: status, Files: m}
	load := func(slug string) (*sites.Site, error) {
		if slug != "demo" {
			return nil, sites.ErrNotFound
		}
		cp := site
		return &cp, nil
	}
	var opts ServerOptions
	if rec != nil {
		opts.Recorder = rec
		opts.ClientIP = func(*http.Request) string { return "203.0.113.7" }
	}
	return NewServer(load, blobStore, opts)
}

func TestServeSiteRecords(t *testing.T) {
	files := []sites.File{
		{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)},
		{Path: "app.js", ContentType: "text/javascript", Data: []byte("console.log(1)")},
	}
	scenarios := []struct {
		name, method, slug, path string
		status                   string // the site's; default active
		want                     *analytics.Hit
	}{
		{name: "page", method: "GET", slug: "demo", path: "/",
			want: &analytics.Hit{Status: 200, Bytes: int64(len(pageHTML)), Page: true}},
		{name: "asset", method: "GET", slug: "demo", path: "/app.js",
			want: &analytics.Hit{Status: 200, Bytes: 14}},
		{name: "head sends no bytes", method: "HEAD", slug: "demo", path: "/",
			want: &analytics.Hit{Status: 200, Page: true}},
		{name: "404", method: "GET", slug: "demo", path: "/nope",
			want: &analytics.Hit{Status: 404, Bytes: int64(len(defaultNotFound)), Page: true}},
		{name: "redirect", method: "GET", slug: "demo", path: "/index.html",
			want: &analytics.Hit{Status: 308}},
		{name: "unknown site is not counted", method: "GET", slug: "other", path: "/"},
		{name: "offline site is not counted", method: "GET", slug: "demo", path: "/", status: "disabled"},
		{name: "other methods are not counted", method: "POST", slug: "demo", path: "/"},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			status := s.status
			if status == "" {
				status = sites.StatusActive
			}
			rec := &hits{}
			srv := recordingServer(t, files, status, rec)
			req := httptest.NewRequest(s.method, "http://demo.sites.test"+s.path, nil)
			req.Header.Set("User-Agent", "Mozilla/5.0 test")
			req.Header.Set("Referer", "https://example.com/x")
			srv.ServeSite(httptest.NewRecorder(), req, s.slug)
			if s.want == nil {
				if len(rec.got) != 0 {
					t.Fatalf("recorded %+v", rec.got)
				}
				return
			}
			if len(rec.got) != 1 {
				t.Fatalf("recorded %d hits, want 1", len(rec.got))
			}
			want := *s.want
			want.Site, want.Host, want.Path = "d1", "demo.sites.test", s.path
			want.IP, want.UserAgent, want.Referer = "203.0.113.7", "Mozilla/5.0 test", "https://example.com/x"
			if rec.got[0] != want {
				t.Errorf("got  %+v\nwant %+v", rec.got[0], want)
			}
		})
	}
}

// BenchmarkServeSiteAnalytics compares, in one run, the hot path of
// BenchmarkServeSite with counting off and on (an analytics.Aggregator).
func BenchmarkServeSiteAnalytics(b *testing.B) {
	files := []sites.File{{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)}}
	for _, bc := range []struct {
		name string
		rec  Recorder
	}{{"off", nil}, {"on", analytics.New()}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := recordingServer(b, files, sites.StatusActive, bc.rec)
			req := httptest.NewRequest(http.MethodGet, "http://demo.sites.test/", nil)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36")
			w := &discardWriter{h: http.Header{}}
			srv.ServeSite(w, req, "demo")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				srv.ServeSite(w, req, "demo")
			}
		})
	}
}
