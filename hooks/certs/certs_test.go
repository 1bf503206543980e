package certs

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

// liveNames stands for the server's decision (sitedrop's: www.<web host>
// and live sites).
var liveNames = map[string]bool{
	"www.web.test":           true,
	"alice-site.sites.test":  true,
	"anon-site.sites.test":   true,
	"second-site.sites.test": true,
	"third-site.sites.test":  true,
}

// testManager builds a Manager for web.test and sites.test whose CA is
// never asked.
func testManager(t *testing.T, newCertsPerHour int) *Manager {
	t.Helper()
	m, err := New(Config{
		WebHost:     "web.test",
		SitesDomain: "sites.test",
		Allow: func(_ context.Context, name string) error {
			if !liveNames[name] {
				return fmt.Errorf("no certificate for %q", name)
			}
			return nil
		},
		StorageDir:      t.TempDir(),
		Logger:          slog.New(slog.DiscardHandler),
		LogOutput:       io.Discard,
		CA:              "https://127.0.0.1:1/dir", // never asked
		NewCertsPerHour: newCertsPerHour,
		HTTPPort:        80,
		HTTPSPort:       443,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// TestOnDemandBudget: new on-demand certificates are limited per hour,
// each name charged once; names whose certificate is in storage (loads,
// renewals) are not charged.
func TestOnDemandBudget(t *testing.T) {
	m := testManager(t, 2)
	ctx := context.Background()
	// alice-site's certificate is stored: loading it takes no budget.
	key := certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), "alice-site.sites.test")
	if err := m.storage.Store(ctx, key, []byte("stored")); err != nil {
		t.Fatal(err)
	}
	decide := m.sites.OnDemand.DecisionFunc
	for i, c := range []struct {
		name    string
		allowed bool
	}{
		{"anon-site.sites.test", true},
		{"anon-site.sites.test", true}, // a retry is not charged again
		{"second-site.sites.test", true},
		{"third-site.sites.test", false}, // over the budget
		{"ALICE-SITE.sites.test.", true}, // stored
		{"anon-site.sites.test", true},   // already charged this hour
		{"nosuch.sites.test", false},
	} {
		if err := decide(ctx, c.name); (err == nil) != c.allowed {
			t.Errorf("%d: decision for %q = %v, want allowed %v", i, c.name, err, c.allowed)
		}
	}
}

func TestOrderBudget(t *testing.T) {
	t0 := time.Now()
	b := newOrderBudget(2, time.Hour)
	for i, c := range []struct {
		name      string
		at        time.Duration
		ok, first bool
	}{
		{"a", 0, true, false},
		{"b", time.Minute, true, false},
		{"c", 2 * time.Minute, false, true},
		{"d", 3 * time.Minute, false, false}, // refused again, warned once
		{"a", 4 * time.Minute, true, false},
		{"c", 61 * time.Minute, true, false}, // a new window
	} {
		ok, first := b.allow(c.name, t0.Add(c.at))
		if ok != c.ok || first != c.first {
			t.Errorf("%d: allow(%q) = %v, %v; want %v, %v", i, c.name, ok, first, c.ok, c.first)
		}
	}
	if ok, _ := newOrderBudget(0, time.Hour).allow("a", t0); ok {
		t.Error("a budget of 0 allowed an order")
	}
	if ok, _ := newOrderBudget(-1, time.Hour).allow("a", t0); !ok {
		t.Error("an unlimited budget refused an order")
	}
}

// TestCertificateDispatch: the web host, however spelled, is served by
// the web config and never reaches the on-demand decision (which would
// refuse it and drop its certificate from the shared cache).
func TestCertificateDispatch(t *testing.T) {
	m := testManager(t, 20)
	var asked []string
	decide := m.sites.OnDemand.DecisionFunc
	m.sites.OnDemand.DecisionFunc = func(ctx context.Context, name string) error {
		asked = append(asked, name)
		return decide(ctx, name)
	}
	tc := m.TLSConfig()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	for _, name := range []string{"web.test", "WEB.test", " web.test", "web.test\t"} {
		_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: name, Conn: c1})
	}
	if len(asked) != 0 {
		t.Fatalf("the on-demand decision was asked for %q", asked)
	}
	_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: "nosuch.sites.test", Conn: c1})
	if len(asked) != 1 {
		t.Fatalf("a site name did not reach the on-demand decision: %q", asked)
	}
}
