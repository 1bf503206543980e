package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"sitedrop/sites"
)

// discardWriter is a ResponseWriter that keeps only the status, so the
// benchmark measures the server's own work.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }

// BenchmarkServeSite is the hot path of one site request: host split
// aside, from slug to written body, for a cached 7 KB page sent as its
// brotli variant.
func BenchmarkServeSite(b *testing.B) {
	srv, _ := deployedServer(b, []sites.File{{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)}})
	req := httptest.NewRequest(http.MethodGet, "http://demo.sites.test/", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	w := &discardWriter{h: http.Header{}}
	srv.ServeSite(w, req, "demo") // warm the caches
	if w.status != http.StatusOK || w.h.Get("Content-Encoding") != sites.EncodingBrotli {
		b.Fatalf("answered %d %q, want 200 br", w.status, w.h.Get("Content-Encoding"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		srv.ServeSite(w, req, "demo")
	}
}
