package server

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"testing"

	"golang.org/x/net/http2"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
)

// TestSiteH2 serves site hosts through the front door over HTTP/2: a
// site host is the site server's answer, counted as a site's; another
// host on the connection is 421, counted as unknown; a panic of the site
// server is the front door's 500.
func TestSiteH2(t *testing.T) {
	m := metrics.New()
	f := &Front{Hosts: sites.NewHostSplit("web.test", "sites.test"), Sites: slugServer{},
		Logger: slog.New(slog.DiscardHandler), Metrics: m}
	h2 := f.SiteH2(0)
	t.Cleanup(func() { h2.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go h2.ServeConn(c) // ServeConn takes any net.Conn: prior knowledge, no TLS
		}
	}()
	client := &http.Client{Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, _ string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, ln.Addr().String())
		},
	}}
	for _, tc := range []struct {
		host   string
		status int
		body   string
	}{
		{"alice.sites.test", 200, "site alice"},
		{"v2--alice.sites.test", 200, "site v2--alice"},
		{"web.test", 421, `{"error":"misdirected request: this connection serves sites only"}` + "\n"},
		{"boom.sites.test", 500, "Internal error\n"},
		{"evil.example", 421, `{"error":"misdirected request: this connection serves sites only"}` + "\n"},
	} {
		res, err := client.Get("http://" + tc.host + "/")
		if err != nil {
			t.Fatalf("%s: %v", tc.host, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || string(b) != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.host, res.StatusCode, b, tc.status, tc.body)
		}
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
	if want := map[string]float64{"site/2xx": 2, "site/5xx": 1, "unknown/4xx": 2}; !maps.Equal(got, want) {
		t.Errorf("requests by host_class/status_class: %v, want %v", got, want)
	}
}
