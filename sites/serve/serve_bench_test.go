package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/rules"
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

// BenchmarkServeSiteRules compares, in one run, serving a page that no
// rule matches on a site without rules and on the same site with the
// shape of Netlify's 45,000-line _redirects fixture ("/base/some-N
// /base/another-N") and a small _headers. Target: the ruled site at 0.9x
// the plain one's speed or better.
func BenchmarkServeSiteRules(b *testing.B) {
	var redirects strings.Builder
	for i := range 45000 {
		fmt.Fprintf(&redirects, "/base/some-%d /base/another-%d\n", i, i)
	}
	page := sites.File{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)}
	for _, bc := range []struct {
		name  string
		files []sites.File
	}{
		{"none", []sites.File{page}},
		{"netlify-45k-redirects", []sites.File{page, {Path: "_redirects", ContentType: "text/plain", Data: []byte(redirects.String())}}},
		{"45k-redirects+headers", []sites.File{page,
			{Path: "_redirects", ContentType: "text/plain", Data: []byte(redirects.String())},
			{Path: "_headers", ContentType: "text/plain", Data: []byte("/*\n  X-Frame-Options: DENY\n/assets/*\n  Cache-Control: public, max-age=600\n")}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, _ := deployedServer(b, bc.files)
			req := httptest.NewRequest(http.MethodGet, "http://demo.sites.test/", nil)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			w := &discardWriter{h: http.Header{}}
			srv.ServeSite(w, req, "demo") // warm the caches
			if w.status != http.StatusOK {
				b.Fatalf("answered %d", w.status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				srv.ServeSite(w, req, "demo")
			}
		})
	}
}

// BenchmarkServeSiteGate is the hot path of a protected site's visitor
// who passed the gate: the cookie checked, then the page served private.
func BenchmarkServeSiteGate(b *testing.B) {
	p := sites.Protection{Link: true, Secret: "secret-of-site-a"}
	site := &sites.Site{ID: "site-a", Slug: "demo", Status: sites.StatusActive, Protection: &p}
	srv, _ := newTestServer(b, site, map[string][2]string{"index.html": {htmlType, pageHTML}})
	req := httptest.NewRequest(http.MethodGet, "http://demo.sites.test/", nil)
	req.Header.Set("Cookie", "theme=dark; "+validCookie(srv, site))
	w := &discardWriter{h: http.Header{}}
	srv.ServeSite(w, req, "demo") // warm the caches
	if w.status != http.StatusOK || w.h.Get("Cache-Control") != "private, no-cache" {
		b.Fatalf("answered %d %q, want 200 private", w.status, w.h.Get("Cache-Control"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		srv.ServeSite(w, req, "demo")
	}
}

// BenchmarkCompileRules is what a rule set costs to read and compile when
// the rule cache does not hold it, at the largest plan's limits (20,000
// rules, 2 MiB for both files): 20,000 rules that each start with a
// placeholder (none indexed by its first segment), 20,000 rules filling
// 2 MiB, a _headers of 1,000 blocks filling 2 MiB, and the files of
// 2 MiB that cost the most per byte: a _headers whose blocks give each of
// 64 names on 3,000 lines (joined up to MaxHeaderValueBytes), one whose
// lines past a block's 64 names are not applied, and a _redirects of
// short lines that are not rules. Besides the time, it reports the CPU
// time of the whole process per compile (cpu-ms/op, the garbage
// collector's included), which a busy machine does not inflate as it
// does the time.
func BenchmarkCompileRules(b *testing.B) {
	limit := sites.MaxRuleLimit()
	var long, headers strings.Builder
	for i := range limit.Rules {
		line := fmt.Sprintf("/docs/v%d/:page /guide/%d/:page 301", i, i)
		fmt.Fprintf(&long, "%s%s\n", line, strings.Repeat(" ", int(limit.Bytes)/limit.Rules-len(line)-1))
	}
	for i := range 1000 {
		fmt.Fprintf(&headers, "/section-%d/*\n", i)
		for j := 0; headers.Len() < (i+1)*int(limit.Bytes)/1000-40 && j < 64; j++ {
			fmt.Fprintf(&headers, "  X-Header-%d: value-%d-%d\n", j, i, j)
		}
	}
	var joined, past64, bad strings.Builder
	for i := 0; joined.Len() < int(limit.Bytes)-64; i++ {
		if i%(64*3000) == 0 {
			fmt.Fprintf(&joined, "/joined-%d/*\n", i)
		}
		fmt.Fprintf(&joined, "X-%d:v\n", i/3000%64)
	}
	past64.WriteString("/*\n")
	for i := 0; past64.Len() < int(limit.Bytes)-64; i++ {
		fmt.Fprintf(&past64, "X-%d:v\n", i)
	}
	bad.WriteString("/ok /x\n")
	for bad.Len() < int(limit.Bytes)-64 {
		bad.WriteString("/:x- /b\n")
	}
	for _, bc := range []struct{ name, file, content string }{
		{"20k-placeholder-redirects", rules.RedirectsFile, placeholderRules(limit.Rules, "x")},
		{"20k-redirects-2MiB", rules.RedirectsFile, long.String()},
		{"1k-header-blocks-2MiB", rules.HeadersFile, headers.String()},
		{"headers-joined-2MiB", rules.HeadersFile, joined.String()},
		{"headers-past-64-names-2MiB", rules.HeadersFile, past64.String()},
		{"bad-redirect-lines-2MiB", rules.RedirectsFile, bad.String()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			all, counting := ruleSites(b, map[string]map[string]string{"demo": {bc.file: bc.content}})
			key, _ := ruleKeyOf(all["demo"].Files)
			cpu0, cpuOK := processCPU()
			for b.Loop() {
				r, err := compileRules(context.Background(), counting, key)
				if err != nil || r.bytes == 0 {
					b.Fatalf("%v, %d bytes", err, r.bytes)
				}
			}
			if cpu1, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			}
			b.ReportMetric(float64(len(bc.content)), "file-bytes") // after the loop, which clears metrics
		})
	}
}
