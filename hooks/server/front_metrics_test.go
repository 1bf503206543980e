package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/serve"
	"sitedrop/sites/store"
)

// TestFrontWrapMeasures: with Metrics, the listeners' handler counts
// every answer by the part that gave it: a site, a custom domain, the
// web host (the router), or a refused host.
func TestFrontWrapMeasures(t *testing.T) {
	m := metrics.New()
	f := &Front{
		Hosts: sites.NewHostSplit("web.test", "sites.test"),
		Sites: slugServer{},
		CustomDomain: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Host != "shop.custom.test" {
				return false
			}
			io.WriteString(w, "custom")
			return true
		},
		Logger:  slog.New(slog.DiscardHandler),
		Metrics: m,
	}
	h := f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "router", http.StatusNotFound)
	}))
	for _, host := range []string{"alice.sites.test", "alice.sites.test", "shop.custom.test", "web.test", "evil.example", "bad..host"} {
		req := httptest.NewRequest(http.MethodGet, "http://placeholder/", nil)
		req.Host = host
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "sitedrop_http_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			if v := s.GetCounter().GetValue(); v != 0 {
				got[s.GetLabel()[0].GetValue()+"/"+s.GetLabel()[1].GetValue()] = v
			}
		}
	}
	want := map[string]float64{"site/2xx": 2, "custom_domain/2xx": 1, "web/4xx": 1, "unknown/4xx": 2}
	if !maps.Equal(got, want) {
		t.Errorf("requests by host_class/status_class: %v, want %v", got, want)
	}
}

// benchSite is BenchmarkServeSite's page (the size of sites/serve's).
var benchSite = "<!doctype html><title>demo</title>" + strings.Repeat("<p>Lorem ipsum dolor sit amet.</p>\n", 200)

// BenchmarkServeSiteMetrics is sites/serve's BenchmarkServeSite (a
// cached page, sent as its brotli variant) through the front door, with
// metrics off and on: on, each answer is measured (Front.Metrics) and
// its content cache lookup counted (serve.CacheCounter).
func BenchmarkServeSiteMetrics(b *testing.B) {
	blobs, err := store.NewFSStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	man, data, err := sites.DeployedFiles(context.Background(), []sites.File{{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte(benchSite)}})
	if err != nil {
		b.Fatal(err)
	}
	for h, d := range data {
		if err := blobs.Put(context.Background(), h, d); err != nil {
			b.Fatal(err)
		}
	}
	site := sites.Site{Slug: "demo", Status: sites.StatusActive, Files: man}
	load := func(string) (*sites.Site, error) { cp := site; return &cp, nil }
	for _, on := range []bool{false, true} {
		name := "off"
		var m *metrics.Metrics
		opts := serve.ServerOptions{}
		if on {
			name, m = "on", metrics.New()
			opts.CacheCounter = m
		}
		b.Run(name, func(b *testing.B) {
			f := &Front{Hosts: sites.NewHostSplit("web.test", "sites.test"), Sites: serve.NewServer(load, blobs, opts),
				Logger: slog.New(slog.DiscardHandler), Metrics: m}
			h := f.Wrap(http.NotFoundHandler())
			req := httptest.NewRequest(http.MethodGet, "http://demo.sites.test/", nil)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, req) // warm the caches
			if w.status != http.StatusOK || w.h.Get("Content-Encoding") != sites.EncodingBrotli {
				b.Fatalf("answered %d %q, want 200 br", w.status, w.h.Get("Content-Encoding"))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }

// TestFrontHTTP1Measures: the HTTP/1.1 server of site hosts (fast
// answers and the general path) counts its answers as Wrap does for
// the same requests: host class, status class, body bytes.
func TestFrontHTTP1Measures(t *testing.T) {
	blobs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	man, data, err := sites.DeployedFiles(context.Background(), []sites.File{{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte(benchSite)}})
	if err != nil {
		t.Fatal(err)
	}
	for h, d := range data {
		if err := blobs.Put(context.Background(), h, d); err != nil {
			t.Fatal(err)
		}
	}
	site := sites.Site{ID: "s1", Slug: "demo", Status: sites.StatusActive, Files: man}
	load := func(slug string) (*sites.Site, error) {
		if slug != "demo" {
			return nil, sites.ErrNotFound
		}
		cp := site
		return &cp, nil
	}
	requests := []struct{ method, path, encoding string }{
		{"GET", "/", "gzip"}, {"GET", "/", ""}, {"HEAD", "/", ""}, {"GET", "/missing", ""}, {"GET", "/index.html", ""},
	}
	count := func(m *metrics.Metrics) map[string]float64 {
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			switch f.GetName() {
			case "sitedrop_http_requests_total", "sitedrop_http_response_bytes_total":
			default:
				continue
			}
			for _, s := range f.GetMetric() {
				v := s.GetCounter().GetValue()
				var labels []string
				for _, l := range s.GetLabel() {
					labels = append(labels, l.GetValue())
				}
				if v != 0 {
					got[f.GetName()+"/"+strings.Join(labels, "/")] = v
				}
			}
		}
		return got
	}
	newFront := func(m *metrics.Metrics) *Front {
		return &Front{Hosts: sites.NewHostSplit("web.test", "sites.test"), Sites: serve.NewServer(load, blobs),
			Logger: slog.New(slog.DiscardHandler), Metrics: m}
	}

	// through Wrap, as net/http serves it
	wm := metrics.New()
	h := newFront(wm).Wrap(http.NotFoundHandler())
	for _, rq := range requests {
		req := httptest.NewRequest(rq.method, "http://demo.sites.test"+rq.path, nil)
		if rq.encoding != "" {
			req.Header.Set("Accept-Encoding", rq.encoding)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	want := count(wm)

	// through HTTP1, on one connection
	hm := metrics.New()
	h1 := newFront(hm).HTTP1(0, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			h1.ServeConn(c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, rq := range requests {
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: demo.sites.test\r\n", rq.method, rq.path)
		if rq.encoding != "" {
			fmt.Fprintf(c, "Accept-Encoding: %s\r\n", rq.encoding)
		}
		io.WriteString(c, "\r\n")
		res, err := http.ReadResponse(br, &http.Request{Method: rq.method})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if got := count(hm); !maps.Equal(got, want) {
		t.Errorf("HTTP1 counted %v, Wrap %v", got, want)
	}
	if len(want) < 3 {
		t.Fatalf("Wrap counted only %v", want)
	}
}
